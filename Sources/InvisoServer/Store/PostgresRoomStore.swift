public import Foundation
public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// A ``RoomStore`` in PostgreSQL (postgres-nio), for several server instances sharing one
/// database.
///
/// It wraps a `PostgresClient` (a connection pool), which only hands out connections while
/// ``run()`` is running: put the store in the server's `ServiceGroup`, or run it in a task
/// for as long as the store is used, and cancel that task to close the pool.
///
/// Every method is one atomic statement (`INSERT … ON CONFLICT … WHERE`, a data-modifying
/// `WITH … RETURNING`) or one transaction holding the row lock, so instances racing on one
/// code see exactly one winner. Values are always bound parameters, never SQL text. Times
/// are `BIGINT` milliseconds since 1970, as in ``SQLiteRoomStore``.
public struct PostgresRoomStore: RoomStore {
    private let client: PostgresClient
    private let logger: Logger

    /// Creates a store whose pool connects with `configuration`.
    ///
    /// - Parameters:
    ///   - configuration: Where and how to connect; see ``configuration(url:)``.
    ///   - logger: Receives the pool's background messages and each query's debug logging.
    public init(configuration: PostgresClient.Configuration, logger: Logger) {
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Parses a connection URL: `postgres://user:password@host:port/database` (or
    /// `postgresql://…`). The port defaults to 5432, the database to the user's name;
    /// user and password may be percent-encoded.
    ///
    /// TLS: none for a loopback host (`127.0.0.1`, `localhost`, `::1`), where there is no
    /// network to protect; for any other host TLS is *preferred* (used when the server
    /// offers it, with certificate verification, else a plain connection). A `sslmode`
    /// query item of `disable`, `prefer` or `require` overrides this; use `require` when
    /// the server is across a network you do not trust.
    ///
    /// - Parameter url: The connection URL.
    /// - Returns: The client configuration.
    /// - Throws: ``RoomStoreError/Code/unavailable`` when the URL is malformed (the detail
    ///   never repeats the URL, which holds the password).
    public static func configuration(url: String) throws -> PostgresClient.Configuration {
        func invalid(_ reason: String) -> RoomStoreError {
            RoomStoreError(.unavailable, "invalid PostgreSQL URL: \(reason)")
        }
        guard let components = URLComponents(string: url) else { throw invalid("not a URL") }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw invalid("the scheme must be postgres:// or postgresql://")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw invalid("no host") }
        guard let username = components.user, !username.isEmpty else { throw invalid("no user name") }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw invalid("port out of range") }
        var database = components.path
        if database.hasPrefix("/") { database.removeFirst() }
        guard !database.contains("/") else { throw invalid("the path must be one database name") }

        let loopback = ["127.0.0.1", "localhost", "::1"].contains(host.lowercased())
        let tls: PostgresClient.Configuration.TLS
        switch components.queryItems?.last(where: { $0.name == "sslmode" })?.value {
        case nil: tls = loopback ? .disable : .prefer(.makeClientConfiguration())
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case .some: throw invalid("sslmode must be disable, prefer or require")
        }
        return PostgresClient.Configuration(
            host: host, port: port, username: username, password: components.password,
            database: database.isEmpty ? nil : database, tls: tls
        )
    }
}

// MARK: - Service

extension PostgresRoomStore: Service {
    /// Runs the connection pool until the task is cancelled or the service group shuts
    /// down gracefully; queries wait for connections only while this runs. Call it once.
    public func run() async throws {
        await client.run()
    }
}

// MARK: - RoomStore

extension PostgresRoomStore {
    /// A key for `pg_advisory_xact_lock` that serializes migrations across instances.
    private static let migrationLock: Int64 = 0x696E_7669_736F_0001

