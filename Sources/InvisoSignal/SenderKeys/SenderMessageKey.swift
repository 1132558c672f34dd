import Crypto
import Foundation
package import InvisoCrypto
import CryptoExtras

/// The key of one sender-key message, kept as libsignal keeps it: the iteration and the
/// 32-byte seed HMAC-SHA256(chainKey, `0x01`).
///
/// The cipher parameters are HKDF-SHA256(salt: none, ikm: seed, info: `"WhisperGroup"`,
/// 48 bytes): IV = bytes 0..<16, AES-256-CBC key = bytes 16..<48.
package struct SenderMessageKey: Sendable {
    /// HKDF info for group message keys.
    package static let info = Array("WhisperGroup".utf8)

    /// The iteration this key belongs to.
    package let iteration: UInt32
    /// The 32-byte message key seed.
    package let seed: SecretBytes

    /// Wraps a seed.
    package init(iteration: UInt32, seed: SecretBytes) {
        self.iteration = iteration
        self.seed = seed
    }

    /// Calls `body` with the IV and the AES-256 key derived from the seed.
    private func withCipherParameters<Result>(
        _ body: (AES._CBC.IV, SymmetricKey) throws(SignalError) -> Result
    ) throws(SignalError) -> Result {
        let derived = hkdfSHA256(ikm: seed, info: Self.info, count: 48)
        let (iv, key) = derived.withUnsafeBytes { bytes in
            // 16 bytes are always a valid CBC IV.
            (
                try! AES._CBC.IV(ivBytes: bytes[0..<16]),
                SymmetricKey(data: UnsafeRawBufferPointer(rebasing: bytes[16..<48]))
            )
        }
        return try body(iv, key)
    }

    /// AES-256-CBC with PKCS#7 padding.
    package func encrypt(_ plaintext: [UInt8]) throws(SignalError) -> [UInt8] {
        try withCipherParameters { (iv, key) throws(SignalError) in
            do {
                return Array(try AES._CBC.encrypt(plaintext, using: key, iv: iv))
            } catch {
                throw SignalError(.invalidArgument, "AES-CBC encryption failed")
            }
        }
    }

    /// AES-256-CBC decryption; removes and checks the PKCS#7 padding.
    ///
    /// - Throws: ``SignalError/authenticationFailed`` when the ciphertext is not a whole
    ///   number of blocks or its padding is wrong.
    package func decrypt(_ ciphertext: [UInt8]) throws(SignalError) -> [UInt8] {
        try withCipherParameters { (iv, key) throws(SignalError) in
            do {
                return Array(try AES._CBC.decrypt(ciphertext, using: key, iv: iv))
            } catch {
                throw SignalError(.authenticationFailed, "sender key message did not decrypt")
            }
        }
    }
}
