public import Foundation
import GRDB

// MARK: - Messages

extension InvisoStore {
    /// Stores a message of the session `sessionID`, expiring after the session's lifetime;
    /// nothing is written for an ephemeral session.
    ///
    /// - Parameters:
    ///   - id: The message's ID, unique within the session (plaintext).
    ///   - sessionID: The session.
    ///   - direction: Sent or received (sealed).
    ///   - kind: The payload kind, such as `"text"` (sealed).
    ///   - body: The payload (sealed).
    ///   - now: The time it is stored; it expires at `now` plus the session's lifetime.
    /// - Returns: The stored message, or `nil` when the session is ephemeral.
    /// - Throws: ``StoreError/Code/sessionNotFound``, ``StoreError/Code/messageExists``,
    ///   ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func appendMessage(
        id: String, sessionID: String, direction: MessageDirection, kind: String, body: Data, at now: Date
    ) throws(StoreError) -> StoredMessage? {
        try write("storing a message") { db in
            guard let duration = try Self.lifetime(ofSession: sessionID, db).duration else { return nil }
            let exists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = ? AND id = ?)", arguments: [sessionID, id]
            )
            guard exists != true else { throw StoreError(.messageExists, "storing a message") }
            let createdAt = StoreTime.milliseconds(now)
            let (sum, overflow) = createdAt.addingReportingOverflow(Int64(duration * 1000))
            let expiresAt = overflow ? Int64.max : sum
            let sealed = try sealer.seal(
                json: StoredMessage.Sealed(direction: direction, kind: kind, body: body), for: .message(id, session: sessionID)
            )
            try db.execute(
                sql: """
                    INSERT INTO messages (session_id, id, created_at, expires_at, delivered, sealed)
                    VALUES (?, ?, ?, ?, 0, ?)
                    """,
                arguments: [sessionID, id, createdAt, expiresAt, sealed]
            )
            return StoredMessage(
                id: id, sessionID: sessionID, direction: direction, kind: kind, body: body,
                createdAt: StoreTime.date(createdAt), expiresAt: StoreTime.date(expiresAt), isDelivered: false
            )
        }
    }

    /// Stores a text message (kind `"text"`, the UTF-8 bytes as body); see
    /// ``appendMessage(id:sessionID:direction:kind:body:at:)``.
    @discardableResult
    public func appendMessage(
        id: String, sessionID: String, direction: MessageDirection, text: String, at now: Date
    ) throws(StoreError) -> StoredMessage? {
        try appendMessage(id: id, sessionID: sessionID, direction: direction, kind: "text", body: Data(text.utf8), at: now)
    }

    /// The session's messages that have not expired at `now`, oldest first (an expired
    /// message is never returned, even before ``deleteExpired(now:)`` removes it).
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when a message does not open;
    ///   ``StoreError/Code/corrupt``, ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func messages(sessionID: String, now: Date) throws(StoreError) -> [StoredMessage] {
        try read("reading messages") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, created_at, expires_at, delivered, sealed FROM messages
                    WHERE session_id = ? AND expires_at > ? ORDER BY created_at, rowid
                    """,
                arguments: [sessionID, StoreTime.milliseconds(now)]
            ).map { row in
                let id: String = try row.decode(forColumn: "id")
                let sealed = try sealer.open(
                    StoredMessage.Sealed.self, from: try row.decode(forColumn: "sealed"), for: .message(id, session: sessionID)
                )
                return StoredMessage(
                    id: id, sessionID: sessionID, direction: sealed.direction, kind: sealed.kind, body: sealed.body,
                    createdAt: StoreTime.date(try row.decode(forColumn: "created_at")),
                    expiresAt: StoreTime.date(try row.decode(forColumn: "expires_at")),
                    isDelivered: try row.decode(forColumn: "delivered")
                )
            }
        }
    }

    /// Marks a message as delivered (acknowledged by the peer).
    ///
    /// - Returns: Whether the message exists.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func markDelivered(messageID: String, sessionID: String) throws(StoreError) -> Bool {
        try write("marking a message delivered") { db in
            try db.execute(
                sql: "UPDATE messages SET delivered = 1 WHERE session_id = ? AND id = ?", arguments: [sessionID, messageID]
            )
            return db.changesCount > 0
        }
    }

    /// Deletes every message that expired at or before `now` (the rows are overwritten in the
    /// file). Call it on start and periodically.
    ///
    /// - Returns: How many messages were deleted.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func deleteExpired(now: Date) throws(StoreError) -> Int {
        try write("deleting expired messages") { db in
            try db.execute(sql: "DELETE FROM messages WHERE expires_at <= ?", arguments: [StoreTime.milliseconds(now)])
            return db.changesCount
        }
    }
}
