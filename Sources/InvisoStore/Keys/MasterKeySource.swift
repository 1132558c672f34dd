public import Crypto
public import Foundation

/// Where an ``InvisoStore``'s master key comes from.
///
/// The master key never seals rows itself: it unwraps the store's random data key, kept
/// sealed in the `keyring` table. A store remembers which kind of source created it
/// (passphrase or key) and refuses the other kind with ``StoreError/Code/keySourceMismatch``.
///
/// - ``passphrase(_:)``: scrypt (N = 2^15, r = 8, p = 1) over the passphrase's UTF-8 bytes
///   (after Unicode NFC normalisation) with a random 16-byte salt kept in the `keyring` row.
/// - ``keyFile``: 32 random bytes in `store.key` in the store's directory, created with mode
///   0600 on first use; a key file readable or writable by the group or others is refused.
/// - ``key(_:)``: a 256-bit key the caller keeps elsewhere (the Keychain on Apple platforms).
///
/// A source's `description` is redacted: it names the kind, never the passphrase or key.
public struct MasterKeySource: Sendable {
    enum Kind: Sendable {
        case passphrase(String, ScryptParameters)
        case keyFile
        case key(SymmetricKey)
    }

    let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// The environment variable ``fromEnvironment(_:)`` reads: `INVISO_PASSPHRASE`.
    public static let passphraseVariable = "INVISO_PASSPHRASE"

    /// The master key is derived from `passphrase` with scrypt at ``ScryptParameters/standard``
    /// (for a new store; an existing store uses the parameters it was created with).
    ///
    /// - Parameter passphrase: The passphrase; an empty one is refused when the store opens.
    public static func passphrase(_ passphrase: String) -> MasterKeySource {
        MasterKeySource(.passphrase(passphrase, .standard))
    }

    /// The master key is derived from `passphrase` with scrypt at `parameters` when the store
    /// is new (tests pass ``ScryptParameters/_insecureForTesting(logN:)``).
    ///
    /// - Parameters:
    ///   - passphrase: The passphrase; an empty one is refused when the store opens.
    ///   - parameters: The scrypt cost for a new store; ignored for an existing one.
    public static func passphrase(_ passphrase: String, parameters: ScryptParameters) -> MasterKeySource {
        MasterKeySource(.passphrase(passphrase, parameters))
    }

    /// The master key is the 32 bytes of `store.key` in the store's directory, created (mode
    /// 0600) when the store is new.
    public static let keyFile = MasterKeySource(.keyFile)

    /// The master key is `key`, kept by the caller (for example in the Keychain).
    ///
    /// - Parameter key: A 256-bit key; any other size fails to open with
    ///   ``StoreError/Code/wrongKey``.
    public static func key(_ key: SymmetricKey) -> MasterKeySource {
        MasterKeySource(.key(key))
    }

    /// ``passphrase(_:)`` with `INVISO_PASSPHRASE` when that variable is set (even to the
    /// empty string, which then fails to open rather than silently falling back), else
    /// ``keyFile``.
    ///
    /// - Parameter environment: The variables to read; the process's environment by default.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> MasterKeySource {
        if let passphrase = environment[passphraseVariable] { return .passphrase(passphrase) }
        return .keyFile
    }
}

// MARK: - Redacted descriptions

extension MasterKeySource: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `MasterKeySource(passphrase)`, `MasterKeySource(keyFile)` or `MasterKeySource(key)`:
    /// the kind only.
    public var description: String {
        switch kind {
        case .passphrase: "MasterKeySource(passphrase)"
        case .keyFile: "MasterKeySource(keyFile)"
        case .key: "MasterKeySource(key)"
        }
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and reflection show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
