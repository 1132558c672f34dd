public import Foundation
import GRDB

/// The offline messenger's rows (`inviso offline`, InvisoOffline) as the store holds them:
/// values the caller encodes, which the store seals, each bound to its row.
public struct OfflineRows: Sendable {
    /// One contact's row.
    public struct Contact: Sendable {
        /// The contact's local id (plaintext).
        public var id: String
        /// When it was added, milliseconds since 1970 (plaintext).
        public var createdAt: Int64
        /// Everything else, encoded by the caller (sealed).
        public var value: Data

        /// A row.
        public init(id: String, createdAt: Int64, value: Data) {
            self.id = id
            self.createdAt = createdAt
            self.value = value
        }
    }

    /// One message's row.
    public struct Message: Sendable {
        /// The message's id (plaintext).
        public var id: String
        /// Its contact's id (plaintext).
        public var contactID: String
        /// When it was stored, milliseconds since 1970 (plaintext).
        public var storedAt: Int64
        /// When it is deleted, or `nil` for never (plaintext).
        public var expiresAt: Int64?
        /// Everything else, encoded by the caller (sealed).
        public var value: Data

        /// A row.
        public init(id: String, contactID: String, storedAt: Int64, expiresAt: Int64?, value: Data) {
            self.id = id
            self.contactID = contactID
            self.storedAt = storedAt
            self.expiresAt = expiresAt
            self.value = value
        }
    }

    /// The account, if there is one.
    public var account: Data?
    /// Every contact, oldest first.
    public var contacts: [Contact]

    /// Rows.
    public init(account: Data?, contacts: [Contact]) {
        self.account = account
        self.contacts = contacts
    }

    /// Overwrites the decrypted values with zeros (copies made elsewhere are beyond reach).
    mutating func wipe() {
        if var bytes = account {
            account = nil
            bytes.resetBytes(in: 0..<bytes.count)
        }
        for index in contacts.indices {
            let count = contacts[index].value.count
            contacts[index].value.resetBytes(in: 0..<count)
        }
    }
}

/// What one offline operation writes: the new account and contact rows, contacts to
/// delete (with their messages), and messages to add.
public struct OfflineWrite: Sendable {
    /// The account row (`nil`: unchanged).
    public var account: Data?
    /// Contact rows to insert or replace.
    public var contacts: [OfflineRows.Contact]
    /// Ids of contacts to delete, with their messages.
    public var deletedContacts: [String]
    /// Messages to add.
    public var messages: [OfflineRows.Message]

    /// A write.
    public init(
        account: Data?, contacts: [OfflineRows.Contact] = [], deletedContacts: [String] = [],
        messages: [OfflineRows.Message] = []
    ) {
        self.account = account
        self.contacts = contacts
        self.deletedContacts = deletedContacts
        self.messages = messages
    }

    /// Nothing to write.
    public static let none = OfflineWrite(account: nil)
}

