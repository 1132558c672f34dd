public import Foundation
import GRDB

/// A nearby record as the store holds it (`inviso nearby`, InvisoNearby): a value the
/// caller encodes, sealed and bound to its kind and id.
public struct NearbyStoredRecord: Sendable {
    /// The record's kind (`profile`, `peer`, `group`).
    public var kind: String
    /// Its id within the kind.
    public var id: String
    /// When it was last written, milliseconds since 1970 (plaintext).
    public var updatedAt: Int64
    /// The caller's encoding (sealed at rest).
    public var value: Data

    /// A record.
    public init(kind: String, id: String, updatedAt: Int64, value: Data) {
        self.kind = kind
        self.id = id
        self.updatedAt = updatedAt
        self.value = value
    }
}

/// A nearby conversation's message as the store holds it.
public struct NearbyStoredMessage: Sendable {
    /// The conversation (a peer's or a group's id).
    public var conversation: String
    /// The message's id (unique in its conversation).
    public var id: String
    /// When it was stored, milliseconds since 1970 (plaintext).
    public var storedAt: Int64
    /// When it is deleted, or `nil` for never (plaintext).
    public var expiresAt: Int64?
    /// The caller's encoding (sealed at rest).
    public var value: Data

    /// A message row.
    public init(conversation: String, id: String, storedAt: Int64, expiresAt: Int64?, value: Data) {
        self.conversation = conversation
        self.id = id
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.value = value
    }
}

extension InvisoStore {
    /// Every nearby record of `kind`, oldest first.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when a row does not open (moved,
    ///   tampered with, or sealed under another key), ``StoreError/Code/closed``,
    ///   ``StoreError/Code/database``.
    public func nearbyRecords(kind: String) throws(StoreError) -> [NearbyStoredRecord] {
        let sealer = self.sealer
        return try read("reading nearby records") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM nearby_records WHERE kind = ? ORDER BY rowid", arguments: [kind]).map {
                row throws(StoreError) in
                let id: String = row["id"]
                return NearbyStoredRecord(
                    kind: kind, id: id, updatedAt: row["updated_at"],
                    value: try sealer.open(row["sealed"], for: .nearbyRecord(kind, id)))
            }
        }
    }

    /// Writes records (insert or replace their values) and deletes others, in one transaction.
    ///
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func saveNearby(records: [NearbyStoredRecord], deleting deleted: [(kind: String, id: String)] = [])
        throws(StoreError)
    {
        let sealer = self.sealer
        try write("saving nearby records") { db in
            for record in records {
                let sealed = try sealer.seal(record.value, for: .nearbyRecord(record.kind, record.id))
                try db.execute(
                    sql: """
                        INSERT INTO nearby_records (kind, id, updated_at, sealed) VALUES (?, ?, ?, ?)
                        ON CONFLICT (kind, id) DO UPDATE SET updated_at = excluded.updated_at, sealed = excluded.sealed
                        """,
                    arguments: [record.kind, record.id, record.updatedAt, sealed])
            }
            for (kind, id) in deleted {
                try db.execute(sql: "DELETE FROM nearby_records WHERE kind = ? AND id = ?", arguments: [kind, id])
            }
        }
    }

    /// Adds a message (a message already stored under the same id is left as it is: a
    /// redelivery is not a second message).
    ///
    /// - Returns: Whether it was new.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func addNearbyMessage(_ message: NearbyStoredMessage) throws(StoreError) -> Bool {
        let sealer = self.sealer
        return try write("storing a nearby message") { db in
            let sealed = try sealer.seal(message.value, for: .nearbyMessage(message.id, conversation: message.conversation))
            try db.execute(
                sql: """
                    INSERT INTO nearby_messages (conversation, id, stored_at, expires_at, sealed) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (conversation, id) DO NOTHING
                    """,
                arguments: [message.conversation, message.id, message.storedAt, message.expiresAt, sealed])
            return db.changesCount > 0
        }
    }

    /// A conversation's messages that have not expired at `now`, oldest first.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed``, ``StoreError/Code/closed``,
    ///   ``StoreError/Code/database``.
    public func nearbyMessages(conversation: String, now: Int64) throws(StoreError) -> [NearbyStoredMessage] {
        let sealer = self.sealer
        return try read("reading nearby messages") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM nearby_messages WHERE conversation = ? AND (expires_at IS NULL OR expires_at > ?)
                    ORDER BY stored_at, rowid
                    """,
                arguments: [conversation, now]
            ).map { row throws(StoreError) in
                let id: String = row["id"]
                return NearbyStoredMessage(
                    conversation: conversation, id: id, storedAt: row["stored_at"], expiresAt: row["expires_at"],
                    value: try sealer.open(row["sealed"], for: .nearbyMessage(id, conversation: conversation)))
            }
        }
    }

    /// Deletes nearby messages that expired at `now`, including those that expired while no
    /// program ran.
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func deleteExpiredNearbyMessages(now: Int64) throws(StoreError) -> Int {
        try write("deleting expired nearby messages") { db in
            try db.execute(sql: "DELETE FROM nearby_messages WHERE expires_at IS NOT NULL AND expires_at <= ?", arguments: [now])
            return db.changesCount
        }
    }
}
