public import Crypto
import InvisoCrypto

/// A Noise `CipherState` (rev 34 §5.1): a key (possibly empty) and a 64-bit nonce.
///
/// A value type: every operation either succeeds and advances the nonce, or throws and
/// leaves the state exactly as it was. The nonce 2^64−1 is reserved (for ``rekey()``), so
/// the state refuses to encrypt or decrypt once the counter reaches it.
public struct CipherState: Sendable {
    /// The largest Noise message, in bytes (rev 34 §3).
    public static let maximumMessageLength = 65_535
    /// The largest plaintext that fits in one message with its 16-byte tag.
    public static let maximumPlaintextLength = maximumMessageLength - NoiseCipher.tagLength

    /// The AEAD in use.
    public let cipher: NoiseCipher
    private var key: SymmetricKey?
    /// The counter the next encryption or decryption uses.
    public private(set) var nonce: UInt64

    /// Creates a state with `key` (32 bytes, or `nil` for the empty key) and nonce 0.
    public init(cipher: NoiseCipher, key: SymmetricKey?) {
        self.cipher = cipher
        self.key = key
        self.nonce = 0
    }

    /// Whether a key is set. Without one, encryption and decryption pass bytes through.
    public var hasKey: Bool { key != nil }

    /// `SetNonce`: positions the counter, for transports that carry nonces explicitly.
    public mutating func setNonce(_ nonce: UInt64) { self.nonce = nonce }

    /// `EncryptWithAd`: seals `plaintext` under the current nonce, then advances it.
    /// - Throws: ``NoiseError/messageTooLarge`` (plaintext over 65,519 bytes with a key,
    ///   65,535 without) and ``NoiseError/nonceExhausted``; the state is unchanged then.
    public mutating func encrypt(_ plaintext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else {
            guard plaintext.count <= Self.maximumMessageLength else { throw .messageTooLarge }
            return plaintext
        }
        guard plaintext.count <= Self.maximumPlaintextLength else { throw .messageTooLarge }
        guard nonce != .max else { throw .nonceExhausted }
        let sealed = cipher.encrypt(key: key, nonce: nonce, ad: ad, plaintext: plaintext)
        nonce += 1
        return sealed
    }

    /// `DecryptWithAd`: opens `ciphertext` under the current nonce, then advances it.
    /// - Throws: ``NoiseError/authenticationFailed``, ``NoiseError/messageTooLarge`` or
    ///   ``NoiseError/nonceExhausted``; on any error the nonce does not move.
    public mutating func decrypt(_ ciphertext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        try decrypt(ciphertext[...], ad: ad)
    }

    /// `DecryptWithAd` over a slice of a larger buffer.
    public mutating func decrypt(_ ciphertext: ArraySlice<UInt8>, ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard ciphertext.count <= Self.maximumMessageLength else { throw .messageTooLarge }
        guard let key else { return Array(ciphertext) }
        guard nonce != .max else { throw .nonceExhausted }
        let opened = try cipher.decrypt(key: key, nonce: nonce, ad: ad, ciphertext: ciphertext)
        nonce += 1
        return opened
    }

    /// Seals with an explicit nonce without touching the counter (explicit-nonce transports).
    package func encrypt(_ plaintext: [UInt8], nonce explicitNonce: UInt64, ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { throw .handshakeNotComplete }
        guard plaintext.count <= Self.maximumPlaintextLength else { throw .messageTooLarge }
        guard explicitNonce != .max else { throw .nonceExhausted }
        return cipher.encrypt(key: key, nonce: explicitNonce, ad: ad, plaintext: plaintext)
    }

    /// Opens with an explicit nonce without touching the counter (explicit-nonce transports).
    package func decrypt(_ ciphertext: ArraySlice<UInt8>, nonce explicitNonce: UInt64, ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { throw .handshakeNotComplete }
        guard ciphertext.count <= Self.maximumMessageLength else { throw .messageTooLarge }
        guard explicitNonce != .max else { throw .nonceExhausted }
        return try cipher.decrypt(key: key, nonce: explicitNonce, ad: ad, ciphertext: ciphertext)
    }

    /// `Rekey()` (rev 34 §4.2, §11.3): replaces the key with the first 32 bytes of
    /// ENCRYPT(k, 2^64−1, empty, 32 zero bytes). The nonce is *not* reset.
    public mutating func rekey() {
        guard let key else { return }
        var next = cipher.encrypt(key: key, nonce: .max, ad: [], plaintext: [UInt8](repeating: 0, count: 32))
        self.key = SymmetricKey(data: next[0..<32])
        SecureWipe.wipe(&next)
    }

    /// The key's bytes, for tests that check derivations (never logged).
    package var keyBytesForTesting: [UInt8]? { key?.withUnsafeBytes { [UInt8]($0) } }

    /// The key itself, for protocols that derive further keys from the `Split()` output
    /// (Inviso v2 seeds its Double Ratchet from both transport keys); `nil` without a key.
    package var symmetricKey: SymmetricKey? { key }
}

// MARK: - Redacted description

extension CipherState: CustomStringConvertible {
    /// Shows the cipher, whether a key is set and the nonce, never the key.
    public var description: String { "CipherState(\(cipher.rawValue), key: \(hasKey ? "set" : "empty"), nonce: \(nonce))" }
}
