import Crypto
import CryptoExtras
import Foundation
package import InvisoCrypto

/// AES-256-CBC with PKCS#7 padding, as libsignal encrypts message bodies.
package enum MessageCrypto {
    /// Encrypts `plaintext` under the message keys' cipher key and IV.
    package static func encrypt(_ plaintext: [UInt8], keys: MessageKeys) throws(SignalError) -> [UInt8] {
        do {
            let (symmetric, vector) = try cipherParameters(keys)
            return Array(try AES._CBC.encrypt(plaintext, using: symmetric, iv: vector))
        } catch {
            throw SignalError(.invalidArgument, "encryption failed")
        }
    }

    /// Decrypts; any failure (length, padding) is ``SignalError/authenticationFailed``.
    package static func decrypt(_ ciphertext: [UInt8], keys: MessageKeys) throws(SignalError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw SignalError(.authenticationFailed) }
        do {
            let (symmetric, vector) = try cipherParameters(keys)
            return Array(try AES._CBC.decrypt(ciphertext, using: symmetric, iv: vector))
        } catch {
            throw SignalError(.authenticationFailed)
        }
    }

    private static func cipherParameters(_ keys: MessageKeys) throws -> (SymmetricKey, AES._CBC.IV) {
        try keys.material.withUnsafeBytes { raw in
            (SymmetricKey(data: UnsafeRawBufferPointer(rebasing: raw[0..<32])), try AES._CBC.IV(ivBytes: raw[64..<80]))
        }
    }
}