    /// Brings the schema to the newest version. In one transaction that first takes a
    /// database-wide advisory lock (so instances starting together migrate one after the
    /// other), creates `schema_migrations(version)` if needed and applies each missing
    /// version, recording it. Running it again does nothing.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` when the database fails.
    public func migrate() async throws {
        try await transaction("migrating") { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            var applied = Set<Int>()
            for try await version in try await connection.query(
                "SELECT version FROM schema_migrations", logger: logger
            ).decode(Int.self) {
                applied.insert(version)
            }
            for migration in Self.migrations where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(statement, logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger
                )
            }
        }
    }

    /// Stores a new pending code in one statement that inserts, or overwrites the existing
    /// row only if it has expired (PostgreSQL serializes concurrent inserts of one key).
    ///
    /// - Throws: ``RoomStoreError/codeTaken`` when a live code has this join ID;
    ///   ``RoomStoreError/Code/unavailable`` when the database fails.
    public func insertPending(_ pending: PendingRoom, now: Date) async throws {
        let rows = try await rows(
            """
            INSERT INTO pendings (join_id, client1, client1_token, client1_platform,
                                  created_at, expires_at, room_id, failed_guesses)
            VALUES (\(pending.joinID), \(pending.client1), \(pending.client1Token), \(pending.client1Platform),
                    \(pending.createdAt.millisecondsSince1970), \(pending.expiresAt.millisecondsSince1970),
                    \(pending.roomID), \(pending.failedGuesses))
            ON CONFLICT (join_id) DO UPDATE SET
                client1 = EXCLUDED.client1, client1_token = EXCLUDED.client1_token,
                client1_platform = EXCLUDED.client1_platform, created_at = EXCLUDED.created_at,
                expires_at = EXCLUDED.expires_at, room_id = EXCLUDED.room_id,
                failed_guesses = EXCLUDED.failed_guesses
            WHERE pendings.expires_at <= \(now.millisecondsSince1970)
            RETURNING join_id
            """,
            "inserting a pending code"
        )
        if rows.isEmpty { throw RoomStoreError.codeTaken }
    }

    /// Turns the live pending code `joinID` into a room: one statement claims the code
    /// (`UPDATE … WHERE room_id IS NULL`, which a concurrent claimer waits on and then
    /// fails) and inserts the room.
    ///
    /// - Returns: ``AcceptOutcome/accepted(_:)`` with the new room,
    ///   ``AcceptOutcome/alreadyAccepted`` or ``AcceptOutcome/notFoundOrExpired``.
    /// - Throws: ``RoomStoreError/Code/unavailable`` when the database fails (also when
    ///   `roomID` is already in use); ``RoomStoreError/Code/corrupt`` for an unreadable row.
    public func accept(
        joinID: String, client2: String, client2Token: String?, client2Platform: String?, roomID: String, now: Date
    ) async throws -> AcceptOutcome {
        let nowMilliseconds = now.millisecondsSince1970
        let claimed = try await rows(
            """
            WITH claimed AS (
                UPDATE pendings SET room_id = \(roomID)
                WHERE join_id = \(joinID) AND expires_at > \(nowMilliseconds) AND room_id IS NULL
                RETURNING join_id, client1, client1_token, client1_platform
            )
            INSERT INTO rooms (room_id, join_id, client1, client2, client1_token, client2_token,
                               client1_platform, client2_platform, created_at)
            SELECT \(roomID), join_id, client1, \(client2), client1_token, \(client2Token),
                   client1_platform, \(client2Platform), \(nowMilliseconds)
            FROM claimed
            RETURNING client1, client1_token, client1_platform
            """,
            "accepting a code"
        )
        if let row = claimed.first {
            let (client1, client1Token, client1Platform) = try decode(row, as: (String, String?, String?).self)
            return .accepted(
                Room(
                    roomID: roomID, joinID: joinID, client1: client1, client2: client2, client1Token: client1Token,
                    client2Token: client2Token, client1Platform: client1Platform, client2Platform: client2Platform,
                    createdAt: now
                )
            )
        }
        let existing = try await rows(
            "SELECT room_id FROM pendings WHERE join_id = \(joinID) AND expires_at > \(nowMilliseconds)",
            "accepting a code"
        )
        guard let row = existing.first, try decode(row, as: String?.self) != nil else { return .notFoundOrExpired }
        return .alreadyAccepted
    }

    /// The creator's poll for the live code `joinID`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func check(joinID: String, client1: String, now: Date) async throws -> CheckOutcome {
        let rows = try await rows(
            """
            SELECT room_id FROM pendings
            WHERE join_id = \(joinID) AND client1 = \(client1) AND expires_at > \(now.millisecondsSince1970)
            """,
            "checking a code"
        )
        guard let row = rows.first else { return .notFound }
        return try decode(row, as: String?.self).map { .accepted(roomID: $0) } ?? .pending
    }

    /// The live pending code `joinID`, or `nil`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func pending(joinID: String, now: Date) async throws -> PendingRoom? {
        let rows = try await rows(
            """
            SELECT join_id, client1, client1_token, client1_platform, created_at, expires_at, room_id, failed_guesses
            FROM pendings WHERE join_id = \(joinID) AND expires_at > \(now.millisecondsSince1970)
            """,
            "reading a pending code"
        )
        guard let row = rows.first else { return nil }
        let (joinID, client1, token, platform, createdAt, expiresAt, roomID, failedGuesses) = try decode(
            row, as: (String, String, String?, String?, Int64, Int64, String?, Int).self
        )
        return PendingRoom(
            joinID: joinID, client1: client1, client1Token: token, client1Platform: platform,
            createdAt: Date(millisecondsSince1970: createdAt), expiresAt: Date(millisecondsSince1970: expiresAt),
            roomID: roomID, failedGuesses: failedGuesses
        )
    }

    /// The room `roomID`, or `nil`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func room(id roomID: String) async throws -> Room? {
        let rows = try await rows(
            """
            SELECT room_id, join_id, client1, client2, client1_token, client2_token,
                   client1_platform, client2_platform, created_at
            FROM rooms WHERE room_id = \(roomID)
            """,
            "reading a room"
        )
        guard let row = rows.first else { return nil }
        let (roomID, joinID, client1, client2, token1, token2, platform1, platform2, createdAt) = try decode(
            row, as: (String, String, String, String, String?, String?, String?, String?, Int64).self
        )
        return Room(
            roomID: roomID, joinID: joinID, client1: client1, client2: client2, client1Token: token1,
            client2Token: token2, client1Platform: platform1, client2Platform: platform2,
            createdAt: Date(millisecondsSince1970: createdAt)
        )
    }

    /// Deletes the room `roomID` if `deviceID` is one of its members (one `DELETE`; the
    /// follow-up read only tells "no such room" from "not a member").
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func deleteRoom(id roomID: String, deviceID: String) async throws -> DeleteOutcome {
        let deleted = try await rows(
            """
            DELETE FROM rooms WHERE room_id = \(roomID) AND (client1 = \(deviceID) OR client2 = \(deviceID))
            RETURNING room_id
            """,
            "deleting a room"
        )
        if !deleted.isEmpty { return .deleted }
        let existing = try await rows("SELECT 1 FROM rooms WHERE room_id = \(roomID)", "deleting a room")
        return existing.isEmpty ? .notFound : .notMember
    }

    /// Whether a room names `deviceID` as `client1` or `client2` (one `SELECT EXISTS`).
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func hasRoom(member deviceID: String) async throws -> Bool {
        let rows = try await rows(
            "SELECT EXISTS (SELECT 1 FROM rooms WHERE client1 = \(deviceID) OR client2 = \(deviceID))",
            "looking up a member's rooms"
        )
        guard let row = rows.first else { throw RoomStoreError(.corrupt, "looking up a member's rooms: no result") }
        return try decode(row, as: Bool.self)
    }

    /// Deletes the rooms naming one of `deviceIDs`, the pending codes they created, and the
    /// pending codes of the deleted rooms, in one statement.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func purge(deviceIDs: [String]) async throws -> PurgeCounts {
        if deviceIDs.isEmpty { return PurgeCounts(roomsDeleted: 0, pendingsDeleted: 0) }
        let rows = try await rows(
            """
            WITH gone_rooms AS (
                DELETE FROM rooms WHERE client1 = ANY(\(deviceIDs)) OR client2 = ANY(\(deviceIDs))
                RETURNING room_id
            ), gone_pendings AS (
                DELETE FROM pendings
                WHERE client1 = ANY(\(deviceIDs)) OR room_id IN (SELECT room_id FROM gone_rooms)
                RETURNING join_id
            )
            SELECT (SELECT count(*) FROM gone_rooms), (SELECT count(*) FROM gone_pendings),
                   (SELECT coalesce(string_agg(join_id, ',' ORDER BY join_id), '') FROM gone_pendings)
            """,
            "purging devices"
        )
        guard let row = rows.first else { throw RoomStoreError(.corrupt, "purging devices: no counts") }
        let (rooms, pendings, codes) = try decode(row, as: (Int, Int, String).self)
        let joinIDs = codes.split(separator: ",").map(String.init)
        return PurgeCounts(roomsDeleted: rooms, pendingsDeleted: pendings, joinIDs: joinIDs)
    }

    /// Counts a failed guess against the live code `joinID`; deletes the code and returns
    /// `true` when the count reaches `limit`. One transaction holds the row lock, so of
    /// concurrent guesses exactly one burns the code.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func recordFailedGuess(joinID: String, limit: Int, now: Date) async throws -> Bool {
        try await transaction("recording a failed guess") { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE pendings SET failed_guesses = failed_guesses + 1
                WHERE join_id = \(joinID) AND expires_at > \(now.millisecondsSince1970)
                RETURNING failed_guesses
                """,
                logger: logger
            ).collect()
            guard let row = rows.first else { return false }
            guard try decode(row, as: Int.self) >= limit else { return false }
            try await connection.query("DELETE FROM pendings WHERE join_id = \(joinID)", logger: logger)
            return true
        }
    }

    /// Deletes the pending codes that expired at or before `now`.
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func deleteExpired(now: Date) async throws -> Int {
        let rows = try await rows(
            """
            WITH gone AS (DELETE FROM pendings WHERE expires_at <= \(now.millisecondsSince1970) RETURNING 1)
            SELECT count(*) FROM gone
            """,
            "deleting expired codes"
        )
        guard let row = rows.first else { throw RoomStoreError(.corrupt, "deleting expired codes: no count") }
        return try decode(row, as: Int.self)
    }

    /// Live pending codes and all rooms.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func counts(now: Date) async throws -> StoreCounts {
        let rows = try await rows(
            """
            SELECT (SELECT count(*) FROM pendings WHERE expires_at > \(now.millisecondsSince1970)),
                   (SELECT count(*) FROM rooms)
            """,
            "counting"
        )
        guard let row = rows.first else { throw RoomStoreError(.corrupt, "counting: no counts") }
        let (pendings, rooms) = try decode(row, as: (Int, Int).self)
        return StoreCounts(pendings: pendings, rooms: rooms)
    }
}

// MARK: - Schema

extension PostgresRoomStore {
    /// One schema version: statements run in order, in the migration transaction.
    private struct Migration {
        var version: Int
        var statements: [PostgresQuery]
    }

    /// Every schema version, oldest first. Append new versions; never edit applied ones.
    private static var migrations: [Migration] {
        [
            Migration(
                version: 1,
                statements: [
                    """
                    CREATE TABLE pendings (
                        join_id TEXT PRIMARY KEY,
                        client1 TEXT NOT NULL,
                        client1_token TEXT,
                        client1_platform TEXT,
                        created_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL,
                        room_id TEXT,
                        failed_guesses INTEGER NOT NULL DEFAULT 0
                    )
                    """,
                    "CREATE INDEX pendings_client1 ON pendings (client1)",
                    "CREATE INDEX pendings_expires_at ON pendings (expires_at)",
                    "CREATE INDEX pendings_room_id ON pendings (room_id)",
                    """
                    CREATE TABLE rooms (
                        room_id TEXT PRIMARY KEY,
                        join_id TEXT NOT NULL,
                        client1 TEXT NOT NULL,
                        client2 TEXT NOT NULL,
                        client1_token TEXT,
                        client2_token TEXT,
                        client1_platform TEXT,
                        client2_platform TEXT,
                        created_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX rooms_client1 ON rooms (client1)",
                    "CREATE INDEX rooms_client2 ON rooms (client2)",
                ]
            ),
            // Device IDs become digests and push tokens go (see DeviceDigest).
            Migration(
                version: 2,
                statements: [
                    PostgresQuery(unsafeSQL: "UPDATE pendings SET client1 = \(DeviceDigest.sql("client1")) WHERE client1 NOT LIKE 'sha256:%'"),
                    PostgresQuery(unsafeSQL: "UPDATE rooms SET client1 = \(DeviceDigest.sql("client1")) WHERE client1 NOT LIKE 'sha256:%'"),
                    PostgresQuery(unsafeSQL: "UPDATE rooms SET client2 = \(DeviceDigest.sql("client2")) WHERE client2 NOT LIKE 'sha256:%'"),
                    "UPDATE pendings SET client1_token = NULL",
                    "UPDATE rooms SET client1_token = NULL, client2_token = NULL",
                ]
            ),
            // Per-source limits shared by the instances (see PostgresSourceLimits).
            Migration(
                version: 3,
                statements: [
                    """
                    CREATE TABLE inviso_source_attempts (
                        token BIGSERIAL PRIMARY KEY,
                        source TEXT NOT NULL,
                        at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX inviso_source_attempts_source ON inviso_source_attempts (source, at)",
                    """
                    CREATE TABLE inviso_source_buckets (
                        kind TEXT NOT NULL,
                        source TEXT NOT NULL,
                        tokens DOUBLE PRECISION NOT NULL,
                        updated BIGINT NOT NULL,
                        PRIMARY KEY (kind, source)
                    )
                    """,
                    """
                    CREATE TABLE inviso_source_codes (
                        token BIGSERIAL PRIMARY KEY,
                        source TEXT NOT NULL,
                        code TEXT,
                        expires_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX inviso_source_codes_source ON inviso_source_codes (source, expires_at)",
                    "CREATE INDEX inviso_source_codes_code ON inviso_source_codes (code)",
                ]
            ),
        ]
    }
}

