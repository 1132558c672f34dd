public import Foundation
import Crypto
import GRDB
import Synchronization

/// The chat client's encrypted-at-rest store: sessions, messages, pinned peer identities and
/// ratchet state in one SQLite file (GRDB), every sensitive field sealed with AES-256-GCM.
///
/// The store lives in a directory of its own (created with mode 0700 when missing):
/// `inviso.sqlite` (mode 0600; SQLite's `-journal` beside it while a write is under way) and,
/// with ``MasterKeySource/keyFile``, `store.key`. Only IDs, times, states and kinds are
/// plaintext columns; each row's other fields are one sealed value whose associated data
/// names the table, the column and the row's key, so it cannot be moved to another row. The
/// layout is in `docs/store.md`.
///
/// Methods are synchronous and serialised (one SQLite connection behind a lock); times are
/// passed in (`now:`), never read from the clock. Deleted rows are overwritten in the file
/// (`PRAGMA secure_delete`). After ``close()`` or ``eraseAll()`` every method throws
/// ``StoreError/Code/closed``.
public final class InvisoStore: Sendable {
    /// The store's directory.
    public let directory: URL

    /// The database's file name in the directory: `inviso.sqlite`.
    public static let databaseFileName = StoreFiles.database
    /// The key file's name in the directory (``MasterKeySource/keyFile``): `store.key`.
    public static let keyFileName = StoreFiles.key

    /// The connection; `nil` once closed.
    private let database: Mutex<DatabaseQueue?>
    /// Seals and opens rows with the data key.
    let sealer: RowSealer

    /// Opens the store in `directory`, creating the directory, the database, the data key
    /// and (for ``MasterKeySource/keyFile``) the key file when they are missing.
    ///
    /// Opening an existing store with a wrong passphrase or key changes nothing on disk.
    ///
    /// - Parameters:
    ///   - directory: The store's directory (created with mode 0700 when missing).
    ///   - keySource: Where the master key comes from; usually
    ///     ``MasterKeySource/fromEnvironment(_:)``.
    /// - Throws: ``StoreError/Code/emptyPassphrase``, ``StoreError/Code/wrongPassphrase``,
    ///   ``StoreError/Code/wrongKey``, ``StoreError/Code/keySourceMismatch``,
    ///   ``StoreError/Code/keyFileMissing``, ``StoreError/Code/insecureKeyFile``,
    ///   ``StoreError/Code/invalidKeyFile``, ``StoreError/Code/corrupt``,
    ///   ``StoreError/Code/fileSystem`` or ``StoreError/Code/database``.
    public init(directory: URL, keySource: MasterKeySource) throws(StoreError) {
        if case .passphrase(let passphrase, _) = keySource.kind, passphrase.isEmpty {
            throw StoreError(.emptyPassphrase, "opening the store")
        }
        try StoreFiles.prepare(directory: directory)
        let url = directory.appendingPathComponent(StoreFiles.database)
        let queue: DatabaseQueue
        queue = try StoreError.database("opening the database") {
            let queue = try DatabaseQueue(path: url.path, configuration: Self.configuration())
            try StoreSchema.migrator().migrate(queue)
            return queue
        }
        try StoreFiles.restrict(url)
        let dataKey = try Self.dataKey(queue, source: keySource, directory: directory)
        self.directory = directory
        self.database = Mutex(queue)
        self.sealer = RowSealer(key: dataKey)
    }

    /// Closes the database. Later calls throw ``StoreError/Code/closed``; closing twice does
    /// nothing.
    public func close() {
        database.withLock { queue in
            let open = queue
            queue = nil
            try? open?.close()
        }
    }

    /// Closes the store and deletes all of its files: the database with its journal, WAL and
    /// shared-memory files, and the key file (overwritten with zeros first). The directory
    /// itself and any other file in it stay.
    ///
    /// - Throws: ``StoreError/Code/fileSystem`` when a file cannot be removed.
    public func eraseAll() throws(StoreError) {
        close()
        try Self.eraseAll(in: directory)
    }

    /// The names of every file a store may keep in its directory (what
    /// ``eraseAll(in:)`` removes).
    public static var fileNames: [String] { StoreFiles.all }

    /// Deletes all of a store's files in `directory` without opening it (so it works without
    /// the passphrase): what `inviso erase-all` does. Close any store open on `directory`
    /// first.
    ///
    /// - Parameter directory: The store's directory.
    /// - Throws: ``StoreError/Code/fileSystem`` when a file cannot be removed.
    public static func eraseAll(in directory: URL) throws(StoreError) {
        try StoreFiles.erase(directory: directory)
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "InvisoStore"
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // Deleted rows (wiped keys, expired messages) are overwritten in the file, and
            // temporary tables stay in memory.
            try db.execute(sql: "PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY")
        }
        return configuration
    }

    /// The data key: unwrapped from the existing keyring, or created with a new one.
    private static func dataKey(
        _ queue: DatabaseQueue, source: MasterKeySource, directory: URL
    ) throws(StoreError) -> SymmetricKey {
        let existing = try StoreError.database("reading the keyring") { try queue.read(Keyring.read) }
        if let existing { return try existing.dataKey(for: source, directory: directory) }
        let created = try Keyring.create(for: source, directory: directory)
        let inserted = try StoreError.database("writing the keyring") {
            try queue.write { db in
                guard try Keyring.read(db) == nil else { return false }
                try created.keyring.insert(db)
                return true
            }
        }
        if inserted { return created.dataKey }
        // Another process created the store meanwhile: open its keyring instead.
        return try dataKey(queue, source: source, directory: directory)
    }
}

// MARK: - Database access

extension InvisoStore {
    /// Runs `body` in a read transaction.
    func read<Value: Sendable>(_ context: String, _ body: (Database) throws -> Value) throws(StoreError) -> Value {
        try withQueue(context) { try $0.read(body) }
    }

    /// Runs `body` in a write transaction (rolled back when it throws).
    func write<Value: Sendable>(_ context: String, _ body: (Database) throws -> Value) throws(StoreError) -> Value {
        try withQueue(context) { try $0.write(body) }
    }

    /// Runs `operation` on the open connection, under the lock; errors other than
    /// ``StoreError`` become ``StoreError/Code/database`` with `context`.
    private func withQueue<Value: Sendable>(
        _ context: String, _ operation: (DatabaseQueue) throws -> Value
    ) throws(StoreError) -> Value {
        try database.withLock { (queue) throws(StoreError) -> Value in
            guard let queue else { throw StoreError(.closed, context) }
            return try StoreError.database(context) { try operation(queue) }
        }
    }
}
