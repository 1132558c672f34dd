import Crypto
import CryptoExtras
package import Foundation
import InvisoCrypto

/// AES-256-CBC with PKCS#7 padding, as libsignal encrypts message bodies.
package enum MessageCrypto {
    /// Encrypts `plaintext` under the message keys' cipher key and IV.
    package static func encrypt(_ plaintext: [UInt8], keys: MessageKeys) throws(SignalError) -> Data {
        do {
            return try keys.withKeys { cipherKey, _, iv in
                try AES._CBC.encrypt(plaintext, using: SymmetricKey(data: cipherKey), iv: try AES._CBC.IV(ivBytes: iv))
            }
        } catch {
            throw SignalError(.invalidArgument, "encryption failed")
        }
    }

    /// Decrypts; any failure (length, padding) is ``SignalError/authenticationFailed``.
    package static func decrypt(_ ciphertext: ArraySlice<UInt8>, keys: MessageKeys) throws(SignalError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw SignalError(.authenticationFailed) }
        do {
            let plaintext = try keys.withKeys { cipherKey, _, iv in
                try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: cipherKey), iv: try AES._CBC.IV(ivBytes: iv))
            }
            return bytes(of: plaintext)
        } catch {
            throw SignalError(.authenticationFailed)
        }
    }

    /// The bytes of `data` as an array, copied in one block (not byte by byte).
    private static func bytes(of data: Data) -> [UInt8] {
        data.withUnsafeBytes { Array($0) }
    }
}