// MARK: - Queries and errors

extension PostgresRoomStore {
    /// Runs one statement on a pooled connection and reads all its rows.
    func rows(_ query: PostgresQuery, _ operation: String) async throws -> [PostgresRow] {
        do {
            return try await client.query(query, logger: logger).collect()
        } catch {
            throw Self.storeError(error, operation)
        }
    }

    /// Runs `body` in a transaction (`BEGIN` … `COMMIT`, `ROLLBACK` when it throws).
    func transaction<T: Sendable>(
        _ operation: String, _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await body(connection, logger)
            }
        } catch {
            throw Self.storeError(error, operation)
        }
    }

    func decode<Column: PostgresDecodable>(_ row: PostgresRow, as type: Column.Type) throws -> Column {
        do {
            return try row.decode(type)
        } catch {
            throw RoomStoreError(.corrupt, "unreadable row")
        }
    }

    private func decode<each Column: PostgresDecodable>(
        _ row: PostgresRow, as type: (repeat each Column).Type
    ) throws -> (repeat each Column) {
        do {
            return try row.decode(type)
        } catch {
            throw RoomStoreError(.corrupt, "unreadable row")
        }
    }

    /// Maps postgres-nio's errors to ``RoomStoreError``. The detail keeps the error kind,
    /// SQLSTATE and the server's message (which names tables and constraints); never the
    /// server's `detail` field, the query or its bindings, which can hold device IDs.
    private static func storeError(_ error: any Error, _ operation: String) -> any Error {
        switch error {
        case let error as RoomStoreError:
            return error
        case is CancellationError:
            return error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError {
                return storeError(inner, operation)
            }
            return RoomStoreError(.unavailable, "\(operation): transaction failed")
        case let error as PSQLError:
            var detail = "\(operation): \(error.code)"
            if let state = error.serverInfo?[.sqlState] { detail += " SQLSTATE \(state)" }
            if let message = error.serverInfo?[.message] { detail += ": \(message)" }
            return RoomStoreError(.unavailable, detail)
        case is PostgresDecodingError:
            return RoomStoreError(.corrupt, "\(operation): unreadable row")
        default:
            return RoomStoreError(.unavailable, "\(operation): \(type(of: error))")
        }
    }
}
