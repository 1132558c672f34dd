package import Crypto
import CryptoExtras
import Foundation

/// The scrypt cost parameters that turn a passphrase into the store's master key.
///
/// A new store always uses ``standard`` (N = 2^15, r = 8, p = 1: about 80 ms and 32 MiB
/// here). The parameters a store was created with are kept in its `keyring` row and used
/// again when it is opened, so they can be raised later without breaking old stores.
public struct ScryptParameters: Sendable, Hashable {
    /// log2 of the CPU/memory cost N.
    public let logN: Int
    /// The block size r.
    public let blockSize: Int
    /// The parallelism p.
    public let parallelism: Int

    /// Parameters as read back from a keyring row or a backup header (check them before use).
    package init(logN: Int, blockSize: Int, parallelism: Int) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// N = 2^15, r = 8, p = 1: the parameters of every new store.
    public static let standard = ScryptParameters(logN: 15, blockSize: 8, parallelism: 1)

    /// Cheap parameters (N = 2^`logN`, r = 8, p = 1) so tests do not spend 80 ms per open.
    /// Not API: never use them for a real store.
    ///
    /// - Parameter logN: log2 of N, 1 to 14.
    public static func _insecureForTesting(logN: Int) -> ScryptParameters {
        precondition((1...14).contains(logN), "test parameters are for logN 1...14; use .standard")
        return ScryptParameters(logN: logN, blockSize: 8, parallelism: 1)
    }

    /// Whether parameters read back from a store are within what this build will run
    /// (bounds a tampered `keyring` row: scrypt here may use at most 65 MiB).
    var isAcceptable: Bool {
        (1...20).contains(logN) && (1...16).contains(blockSize) && (1...4).contains(parallelism)
    }

    /// A 32-byte key: scrypt at these parameters over the NFC-normalised UTF-8 bytes of
    /// `passphrase` (so the same passphrase typed on another system gives the same key).
    /// The passphrase's bytes are overwritten afterwards. `nil` when scrypt refuses the
    /// parameters.
    package func deriveKey(from passphrase: String, salt: [UInt8]) -> SymmetricKey? {
        var bytes = Array(passphrase.precomposedStringWithCanonicalMapping.utf8)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        return try? KDF.Scrypt.deriveKey(
            from: bytes, salt: salt, outputByteCount: 32, rounds: 1 << logN, blockSize: blockSize, parallelism: parallelism)
    }
}
