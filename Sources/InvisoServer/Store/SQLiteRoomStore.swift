public import Foundation
import GRDB

/// A ``RoomStore`` in one SQLite file (GRDB), the default for a single server instance.
///
/// The file is opened as a WAL-mode `DatabasePool`: reads run concurrently, writes run one
/// at a time in `IMMEDIATE` transactions, so every method is one atomic step. Another
/// process writing the same file is waited for (up to 5 seconds) rather than failed.
///
/// Tables: `pendings` (keyed by `join_id`) and `rooms` (keyed by `room_id`); times are
/// integer milliseconds since 1970. Call ``migrate()`` once before use.
public struct SQLiteRoomStore: RoomStore {
    /// The pool (file) or queue (in memory). `DatabaseWriter` is `Sendable`.
    private let writer: any DatabaseWriter

    /// Opens (or creates) the database file at `path`, creating its parent directory when
    /// it is missing.
    ///
    /// - Parameter path: The database file's path.
    /// - Throws: ``RoomStoreError/Code/unavailable`` when the directory or file cannot be
    ///   created or opened.
    public init(path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw RoomStoreError(.unavailable, "cannot create the SQLite database directory \(directory.path)")
        }
        do {
            writer = try DatabasePool(path: path, configuration: Self.configuration())
        } catch {
            throw Self.storeError(error, "opening the SQLite database")
        }
    }

    private init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// A store in a private in-memory database (for tests): each call makes a new, empty one.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` when SQLite cannot open it.
    public static func inMemory() throws -> SQLiteRoomStore {
        do {
            return SQLiteRoomStore(writer: try DatabaseQueue(configuration: configuration()))
        } catch {
            throw storeError(error, "opening an in-memory SQLite database")
        }
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.label = "InvisoRoomStore"
        // Another process holding the write lock is waited for, not reported as an error.
        configuration.busyMode = .timeout(5)
        // Deleted rows are overwritten with zeros, not left in free pages.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        return configuration
    }
}

// MARK: - RoomStore

