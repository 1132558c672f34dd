import Foundation
import GRDB

// MARK: - Sessions

extension InvisoStore {
    /// Inserts `session`, or replaces the session with its ID.
    ///
    /// Replacing applies the same rules as ``setLifetime(_:sessionID:)`` when the lifetime
    /// changes, and as ``setState(_:sessionID:)`` when the state is ``SessionState/closed``.
    ///
    /// - Parameter session: The session; its sealed fields are sealed to its row.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func saveSession(_ session: StoredSession) throws(StoreError) {
        let sealed = try sealer.seal(json: session.sealedFields, for: .session(session.id))
        try write("saving a session") { db in
            let previous = try String.fetchOne(db, sql: "SELECT lifetime FROM sessions WHERE id = ?", arguments: [session.id])
            try db.execute(
                sql: """
                    INSERT INTO sessions (id, created_at, state, lifetime, sealed) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET
                        created_at = excluded.created_at, state = excluded.state,
                        lifetime = excluded.lifetime, sealed = excluded.sealed
                    """,
                arguments: [
                    session.id, StoreTime.milliseconds(session.createdAt), session.state.rawValue,
                    session.lifetime.rawValue, sealed,
                ]
            )
            if let previous, previous != session.lifetime.rawValue {
                try Self.applyLifetime(session.lifetime, sessionID: session.id, db)
            }
            if session.state == .closed { try Self.wipeKeys(sessionID: session.id, db) }
        }
    }

    /// The session `id`, or `nil`.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when its sealed fields do not open;
    ///   ``StoreError/Code/corrupt``, ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func session(id: String) throws(StoreError) -> StoredSession? {
        try read("reading a session") { db in
            try Row.fetchOne(
                db, sql: "SELECT id, created_at, state, lifetime, sealed FROM sessions WHERE id = ?", arguments: [id]
            ).map(session(from:))
        }
    }

    /// All sessions, oldest first.
    ///
    /// - Throws: as ``session(id:)``, for any of them.
    public func sessions() throws(StoreError) -> [StoredSession] {
        try read("reading the sessions") { db in
            try Row.fetchAll(db, sql: "SELECT id, created_at, state, lifetime, sealed FROM sessions ORDER BY created_at, id")
                .map(session(from:))
        }
    }

    /// Renames the session `id`.
    ///
    /// - Parameters:
    ///   - id: The session.
    ///   - name: Its new name (sealed).
    /// - Throws: ``StoreError/Code/sessionNotFound``, or as ``session(id:)``.
    public func renameSession(id: String, to name: String) throws(StoreError) {
        try write("renaming a session") { db in
            guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed FROM sessions WHERE id = ?", arguments: [id]) else {
                throw StoreError(.sessionNotFound, "renaming a session")
            }
            var fields = try sealer.open(StoredSession.Sealed.self, from: sealed, for: .session(id))
            fields.name = name
            let resealed = try sealer.seal(json: fields, for: .session(id))
            try db.execute(sql: "UPDATE sessions SET sealed = ? WHERE id = ?", arguments: [resealed, id])
        }
    }

    /// Moves the session to `state`. Moving it to ``SessionState/closed`` wipes its keys
    /// (every secret of ``saveSecret(_:kind:sessionID:)``) in the same transaction.
    ///
    /// - Throws: ``StoreError/Code/sessionNotFound``, ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func setState(_ state: SessionState, sessionID: String) throws(StoreError) {
        try write("changing a session's state") { db in
            try db.execute(sql: "UPDATE sessions SET state = ? WHERE id = ?", arguments: [state.rawValue, sessionID])
            guard db.changesCount > 0 else { throw StoreError(.sessionNotFound, "changing a session's state") }
            if state == .closed { try Self.wipeKeys(sessionID: sessionID, db) }
        }
    }

    /// Leaves the session: marks it ``SessionState/closed`` and wipes its keys. Its messages
    /// (until they expire) and pinned identity stay; ``deleteSession(id:)`` removes those too.
    ///
    /// - Throws: as ``setState(_:sessionID:)``.
    public func leaveSession(id: String) throws(StoreError) {
        try setState(.closed, sessionID: id)
    }

    /// Changes how long the session's messages are kept.
    ///
    /// ``MessageLifetime/ephemeral`` deletes every stored message of the session at once. A
    /// shorter lifetime also shortens the messages already stored (each expires at
    /// `createdAt` plus the new lifetime, if that is sooner); a longer one does not extend
    /// them.
    ///
    /// - Throws: ``StoreError/Code/sessionNotFound``, ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func setLifetime(_ lifetime: MessageLifetime, sessionID: String) throws(StoreError) {
        try write("changing a session's lifetime") { db in
            try db.execute(sql: "UPDATE sessions SET lifetime = ? WHERE id = ?", arguments: [lifetime.rawValue, sessionID])
            guard db.changesCount > 0 else { throw StoreError(.sessionNotFound, "changing a session's lifetime") }
            try Self.applyLifetime(lifetime, sessionID: sessionID, db)
        }
    }

    /// Deletes the session with its messages, pinned identity and secrets, in one
    /// transaction (the rows are overwritten in the file).
    ///
    /// - Returns: Whether the session existed.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func deleteSession(id: String) throws(StoreError) -> Bool {
        try write("deleting a session") { db in
            for table in ["messages", "identities", "secrets"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE session_id = ?", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }
}

// MARK: - Rows and rules

extension InvisoStore {
    func session(from row: Row) throws -> StoredSession {
        let id: String = try row.decode(forColumn: "id")
        guard let state = SessionState(rawValue: try row.decode(forColumn: "state")),
            let lifetime = MessageLifetime(rawValue: try row.decode(forColumn: "lifetime"))
        else { throw StoreError(.corrupt, "reading a session") }
        let sealed = try sealer.open(StoredSession.Sealed.self, from: try row.decode(forColumn: "sealed"), for: .session(id))
        return StoredSession(
            id: id, createdAt: StoreTime.date(try row.decode(forColumn: "created_at")), state: state,
            lifetime: lifetime, sealed: sealed
        )
    }

    /// The lifetime of session `id`.
    ///
    /// - Throws: ``StoreError/Code/sessionNotFound`` or ``StoreError/Code/corrupt``.
    static func lifetime(ofSession id: String, _ db: Database) throws -> MessageLifetime {
        guard let raw = try String.fetchOne(db, sql: "SELECT lifetime FROM sessions WHERE id = ?", arguments: [id]) else {
            throw StoreError(.sessionNotFound, "looking up a session")
        }
        guard let lifetime = MessageLifetime(rawValue: raw) else { throw StoreError(.corrupt, "reading a session") }
        return lifetime
    }

    /// Ephemeral: delete the session's messages; otherwise shorten their expiry to
    /// `created_at + lifetime` where that is sooner.
    static func applyLifetime(_ lifetime: MessageLifetime, sessionID: String, _ db: Database) throws {
        guard let duration = lifetime.duration else {
            try db.execute(sql: "DELETE FROM messages WHERE session_id = ?", arguments: [sessionID])
            return
        }
        try db.execute(
            sql: "UPDATE messages SET expires_at = MIN(expires_at, created_at + ?) WHERE session_id = ?",
            arguments: [Int64(duration * 1000), sessionID]
        )
    }

    /// Deletes the session's secrets (its keys).
    static func wipeKeys(sessionID: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM secrets WHERE session_id = ?", arguments: [sessionID])
    }
}
