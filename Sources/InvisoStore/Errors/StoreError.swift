/// Why an ``InvisoStore`` operation failed.
///
/// Errors carry a ``Code`` and a short, fixed context naming the operation (for logs). They
/// never contain plaintext, key material, passphrases or row contents. Cryptographic
/// failures are deliberately coarse: a sealed value that was tampered with, moved to another
/// row or sealed under another key all report ``authenticationFailed``.
public struct StoreError: Error, Sendable, Hashable {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case wrongPassphrase, wrongKey, keySourceMismatch, emptyPassphrase
            case keyFileMissing, invalidKeyFile, insecureKeyFile
            case authenticationFailed, corrupt, sessionNotFound, sessionClosed, messageExists
            case fileSystem, database, closed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The passphrase does not open this store.
        public static let wrongPassphrase = Code(.wrongPassphrase)
        /// The key (key file or explicit key) does not open this store.
        public static let wrongKey = Code(.wrongKey)
        /// The store was created with a passphrase and is opened with a key, or the reverse.
        public static let keySourceMismatch = Code(.keySourceMismatch)
        /// The passphrase is empty.
        public static let emptyPassphrase = Code(.emptyPassphrase)
        /// The store exists but its key file does not.
        public static let keyFileMissing = Code(.keyFileMissing)
        /// The key file cannot be read or does not hold exactly 32 bytes.
        public static let invalidKeyFile = Code(.invalidKeyFile)
        /// The key file may be read or written by the group or by others (its mode is not 0600
        /// or stricter); the store refuses it until its permissions are fixed.
        public static let insecureKeyFile = Code(.insecureKeyFile)
        /// A sealed value did not authenticate: tampered with, moved from another row, or
        /// sealed under another key.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A row is malformed (an unknown state, a bad format version, an undecodable value).
        public static let corrupt = Code(.corrupt)
        /// No session has this ID.
        public static let sessionNotFound = Code(.sessionNotFound)
        /// The session is closed: its keys are gone and no new secret is stored for it.
        public static let sessionClosed = Code(.sessionClosed)
        /// The session already has a message with this ID.
        public static let messageExists = Code(.messageExists)
        /// A file or directory could not be created, read, changed or removed.
        public static let fileSystem = Code(.fileSystem)
        /// SQLite refused or failed the operation.
        public static let database = Code(.database)
        /// The store was closed or erased.
        public static let closed = Code(.closed)

        /// The code's name.
        public var description: String {
            switch base {
            case .wrongPassphrase: "wrongPassphrase"
            case .wrongKey: "wrongKey"
            case .keySourceMismatch: "keySourceMismatch"
            case .emptyPassphrase: "emptyPassphrase"
            case .keyFileMissing: "keyFileMissing"
            case .invalidKeyFile: "invalidKeyFile"
            case .insecureKeyFile: "insecureKeyFile"
            case .authenticationFailed: "authenticationFailed"
            case .corrupt: "corrupt"
            case .sessionNotFound: "sessionNotFound"
            case .sessionClosed: "sessionClosed"
            case .messageExists: "messageExists"
            case .fileSystem: "fileSystem"
            case .database: "database"
            case .closed: "closed"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The operation that failed, for logs: a fixed phrase such as `"opening messages.sealed"`,
    /// never data from the store.
    public let context: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - context: The operation, as a fixed phrase (never plaintext or key material).
    public init(_ code: Code, _ context: String = "") {
        self.code = code
        self.context = context
    }

    /// Equality by code (the context is for humans).
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

// MARK: - Shorthands

extension StoreError {
    /// The passphrase does not open this store.
    public static let wrongPassphrase = StoreError(.wrongPassphrase)
    /// The key does not open this store.
    public static let wrongKey = StoreError(.wrongKey)
    /// A sealed value did not authenticate.
    public static let authenticationFailed = StoreError(.authenticationFailed)
    /// No session has this ID.
    public static let sessionNotFound = StoreError(.sessionNotFound)
    /// The store was closed or erased.
    public static let closed = StoreError(.closed)
}

// MARK: - Mapping other errors

extension StoreError {
    /// Runs `body`; a ``StoreError`` it throws passes through, any other error (SQLite's)
    /// becomes ``Code/database`` with `context`, so no database message reaches the caller.
    static func database<Value>(_ context: String, _ body: () throws -> Value) throws(StoreError) -> Value {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.database, context)
        }
    }
}

// MARK: - CustomStringConvertible

extension StoreError: CustomStringConvertible {
    /// `StoreError(code: context)`.
    public var description: String {
        context.isEmpty ? "StoreError(\(code))" : "StoreError(\(code): \(context))"
    }
}
