import GRDB

/// The store's tables, created and upgraded through GRDB's `DatabaseMigrator`.
///
/// Plaintext columns are the ones queries need: IDs, times, states, kinds. Every other field
/// is in a `sealed` column (see ``RowSealer``). Times are integer milliseconds since 1970.
enum StoreSchema {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE keyring (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        kdf TEXT NOT NULL,
                        salt BLOB,
                        log_n INTEGER,
                        block_size INTEGER,
                        parallelism INTEGER,
                        wrapped_key BLOB NOT NULL
                    );
                    CREATE TABLE sessions (
                        id TEXT PRIMARY KEY NOT NULL,
                        created_at INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        lifetime TEXT NOT NULL,
                        sealed BLOB NOT NULL
                    );
                    CREATE TABLE messages (
                        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        delivered INTEGER NOT NULL DEFAULT 0,
                        sealed BLOB NOT NULL,
                        PRIMARY KEY (session_id, id)
                    );
                    CREATE INDEX messages_by_session ON messages (session_id, created_at);
                    CREATE INDEX messages_by_expiry ON messages (expires_at);
                    CREATE TABLE identities (
                        session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                        sealed BLOB NOT NULL
                    );
                    CREATE TABLE secrets (
                        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL,
                        sealed BLOB NOT NULL,
                        PRIMARY KEY (session_id, kind)
                    );
                    """
            )
        }
        migrator.registerMigration("v2-offline") { db in
            // `inviso offline` (InvisoOffline): the account, contacts with their sessions, and
            // history. Only ids and times are plaintext.
            try db.execute(
                sql: """
                    CREATE TABLE offline_account (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        sealed BLOB NOT NULL
                    );
                    CREATE TABLE offline_contacts (
                        id TEXT PRIMARY KEY NOT NULL,
                        created_at INTEGER NOT NULL,
                        sealed BLOB NOT NULL
                    );
                    CREATE TABLE offline_messages (
                        contact_id TEXT NOT NULL REFERENCES offline_contacts(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        stored_at INTEGER NOT NULL,
                        expires_at INTEGER,
                        sealed BLOB NOT NULL,
                        PRIMARY KEY (contact_id, id)
                    );
                    CREATE INDEX offline_messages_by_contact ON offline_messages (contact_id, stored_at);
                    CREATE INDEX offline_messages_by_expiry ON offline_messages (expires_at);
                    """
            )
        }
        migrator.registerMigration("v3-nearby") { db in
            // `inviso nearby` (InvisoNearby): records by kind (the profile with the identity,
            // peers with their pinned identity and outbox, groups with their sender keys) and
            // conversation history. Only kinds, ids and times are plaintext.
            try db.execute(
                sql: """
                    CREATE TABLE nearby_records (
                        kind TEXT NOT NULL,
                        id TEXT NOT NULL,
                        updated_at INTEGER NOT NULL,
                        sealed BLOB NOT NULL,
                        PRIMARY KEY (kind, id)
                    );
                    CREATE TABLE nearby_messages (
                        conversation TEXT NOT NULL,
                        id TEXT NOT NULL,
                        stored_at INTEGER NOT NULL,
                        expires_at INTEGER,
                        sealed BLOB NOT NULL,
                        PRIMARY KEY (conversation, id)
                    );
                    CREATE INDEX nearby_messages_by_conversation ON nearby_messages (conversation, stored_at);
                    CREATE INDEX nearby_messages_by_expiry ON nearby_messages (expires_at);
                    """
            )
        }
        return migrator
    }
}
