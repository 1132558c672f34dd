public import Foundation

/// Where rooms and pending join codes live: SQLite (``SQLiteRoomStore``, the default) or
/// PostgreSQL (``PostgresRoomStore``, for several server instances).
///
/// Every method is one atomic operation: two servers racing on one code (two `accept`s,
/// an `accept` and a purge) see exactly one winner. Times are passed in (`now`), never
/// read from a clock here, so tests control expiry. Implementations run the same
/// conformance suite (`Tests/InvisoServerTests/RoomStoreConformance.swift`).
public protocol RoomStore: Sendable {
    /// Creates the schema or upgrades it to the newest version (idempotent).
    func migrate() async throws

    /// Stores a new pending code.
    ///
    /// A code is *taken* while a pending code with that join ID has not expired (accepted
    /// or not); an expired one is replaced.
    /// - Throws: ``RoomStoreError/codeTaken`` when the code is taken.
    func insertPending(_ pending: PendingRoom, now: Date) async throws

    /// Turns the live pending code `joinID` into a room with id `roomID`.
    func accept(
        joinID: String, client2: String, client2Token: String?, client2Platform: String?, roomID: String, now: Date
    ) async throws -> AcceptOutcome

    /// The creator's poll: whether its code was accepted. Only `client1` of the code
    /// learns the room id; anyone else gets ``CheckOutcome/notFound``.
    func check(joinID: String, client1: String, now: Date) async throws -> CheckOutcome

    /// The pending code `joinID` if it exists and has not expired.
    func pending(joinID: String, now: Date) async throws -> PendingRoom?

    /// The room with this id, if any.
    func room(id roomID: String) async throws -> Room?

    /// Deletes a room on behalf of one of its members.
    func deleteRoom(id roomID: String, deviceID: String) async throws -> DeleteOutcome

    /// Whether some room names `deviceID` as `client1` or `client2` (an exact match).
    /// Pending codes, accepted or not, do not count: only rooms do.
    func hasRoom(member deviceID: String) async throws -> Bool

    /// Deletes every room and pending code that names one of `deviceIDs` (as `client1` or
    /// `client2`).
    func purge(deviceIDs: [String]) async throws -> PurgeCounts

    /// Counts one failed guess against the live pending code `joinID` and burns (deletes)
    /// the code when the count reaches `limit`. Returns `true` when this call burnt it.
    /// Does nothing (returns `false`) when there is no live code.
    func recordFailedGuess(joinID: String, limit: Int, now: Date) async throws -> Bool

    /// Deletes pending codes that expired at or before `now`; returns how many.
    func deleteExpired(now: Date) async throws -> Int

    /// The numbers of live pending codes and rooms (for metrics).
    func counts(now: Date) async throws -> StoreCounts

    /// Per-source limits kept in this store, shared by every instance that uses it, or
    /// `nil` (the default) for limits kept in each instance's memory.
    func sharedSourceLimits(_ limits: ServerLimits) -> (any SourceLimits)?
}

extension RoomStore {
    /// No shared limits: each instance keeps its own (``MemorySourceLimits``).
    public func sharedSourceLimits(_ limits: ServerLimits) -> (any SourceLimits)? { nil }
}

/// The result of ``RoomStore/accept(joinID:client2:client2Token:client2Platform:roomID:now:)``.
public enum AcceptOutcome: Sendable, Equatable {
    /// The room was made.
    case accepted(Room)
    /// No live pending code has this join ID.
    case notFoundOrExpired
    /// The code was already accepted (by anyone, this device included).
    case alreadyAccepted
}

/// The result of ``RoomStore/check(joinID:client1:now:)``.
public enum CheckOutcome: Sendable, Equatable {
    /// Not accepted yet.
    case pending
    /// Accepted: the room id.
    case accepted(roomID: String)
    /// No live code with this join ID and creator.
    case notFound
}

/// The result of ``RoomStore/deleteRoom(id:deviceID:)``.
public enum DeleteOutcome: Sendable, Equatable {
    /// The room existed and is gone.
    case deleted
    /// There was no such room (deleting is idempotent).
    case notFound
    /// The room exists and `deviceID` is not a member; nothing changed.
    case notMember
}

/// What ``RoomStore/purge(deviceIDs:)`` removed.
public struct PurgeCounts: Sendable, Equatable {
    /// Rooms deleted.
    public var roomsDeleted: Int
    /// Pending codes deleted.
    public var pendingsDeleted: Int
    /// The join codes of the deleted pending codes, sorted: they no longer count against
    /// their creator's live codes.
    public var joinIDs: [String]

    /// Creates counts.
    public init(roomsDeleted: Int, pendingsDeleted: Int, joinIDs: [String] = []) {
        self.roomsDeleted = roomsDeleted
        self.pendingsDeleted = pendingsDeleted
        self.joinIDs = joinIDs
    }
}

/// Live pending codes and rooms.
public struct StoreCounts: Sendable, Equatable {
    /// Pending codes that have not expired (accepted or not).
    public var pendings: Int
    /// Rooms.
    public var rooms: Int

    /// Creates counts.
    public init(pendings: Int, rooms: Int) {
        self.pendings = pendings
        self.rooms = rooms
    }
}
