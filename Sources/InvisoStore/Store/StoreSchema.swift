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
        return migrator
    }
}