extension InvisoStore {
    /// Reads the offline rows and writes what `body` decides, in one immediate
    /// transaction: two processes updating the same store take turns, and each sees the
    /// other's result. Every value is sealed to its row; decrypted values are overwritten
    /// once `body` returns.
    ///
    /// - Parameter body: Computes the write (and a result) from the current rows; throwing
    ///   rolls everything back.
    /// - Returns: `body`'s result.
    /// - Throws: ``StoreError/Code/authenticationFailed`` when a row does not open,
    ///   ``StoreError/Code/closed``, ``StoreError/Code/database``, or what `body` throws
    ///   (other errors become ``StoreError/Code/database``: use ``updateOffline(_:)`` with a
    ///   body that throws ``StoreError`` only, or catch inside it).
    public func updateOffline<Result: Sendable>(
        _ body: (OfflineRows) throws(StoreError) -> (OfflineWrite, Result)
    ) throws(StoreError) -> Result {
        let sealer = self.sealer
        return try write("updating the offline book") { db in
            var rows = try Self.offlineRows(db, sealer: sealer)
            defer { rows.wipe() }
            let (change, result) = try body(rows)
            if let account = change.account {
                let sealed = try sealer.seal(account, for: .offlineAccount)
                try db.execute(
                    sql: "INSERT INTO offline_account (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed",
                    arguments: [sealed])
            }
            for contact in change.contacts {
                let sealed = try sealer.seal(contact.value, for: .offlineContact(contact.id))
                try db.execute(
                    // An upsert, not REPLACE: replacing deletes the row, and its messages with it.
                    sql: """
                        INSERT INTO offline_contacts (id, created_at, sealed) VALUES (?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, sealed = excluded.sealed
                        """,
                    arguments: [contact.id, contact.createdAt, sealed])
            }
            for id in change.deletedContacts {
                try db.execute(sql: "DELETE FROM offline_contacts WHERE id = ?", arguments: [id])
            }
            for message in change.messages {
                let sealed = try sealer.seal(message.value, for: .offlineMessage(message.id, contact: message.contactID))
                try db.execute(
                    sql: """
                        INSERT INTO offline_messages (contact_id, id, stored_at, expires_at, sealed)
                        VALUES (?, ?, ?, ?, ?)
                        """,
                    arguments: [message.contactID, message.id, message.storedAt, message.expiresAt, sealed])
            }
            return result
        }
    }

    /// The offline rows as they are.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed``, ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func offlineRows() throws(StoreError) -> OfflineRows {
        let sealer = self.sealer
        return try read("reading the offline book") { db in try Self.offlineRows(db, sealer: sealer) }
    }

    /// A contact's messages (or everyone's, for `nil`) that have not expired at `now`,
    /// oldest first.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed``, ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func offlineMessages(contactID: String?, now: Int64) throws(StoreError) -> [OfflineRows.Message] {
        let sealer = self.sealer
        return try read("reading offline messages") { db in
            let rows: [Row]
            if let contactID {
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM offline_messages WHERE contact_id = ? AND (expires_at IS NULL OR expires_at > ?)
                        ORDER BY stored_at, rowid
                        """,
                    arguments: [contactID, now])
            } else {
                rows = try Row.fetchAll(
                    db,
                    sql: "SELECT * FROM offline_messages WHERE expires_at IS NULL OR expires_at > ? ORDER BY stored_at, rowid",
                    arguments: [now])
            }
            return try rows.map { row throws(StoreError) in
                let id: String = row["id"]
                let contactID: String = row["contact_id"]
                return OfflineRows.Message(
                    id: id, contactID: contactID, storedAt: row["stored_at"], expiresAt: row["expires_at"],
                    value: try sealer.open(row["sealed"], for: .offlineMessage(id, contact: contactID)))
            }
        }
    }

    /// Deletes offline messages that expired at `now` (overwritten in the file).
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func deleteExpiredOfflineMessages(now: Int64) throws(StoreError) -> Int {
        try write("deleting expired offline messages") { db in
            try db.execute(sql: "DELETE FROM offline_messages WHERE expires_at IS NOT NULL AND expires_at <= ?", arguments: [now])
            return db.changesCount
        }
    }

    private static func offlineRows(_ db: Database, sealer: RowSealer) throws -> OfflineRows {
        var account: Data?
        if let sealed = try Data.fetchOne(db, sql: "SELECT sealed FROM offline_account WHERE id = 1") {
            account = try sealer.open(sealed, for: .offlineAccount)
        }
        let contacts = try Row.fetchAll(db, sql: "SELECT * FROM offline_contacts ORDER BY created_at, rowid").map {
            row throws(StoreError) in
            let id: String = row["id"]
            return OfflineRows.Contact(
                id: id, createdAt: row["created_at"], value: try sealer.open(row["sealed"], for: .offlineContact(id)))
        }
        return OfflineRows(account: account, contacts: contacts)
    }
}
