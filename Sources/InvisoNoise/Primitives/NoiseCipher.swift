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

    /// The length of the AEAD nonce.
    static let nonceLength = 12

    /// Calls `body` with the 12-byte AEAD nonce for counter `n`, built on the stack.
    @inline(__always)
    func withNonce<Result>(_ n: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        // 4 zero bytes, then the counter: little-endian for ChaChaPoly, big-endian for AES-GCM.
        var nonce: (UInt32, UInt32, UInt32) = (0, 0, 0)
        return try withUnsafeMutableBytes(of: &nonce) { raw in
            switch self {
            case .chaChaPoly: raw.storeBytes(of: n.littleEndian, toByteOffset: 4, as: UInt64.self)
            case .aesGCM: raw.storeBytes(of: n.bigEndian, toByteOffset: 4, as: UInt64.self)
            }
            return try body(UnsafeRawBufferPointer(raw))
        }
    }

    /// ENCRYPT(k, n, ad, plaintext): ciphertext ‖ 16-byte tag.
    func encrypt(key: SymmetricKey, nonce n: UInt64, ad: [UInt8], plaintext: [UInt8]) -> [UInt8] {
        do {
            // An empty AD authenticates exactly like no AD; the AD-less entry point is cheaper.
            let combined: Data = try withNonce(n) { nonceBytes in
                switch self {
                case .chaChaPoly:
                    let nonce = try ChaChaPoly.Nonce(data: nonceBytes)
                    return ad.isEmpty
                        ? try ChaChaPoly.seal(plaintext, using: key, nonce: nonce).combined
                        : try ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: ad).combined
                case .aesGCM:
                    let nonce = try AES.GCM.Nonce(data: nonceBytes)
                    let box = ad.isEmpty
                        ? try AES.GCM.seal(plaintext, using: key, nonce: nonce)
                        : try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: ad)
                    // A 12-byte nonce always has a combined representation.
                    return box.combined!
                }
            }
            return Self.dropNonce(combined)
        } catch {
            // Sealing fails only for a malformed key or nonce, which this type never builds.
            preconditionFailure("AEAD seal failed with a well-formed key and nonce")
        }
    }

    /// DECRYPT(k, n, ad, ciphertext); throws ``NoiseError/authenticationFailed`` on any failure.
    func decrypt(key: SymmetricKey, nonce n: UInt64, ad: [UInt8], ciphertext: ArraySlice<UInt8>) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count >= Self.tagLength else { throw .authenticationFailed }
        // swift-crypto's combined layout is nonce ‖ ciphertext ‖ tag: build it in one buffer.
        var combined = Data(capacity: Self.nonceLength + ciphertext.count)
        withNonce(n) { combined.append(contentsOf: $0) }
        ciphertext.withUnsafeBytes { combined.append(contentsOf: $0) }
        do {
            let opened: Data
            switch self {
            case .chaChaPoly:
                let box = try ChaChaPoly.SealedBox(combined: combined)
                opened = ad.isEmpty ? try ChaChaPoly.open(box, using: key) : try ChaChaPoly.open(box, using: key, authenticating: ad)
            case .aesGCM:
                let box = try AES.GCM.SealedBox(combined: combined)
                opened = ad.isEmpty ? try AES.GCM.open(box, using: key) : try AES.GCM.open(box, using: key, authenticating: ad)
            }
            return Self.bytes(opened)
        } catch {
            throw .authenticationFailed
        }
    }

    /// `combined` without its leading nonce, as an array (one allocation, one copy).
    private static func dropNonce(_ combined: Data) -> [UInt8] {
        let count = combined.count - nonceLength
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            combined.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[nonceLength...]))
            }
            initialized = count
        }
    }

    /// The bytes of `data` as an array (one allocation, one copy).
    private static func bytes(_ data: Data) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: data.count) { buffer, initialized in
            data.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
            initialized = data.count
        }
    }
}
