import Foundation
import GRDB
public import InvisoCrypto

// MARK: - Pinned identities

extension InvisoStore {
    /// Pins `identity` for the session, replacing any earlier one.
    ///
    /// - Throws: ``StoreError/Code/sessionNotFound``, ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func savePinnedIdentity(_ identity: PinnedIdentity, sessionID: String) throws(StoreError) {
        let sealed = try sealer.seal(json: identity, for: .identity(session: sessionID))
        try write("pinning an identity") { db in
            _ = try Self.lifetime(ofSession: sessionID, db)
            try db.execute(
                sql: """
                    INSERT INTO identities (session_id, sealed) VALUES (?, ?)
                    ON CONFLICT (session_id) DO UPDATE SET sealed = excluded.sealed
                    """,
                arguments: [sessionID, sealed]
            )
        }
    }

    /// The identity pinned for the session, or `nil`.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when it does not open;
    ///   ``StoreError/Code/corrupt``, ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func pinnedIdentity(sessionID: String) throws(StoreError) -> PinnedIdentity? {
        try read("reading a pinned identity") { db in
            try Data.fetchOne(db, sql: "SELECT sealed FROM identities WHERE session_id = ?", arguments: [sessionID])
                .map { try sealer.open(PinnedIdentity.self, from: $0, for: .identity(session: sessionID)) }
        }
    }
}

// MARK: - Secrets (ratchet and channel state)

extension InvisoStore {
    /// Stores `secret` as the session's secret of `kind`, replacing the previous one.
    ///
    /// - Parameters:
    ///   - secret: The secret bytes (a serialized ratchet state, a private key).
    ///   - kind: What it is (plaintext).
    ///   - sessionID: The session.
    /// - Throws: ``StoreError/Code/sessionNotFound``; ``StoreError/Code/sessionClosed`` for a
    ///   closed session (its keys are gone for good); ``StoreError/Code/closed`` or
    ///   ``StoreError/Code/database``.
    public func saveSecret(_ secret: SecretBytes, kind: SecretKind, sessionID: String) throws(StoreError) {
        let binding = RowBinding.secret(kind.rawValue, session: sessionID)
        let sealed = try secret.withUnsafeBytes { (bytes) throws(StoreError) in try sealer.seal(bytes, for: binding) }
        try write("storing a secret") { db in
            guard let state = try String.fetchOne(db, sql: "SELECT state FROM sessions WHERE id = ?", arguments: [sessionID])
            else { throw StoreError(.sessionNotFound, "storing a secret") }
            guard state != SessionState.closed.rawValue else { throw StoreError(.sessionClosed, "storing a secret") }
            try db.execute(
                sql: """
                    INSERT INTO secrets (session_id, kind, sealed) VALUES (?, ?, ?)
                    ON CONFLICT (session_id, kind) DO UPDATE SET sealed = excluded.sealed
                    """,
                arguments: [sessionID, kind.rawValue, sealed]
            )
        }
    }

    /// The session's secret of `kind`, or `nil`.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when it does not open;
    ///   ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    public func secret(kind: SecretKind, sessionID: String) throws(StoreError) -> SecretBytes? {
        let binding = RowBinding.secret(kind.rawValue, session: sessionID)
        return try read("reading a secret") { db in
            guard
                let sealed = try Data.fetchOne(
                    db, sql: "SELECT sealed FROM secrets WHERE session_id = ? AND kind = ?", arguments: [sessionID, kind.rawValue]
                )
            else { return nil }
            var plaintext = try sealer.open(sealed, for: binding)
            defer { plaintext.resetBytes(in: 0..<plaintext.count) }
            return SecretBytes(count: plaintext.count) { _ = plaintext.copyBytes(to: $0) }
        }
    }

    /// Deletes every secret of the session (the rows are overwritten in the file).
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``StoreError/Code/closed`` or ``StoreError/Code/database``.
    @discardableResult
    public func deleteSecrets(sessionID: String) throws(StoreError) -> Int {
        try write("deleting secrets") { db in
            try Self.wipeKeys(sessionID: sessionID, db)
            return db.changesCount
        }
    }
}
