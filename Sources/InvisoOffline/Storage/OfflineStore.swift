public import Foundation
public import InvisoStore

/// The offline book on disk: an ``InvisoStore`` of its own (SQLite, every value sealed with
/// AES-256-GCM under a key from a passphrase or a key file), in a directory apart from the
/// chat store so that ``erase()`` takes the account and nothing else.
///
/// ```
/// update { book, history in … }      one IMMEDIATE transaction:
///   read rows ─► open, decode ─► OfflineBook ─► body (pure) ─► encode, seal ─► write rows
///   an OfflineError from the body rolls everything back and is rethrown as it was
/// ```
///
/// Times are passed in. Errors: ``OfflineError`` for the book's rules,
/// ``StoreError`` for the store (wrong passphrase, missing key file, I/O).
public final class OfflineStore: Sendable {
    /// The directory name under a data directory: `offline`.
    public static let directoryName = "offline"

    /// The store's directory.
    public var directory: URL { store.directory }

    let store: InvisoStore

    /// Opens (or creates) the store in `directory`.
    ///
    /// - Throws: ``StoreError`` (wrong passphrase or key, insecure key file, I/O).
    public init(directory: URL, keySource: MasterKeySource) throws(StoreError) {
        store = try InvisoStore(directory: directory, keySource: keySource)
    }

    /// Closes the store.
    public func close() { store.close() }

    /// Creates the account.
    ///
    /// - Returns: The new book.
    /// - Throws: ``OfflineError/Code/accountExists``, or ``StoreError``.
    @discardableResult
    public func create(now: Int64, using generator: inout some RandomNumberGenerator) throws -> OfflineBook {
        let book = try OfflineBook.create(now: now, using: &generator)
        return try transaction { rows throws(OfflineError) in
            guard rows.account == nil else { throw OfflineError(.accountExists, "init") }
            return (try Self.write(book, replacing: rows, messages: []), book)
        }
    }

    /// The book as stored.
    ///
    /// - Throws: ``OfflineError/Code/noAccount``, ``OfflineError/Code/storage`` for a
    ///   record that does not decode, or ``StoreError``.
    public func load() throws -> OfflineBook {
        var rows = try store.offlineRows()
        defer { rows = OfflineRows(account: nil, contacts: []) }
        return try Self.book(from: rows)
    }

    /// Runs `body` on the stored book and stores the result with the history messages it
    /// appends, in one transaction. Contacts that `body` deletes go with their history.
    ///
    /// - Returns: `body`'s result.
    /// - Throws: What `body` throws (nothing is written then), ``OfflineError/Code/noAccount``,
    ///   or ``StoreError``.
    public func update<Result: Sendable>(
        _ body: (inout OfflineBook, inout [OfflineMessage]) throws(OfflineError) -> Result
    ) throws -> Result {
        try transaction { rows throws(OfflineError) in
            var book = try Self.book(from: rows)
            var messages: [OfflineMessage] = []
            let result = try body(&book, &messages)
            return (try Self.write(book, replacing: rows, messages: messages), result)
        }
    }

    /// A contact's history (or everyone's, for `nil`) that has not expired at `now`, oldest
    /// first.
    ///
    /// - Throws: ``OfflineError/Code/storage`` for a record that does not decode, or
    ///   ``StoreError``.
    public func history(contactID: String?, now: Int64) throws -> [OfflineMessage] {
        try store.offlineMessages(contactID: contactID, now: now).map { row throws(OfflineError) in
            try RecordCoding.decode(MessageRecord.self, from: row.value).message(
                id: row.id, contactID: row.contactID, storedAt: row.storedAt, expiresAt: row.expiresAt)
        }
    }

    /// Deletes history messages whose contact's lifetime ran out by `now`.
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``StoreError``.
    @discardableResult
    public func deleteExpired(now: Int64) throws(StoreError) -> Int {
        try store.deleteExpiredOfflineMessages(now: now)
    }

    /// Closes the store and deletes its files, key file included.
    ///
    /// - Throws: ``StoreError/Code/fileSystem``.
    public func erase() throws(StoreError) {
        try store.eraseAll()
    }

    // MARK: - Rows

    /// Runs `body` in the store's transaction, carrying its ``OfflineError`` out unchanged.
    func transaction<Result: Sendable>(
        _ body: (OfflineRows) throws(OfflineError) -> (OfflineWrite, Result)
    ) throws -> Result {
        var failure: OfflineError?
        do {
            return try store.updateOffline { rows throws(StoreError) in
                do {
                    return try body(rows)
                } catch {
                    failure = (error as? OfflineError) ?? OfflineError(.storage, "offline operation")
                    throw StoreError(.corrupt, "offline operation refused")
                }
            }
        } catch {
            if let failure { throw failure }
            throw error
        }
    }

    static func book(from rows: OfflineRows) throws(OfflineError) -> OfflineBook {
        guard let accountData = rows.account else { throw OfflineError(.noAccount, "store") }
        var accountRecord = try RecordCoding.decode(AccountRecord.self, from: accountData)
        defer { accountRecord.wipe() }
        let account = try accountRecord.account()
        let contacts = try rows.contacts.map { row throws(OfflineError) in
            var record = try RecordCoding.decode(ContactRecord.self, from: row.value)
            defer { record.wipe() }
            return try record.contact(id: row.id, createdAt: row.createdAt)
        }
        return OfflineBook(account: account, contacts: contacts)
    }

    static func write(_ book: OfflineBook, replacing rows: OfflineRows, messages: [OfflineMessage]) throws(OfflineError) -> OfflineWrite {
        var accountRecord = AccountRecord(book.account)
        defer { accountRecord.wipe() }
        let contacts = try book.contacts.map { contact throws(OfflineError) in
            var record = ContactRecord(contact)
            defer { record.wipe() }
            return OfflineRows.Contact(id: contact.id, createdAt: contact.createdAt, value: try RecordCoding.encode(record))
        }
        let kept = Set(book.contacts.map(\.id))
        let keptMessages = messages.filter { kept.contains($0.contactID) }
        return OfflineWrite(
            account: try RecordCoding.encode(accountRecord), contacts: contacts,
            deletedContacts: rows.contacts.map(\.id).filter { !kept.contains($0) },
            messages: try keptMessages.map { message throws(OfflineError) in
                OfflineRows.Message(
                    id: message.id, contactID: message.contactID, storedAt: message.storedAt, expiresAt: message.expiresAt,
                    value: try RecordCoding.encode(MessageRecord(message)))
            })
    }
}
