internal import Crypto
import Foundation

/// The AEAD ciphers of rev 34 §12.3 (ChaChaPoly) and §12.4 (AESGCM) with their exact nonce layouts.
public enum NoiseCipher: String, Sendable, Hashable {
    /// ChaCha20-Poly1305; nonce = 4 zero bytes ‖ 64-bit little-endian counter.
    case chaChaPoly = "ChaChaPoly"
    /// AES-256-GCM; nonce = 4 zero bytes ‖ 64-bit big-endian counter.
    case aesGCM = "AESGCM"

    /// The length of the authentication tag appended to every ciphertext.
    public static let tagLength = 16

    /// The 12-byte AEAD nonce for counter `n`.
    @inlinable
    func nonceBytes(_ n: UInt64) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        switch self {
        case .chaChaPoly:
            for i in 0..<8 { nonce[4 + i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        case .aesGCM:
            for i in 0..<8 { nonce[11 - i] = UInt8(truncatingIfNeeded: n >> (8 * UInt64(i))) }
        }
        return nonce
    }

    /// ENCRYPT(k, n, ad, plaintext): ciphertext ‖ 16-byte tag.
    func encrypt(key: SymmetricKey, nonce n: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        let nonce = nonceBytes(n)
        do {
            switch self {
            case .chaChaPoly:
                let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: ad)
                return Self.join(box.ciphertext, box.tag, capacity: plaintext.count)
            case .aesGCM:
                let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: ad)
                return Self.join(box.ciphertext, box.tag, capacity: plaintext.count)
            }
        } catch {
            // Sealing fails only for a malformed key or nonce, which this type never builds.
            preconditionFailure("AEAD seal failed with a well-formed key and nonce")
        }
    }

    /// DECRYPT(k, n, ad, ciphertext); throws ``NoiseError/authenticationFailed`` on any failure.
    func decrypt(key: SymmetricKey, nonce n: UInt64, ad: [UInt8], ciphertext: ArraySlice<UInt8>) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count >= Self.tagLength else { throw .authenticationFailed }
        let split = ciphertext.endIndex - Self.tagLength
        let body = ciphertext[..<split]
        let tag = ciphertext[split...]
        let nonce = nonceBytes(n)
        do {
            switch self {
            case .chaChaPoly:
                let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: body, tag: tag)
                return Array(try ChaChaPoly.open(box, using: key, authenticating: ad))
            case .aesGCM:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: body, tag: tag)
                return Array(try AES.GCM.open(box, using: key, authenticating: ad))
            }
        } catch {
            throw .authenticationFailed
        }
    }

    private static func join(_ ciphertext: Data, _ tag: Data, capacity: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(capacity + tagLength)
        out.append(contentsOf: ciphertext)
        out.append(contentsOf: tag)
        return out
    }
}