extension SQLiteRoomStore {
    /// Creates the tables, or upgrades them, through GRDB's `DatabaseMigrator` (applied
    /// migrations are recorded in `grdb_migrations`; running it again does nothing).
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` when a migration fails.
    public func migrate() async throws {
        let migrator = Self.migrator()
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                migrator.asyncMigrate(writer) { result in
                    continuation.resume(with: result.map { _ in () })
                }
            }
        } catch {
            throw Self.storeError(error, "migrating")
        }
    }

    /// Stores a new pending code; an expired code with the same join ID is replaced.
    ///
    /// - Throws: ``RoomStoreError/codeTaken`` when a live code has this join ID;
    ///   ``RoomStoreError/Code/unavailable`` when the database fails.
    public func insertPending(_ pending: PendingRoom, now: Date) async throws {
        try await write("inserting a pending code") { db in
            // One statement: insert, or overwrite the existing row only if it has expired.
            try db.execute(
                sql: """
                    INSERT INTO pendings (join_id, client1, client1_token, client1_platform,
                                          created_at, expires_at, room_id, failed_guesses)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (join_id) DO UPDATE SET
                        client1 = excluded.client1, client1_token = excluded.client1_token,
                        client1_platform = excluded.client1_platform, created_at = excluded.created_at,
                        expires_at = excluded.expires_at, room_id = excluded.room_id,
                        failed_guesses = excluded.failed_guesses
                    WHERE pendings.expires_at <= ?
                    """,
                arguments: [
                    pending.joinID, pending.client1, pending.client1Token, pending.client1Platform,
                    pending.createdAt.millisecondsSince1970, pending.expiresAt.millisecondsSince1970,
                    pending.roomID, pending.failedGuesses, now.millisecondsSince1970,
                ]
            )
            if db.changesCount == 0 { throw RoomStoreError.codeTaken }
        }
    }

    /// Turns the live pending code `joinID` into a room, in one write transaction.
    ///
    /// - Returns: ``AcceptOutcome/accepted(_:)`` with the new room,
    ///   ``AcceptOutcome/alreadyAccepted`` or ``AcceptOutcome/notFoundOrExpired``.
    /// - Throws: ``RoomStoreError/Code/unavailable`` when the database fails (also when
    ///   `roomID` is already in use); ``RoomStoreError/Code/corrupt`` for an unreadable row.
    public func accept(
        joinID: String, client2: String, client2Token: String?, client2Platform: String?, roomID: String, now: Date
    ) async throws -> AcceptOutcome {
        try await write("accepting a code") { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT client1, client1_token, client1_platform, room_id FROM pendings
                        WHERE join_id = ? AND expires_at > ?
                        """,
                    arguments: [joinID, now.millisecondsSince1970]
                )
            else { return .notFoundOrExpired }
            let existingRoomID: String? = try row.decode(forColumn: "room_id")
            if existingRoomID != nil { return .alreadyAccepted }
            let room = Room(
                roomID: roomID, joinID: joinID, client1: try row.decode(forColumn: "client1"), client2: client2,
                client1Token: try row.decode(forColumn: "client1_token"), client2Token: client2Token,
                client1Platform: try row.decode(forColumn: "client1_platform"), client2Platform: client2Platform,
                createdAt: now
            )
            try db.execute(
                sql: """
                    INSERT INTO rooms (room_id, join_id, client1, client2, client1_token, client2_token,
                                       client1_platform, client2_platform, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    room.roomID, room.joinID, room.client1, room.client2, room.client1Token, room.client2Token,
                    room.client1Platform, room.client2Platform, room.createdAt.millisecondsSince1970,
                ]
            )
            try db.execute(sql: "UPDATE pendings SET room_id = ? WHERE join_id = ?", arguments: [roomID, joinID])
            return .accepted(room)
        }
    }

    /// The creator's poll for the live code `joinID`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func check(joinID: String, client1: String, now: Date) async throws -> CheckOutcome {
        try await read("checking a code") { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT room_id FROM pendings WHERE join_id = ? AND client1 = ? AND expires_at > ?",
                    arguments: [joinID, client1, now.millisecondsSince1970]
                )
            else { return .notFound }
            let roomID: String? = try row.decode(forColumn: "room_id")
            return roomID.map { .accepted(roomID: $0) } ?? .pending
        }
    }

    /// The live pending code `joinID`, or `nil`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func pending(joinID: String, now: Date) async throws -> PendingRoom? {
        try await read("reading a pending code") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT join_id, client1, client1_token, client1_platform, created_at, expires_at,
                           room_id, failed_guesses
                    FROM pendings WHERE join_id = ? AND expires_at > ?
                    """,
                arguments: [joinID, now.millisecondsSince1970]
            ).map(Self.pendingRoom(from:))
        }
    }

    /// The room `roomID`, or `nil`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func room(id roomID: String) async throws -> Room? {
        try await read("reading a room") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT room_id, join_id, client1, client2, client1_token, client2_token,
                           client1_platform, client2_platform, created_at
                    FROM rooms WHERE room_id = ?
                    """,
                arguments: [roomID]
            ).map(Self.room(from:))
        }
    }

    /// Deletes the room `roomID` if `deviceID` is one of its members.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func deleteRoom(id roomID: String, deviceID: String) async throws -> DeleteOutcome {
        let outcome = try await write("deleting a room") { db -> DeleteOutcome in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT client1, client2 FROM rooms WHERE room_id = ?", arguments: [roomID]
                )
            else { return .notFound }
            let client1: String = try row.decode(forColumn: "client1")
            let client2: String = try row.decode(forColumn: "client2")
            guard deviceID == client1 || deviceID == client2 else { return .notMember }
            try db.execute(sql: "DELETE FROM rooms WHERE room_id = ?", arguments: [roomID])
            return .deleted
        }
        if outcome == .deleted { await checkpoint() }
        return outcome
    }

    /// Whether a room names `deviceID` as `client1` or `client2` (one read, using the
    /// `rooms_client1` and `rooms_client2` indexes).
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func hasRoom(member deviceID: String) async throws -> Bool {
        try await read("looking up a member's rooms") { db in
            try Bool.fetchOne(
                db,
                sql: "SELECT EXISTS (SELECT 1 FROM rooms WHERE client1 = ? OR client2 = ?)",
                arguments: [deviceID, deviceID]
            ) ?? false
        }
    }

    /// Deletes the rooms naming one of `deviceIDs`, the pending codes they created, and the
    /// pending codes of the deleted rooms, in one write transaction.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func purge(deviceIDs: [String]) async throws -> PurgeCounts {
        if deviceIDs.isEmpty { return PurgeCounts(roomsDeleted: 0, pendingsDeleted: 0) }
        let counts = try await write("purging devices") { db in
            let rooms = Table("rooms")
            let pendings = Table("pendings")
            let roomID = Column("room_id")
            let client1 = Column("client1")
            let client2 = Column("client2")
            let roomIDs = try String.fetchAll(
                db,
                rooms.select(roomID).filter(deviceIDs.contains(client1) || deviceIDs.contains(client2))
            )
            let gone = pendings.filter(deviceIDs.contains(client1) || roomIDs.contains(roomID))
            let joinIDs = try String.fetchAll(db, gone.select(Column("join_id")))
            let pendingsDeleted = try gone.deleteAll(db)
            let roomsDeleted = try rooms.filter(roomIDs.contains(roomID)).deleteAll(db)
            return PurgeCounts(roomsDeleted: roomsDeleted, pendingsDeleted: pendingsDeleted, joinIDs: joinIDs.sorted())
        }
        if counts.roomsDeleted + counts.pendingsDeleted > 0 { await checkpoint() }
        return counts
    }

    /// Counts a failed guess against the live code `joinID`; deletes the code and returns
    /// `true` when the count reaches `limit`.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable`` or ``RoomStoreError/Code/corrupt``.
    public func recordFailedGuess(joinID: String, limit: Int, now: Date) async throws -> Bool {
        let burnt = try await write("recording a failed guess") { db -> Bool in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT failed_guesses FROM pendings WHERE join_id = ? AND expires_at > ?",
                    arguments: [joinID, now.millisecondsSince1970]
                )
            else { return false }
            let guesses: Int = try row.decode(forColumn: "failed_guesses")
            let updated = guesses + 1
            if updated >= limit {
                try db.execute(sql: "DELETE FROM pendings WHERE join_id = ?", arguments: [joinID])
                return true
            }
            try db.execute(
                sql: "UPDATE pendings SET failed_guesses = ? WHERE join_id = ?", arguments: [updated, joinID]
            )
            return false
        }
        if burnt { await checkpoint() }
        return burnt
    }

    /// Deletes the pending codes that expired at or before `now`.
    ///
    /// - Returns: How many were deleted.
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func deleteExpired(now: Date) async throws -> Int {
        let deleted = try await write("deleting expired codes") { db in
            try db.execute(sql: "DELETE FROM pendings WHERE expires_at <= ?", arguments: [now.millisecondsSince1970])
            return db.changesCount
        }
        if deleted > 0 { await checkpoint() }
        return deleted
    }

    /// Live pending codes and all rooms.
    ///
    /// - Throws: ``RoomStoreError/Code/unavailable``.
    public func counts(now: Date) async throws -> StoreCounts {
        try await read("counting") { db in
            let pendings =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM pendings WHERE expires_at > ?",
                    arguments: [now.millisecondsSince1970]
                ) ?? 0
            let rooms = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rooms") ?? 0
            return StoreCounts(pendings: pendings, rooms: rooms)
        }
    }
}

// MARK: - Schema

extension SQLiteRoomStore {
    private static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE pendings (
                        join_id TEXT PRIMARY KEY NOT NULL,
                        client1 TEXT NOT NULL,
                        client1_token TEXT,
                        client1_platform TEXT,
                        created_at INTEGER NOT NULL,
                        expires_at INTEGER NOT NULL,
                        room_id TEXT,
                        failed_guesses INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX pendings_client1 ON pendings (client1);
                    CREATE INDEX pendings_expires_at ON pendings (expires_at);
                    CREATE INDEX pendings_room_id ON pendings (room_id);
                    CREATE TABLE rooms (
                        room_id TEXT PRIMARY KEY NOT NULL,
                        join_id TEXT NOT NULL,
                        client1 TEXT NOT NULL,
                        client2 TEXT NOT NULL,
                        client1_token TEXT,
                        client2_token TEXT,
                        client1_platform TEXT,
                        client2_platform TEXT,
                        created_at INTEGER NOT NULL
                    );
                    CREATE INDEX rooms_client1 ON rooms (client1);
                    CREATE INDEX rooms_client2 ON rooms (client2);
                    """
            )
        }
        // Device IDs become digests and push tokens go (see DeviceDigest): rows written by
        // earlier versions are rewritten, then the freed pages are zeroed.
        migrator.registerMigration("v2-device-digests") { db in
            let digest = DatabaseFunction("inviso_device_digest", argumentCount: 1, pure: true) { values in
                String.fromDatabaseValue(values[0]).map(DeviceDigest.of)
            }
            db.add(function: digest)
            let prefix = "\(DeviceDigest.prefix)%"
            try db.execute(
                sql: """
                    UPDATE pendings SET client1 = inviso_device_digest(client1) WHERE client1 NOT LIKE ?;
                    UPDATE rooms SET client1 = inviso_device_digest(client1) WHERE client1 NOT LIKE ?;
                    UPDATE rooms SET client2 = inviso_device_digest(client2) WHERE client2 NOT LIKE ?;
                    UPDATE pendings SET client1_token = NULL;
                    UPDATE rooms SET client1_token = NULL, client2_token = NULL;
                    """,
                arguments: [prefix, prefix, prefix])
            db.remove(function: digest)
        }
        return migrator
    }
}

// MARK: - Rows and errors

extension SQLiteRoomStore {
    private static func pendingRoom(from row: Row) throws -> PendingRoom {
        PendingRoom(
            joinID: try row.decode(forColumn: "join_id"),
            client1: try row.decode(forColumn: "client1"),
            client1Token: try row.decode(forColumn: "client1_token"),
            client1Platform: try row.decode(forColumn: "client1_platform"),
            createdAt: Date(millisecondsSince1970: try row.decode(forColumn: "created_at")),
            expiresAt: Date(millisecondsSince1970: try row.decode(forColumn: "expires_at")),
            roomID: try row.decode(forColumn: "room_id"),
            failedGuesses: try row.decode(forColumn: "failed_guesses")
        )
    }

    private static func room(from row: Row) throws -> Room {
        Room(
            roomID: try row.decode(forColumn: "room_id"),
            joinID: try row.decode(forColumn: "join_id"),
            client1: try row.decode(forColumn: "client1"),
            client2: try row.decode(forColumn: "client2"),
            client1Token: try row.decode(forColumn: "client1_token"),
            client2Token: try row.decode(forColumn: "client2_token"),
            client1Platform: try row.decode(forColumn: "client1_platform"),
            client2Platform: try row.decode(forColumn: "client2_platform"),
            createdAt: Date(millisecondsSince1970: try row.decode(forColumn: "created_at"))
        )
    }

    private func write<T: Sendable>(
        _ operation: String, _ body: @Sendable (Database) throws -> T
    ) async throws -> T {
        do {
            return try await writer.write(body)
        } catch {
            throw Self.storeError(error, operation)
        }
    }

    /// After a deletion: copies the write-ahead log into the database and truncates it, so
    /// the deleted rows' old pages do not linger in `rooms.sqlite-wal` (with
    /// `secure_delete` they are already zeroed in the database). Best effort: a reader in
    /// the middle of a transaction can keep part of the log until the next checkpoint.
    private func checkpoint() async {
        _ = try? await writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    private func read<T: Sendable>(
        _ operation: String, _ body: @Sendable (Database) throws -> T
    ) async throws -> T {
        do {
            return try await writer.read(body)
        } catch {
            throw Self.storeError(error, operation)
        }
    }

    /// Maps GRDB's errors to ``RoomStoreError``. The detail names the operation and
    /// SQLite's result code and message (which name tables and constraints, never values):
    /// GRDB's own descriptions can include the row or the statement's arguments.
    private static func storeError(_ error: any Error, _ operation: String) -> any Error {
        switch error {
        case let error as RoomStoreError:
            return error
        case is CancellationError:
            return error
        case let error as DatabaseError:
            return RoomStoreError(
                .unavailable, "\(operation): SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "")"
            )
        case is RowDecodingError:
            return RoomStoreError(.corrupt, "\(operation): unreadable row")
        default:
            return RoomStoreError(.unavailable, "\(operation): \(type(of: error))")
        }
    }
}
