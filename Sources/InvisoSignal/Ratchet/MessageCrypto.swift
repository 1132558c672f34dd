import Crypto
import CryptoExtras
import Foundation
package import InvisoCrypto

/// AES-256-CBC with PKCS#7 padding, as libsignal encrypts message bodies.
package enum MessageCrypto {
    /// Encrypts `plaintext` under `key` and `iv`.
    package static func encrypt(_ plaintext: [UInt8], key: SecretBytes, iv: SecretBytes) throws(SignalError) -> [UInt8] {
        do {
            let symmetric = key.withUnsafeBytes { SymmetricKey(data: $0) }
            let vector = try iv.withUnsafeBytes { try AES._CBC.IV(ivBytes: $0) }
            return Array(try AES._CBC.encrypt(plaintext, using: symmetric, iv: vector))
        } catch {
            throw SignalError(.invalidArgument, "encryption failed")
        }
    }

    /// Decrypts; any failure (length, padding) is ``SignalError/authenticationFailed``.
    package static func decrypt(_ ciphertext: [UInt8], key: SecretBytes, iv: SecretBytes) throws(SignalError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw SignalError(.authenticationFailed) }
        do {
            let symmetric = key.withUnsafeBytes { SymmetricKey(data: $0) }
            let vector = try iv.withUnsafeBytes { try AES._CBC.IV(ivBytes: $0) }
            return Array(try AES._CBC.decrypt(ciphertext, using: symmetric, iv: vector))
        } catch {
            throw SignalError(.authenticationFailed)
        }
    }
}
