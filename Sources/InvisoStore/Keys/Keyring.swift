import Crypto
import Foundation
import GRDB

/// The `keyring` row: how the master key is obtained, and the store's data key sealed under
/// it.
///
/// Rows are sealed with a random 256-bit data key, not with the master key: the master key
/// only unwraps it. A wrong passphrase or key therefore fails once, on the wrapped key, with
/// a typed error (its AES-GCM tag is the key-check value), and a later change of passphrase
/// needs to re-wrap 32 bytes, not re-seal every row.
struct Keyring {
    /// How the master key is obtained: scrypt over a passphrase, or a key (file or caller's).
    enum Method: String {
        case scrypt
        case key
    }

    var kdf: Method
    var salt: Data?
    var parameters: ScryptParameters?
    var wrappedKey: Data

    static let saltSize = 16

    /// The row, or `nil` for a new store.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` when the row is malformed or its scrypt
    ///   parameters are out of bounds.
    static func read(_ db: Database) throws -> Keyring? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT kdf, salt, log_n, block_size, parallelism, wrapped_key FROM keyring WHERE id = 1"
            )
        else { return nil }
        let corrupt = StoreError(.corrupt, "reading the keyring")
        guard let kdf = Method(rawValue: try row.decode(forColumn: "kdf")) else { throw corrupt }
        var keyring = Keyring(kdf: kdf, salt: nil, parameters: nil, wrappedKey: try row.decode(forColumn: "wrapped_key"))
        if kdf == .scrypt {
            guard let salt: Data = try row.decode(forColumn: "salt"), salt.count == saltSize,
                let logN: Int = try row.decode(forColumn: "log_n"),
                let blockSize: Int = try row.decode(forColumn: "block_size"),
                let parallelism: Int = try row.decode(forColumn: "parallelism")
            else { throw corrupt }
            let parameters = ScryptParameters(logN: logN, blockSize: blockSize, parallelism: parallelism)
            guard parameters.isAcceptable else { throw corrupt }
            keyring.salt = salt
            keyring.parameters = parameters
        }
        return keyring
    }

    /// Inserts the row; fails if one exists.
    func insert(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO keyring (id, kdf, salt, log_n, block_size, parallelism, wrapped_key)
                VALUES (1, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                kdf.rawValue, salt, parameters?.logN, parameters?.blockSize, parameters?.parallelism, wrappedKey,
            ]
        )
    }
}

// MARK: - Creating and opening

extension Keyring {
    /// A new keyring for `source` with a fresh data key (creating the key file if needed).
    static func create(
        for source: MasterKeySource, directory: URL
    ) throws(StoreError) -> (keyring: Keyring, dataKey: SymmetricKey) {
        var keyring: Keyring
        let masterKey: SymmetricKey
        switch source.kind {
        case .passphrase(let passphrase, let parameters):
            let salt = SymmetricKey(size: .init(bitCount: saltSize * 8)).withUnsafeBytes { Data($0) }
            keyring = Keyring(kdf: .scrypt, salt: salt, parameters: parameters, wrappedKey: Data())
            masterKey = try derive(passphrase, salt: salt, parameters: parameters)
        case .keyFile:
            let url = directory.appendingPathComponent(StoreFiles.key)
            keyring = Keyring(kdf: .key, wrappedKey: Data())
            if let existing = try KeyFile.load(url) {
                masterKey = existing
            } else {
                masterKey = try KeyFile.create(url)
            }
        case .key(let key):
            keyring = Keyring(kdf: .key, wrappedKey: Data())
            masterKey = try checked(key)
        }
        let dataKey = SymmetricKey(size: .bits256)
        let binding = RowBinding.wrappedKey(kdf: keyring.kdf.rawValue)
        let wrapped = dataKey.withUnsafeBytes { bytes in
            Result { () throws(StoreError) in try RowSealer(key: masterKey).seal(bytes, for: binding) }
        }
        keyring.wrappedKey = try wrapped.get()
        return (keyring, dataKey)
    }

    /// The data key, unwrapped with the master key of `source`.
    ///
    /// - Throws: ``StoreError/Code/keySourceMismatch``, ``StoreError/Code/wrongPassphrase``,
    ///   ``StoreError/Code/wrongKey``, ``StoreError/Code/keyFileMissing`` and the key file's
    ///   errors.
    func dataKey(for source: MasterKeySource, directory: URL) throws(StoreError) -> SymmetricKey {
        let masterKey: SymmetricKey
        let wrong: StoreError
        switch (source.kind, kdf) {
        case (.passphrase(let passphrase, _), .scrypt):
            guard let salt, let parameters else { throw StoreError(.corrupt, "reading the keyring") }
            masterKey = try Self.derive(passphrase, salt: salt, parameters: parameters)
            wrong = StoreError(.wrongPassphrase, "opening the store")
        case (.keyFile, .key):
            guard let key = try KeyFile.load(directory.appendingPathComponent(StoreFiles.key)) else {
                throw StoreError(.keyFileMissing, "opening the store")
            }
            masterKey = key
            wrong = StoreError(.wrongKey, "opening the store with the key file")
        case (.key(let key), .key):
            masterKey = try Self.checked(key)
            wrong = StoreError(.wrongKey, "opening the store with the given key")
        case (.passphrase, .key), (.keyFile, .scrypt), (.key, .scrypt):
            throw StoreError(.keySourceMismatch, kdf == .scrypt ? "the store needs its passphrase" : "the store needs its key")
        }
        var unwrapped: Data
        do {
            unwrapped = try RowSealer(key: masterKey).open(wrappedKey, for: .wrappedKey(kdf: kdf.rawValue))
        } catch {
            throw wrong
        }
        defer { unwrapped.resetBytes(in: 0..<unwrapped.count) }
        guard unwrapped.count == 32 else { throw StoreError(.corrupt, "reading the keyring") }
        return SymmetricKey(data: unwrapped)
    }

    /// scrypt over the NFC-normalised UTF-8 bytes of `passphrase`.
    private static func derive(
        _ passphrase: String, salt: Data, parameters: ScryptParameters
    ) throws(StoreError) -> SymmetricKey {
        guard let key = parameters.deriveKey(from: passphrase, salt: Array(salt)) else {
            throw StoreError(.corrupt, "deriving the master key (scrypt parameters)")
        }
        return key
    }

    private static func checked(_ key: SymmetricKey) throws(StoreError) -> SymmetricKey {
        guard key.bitCount == 256 else { throw StoreError(.wrongKey, "the key must be 256 bits") }
        return key
    }
}
