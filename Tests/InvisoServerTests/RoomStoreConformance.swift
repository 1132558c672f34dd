import Foundation
import InvisoServer
import Testing

/// The rules every ``RoomStore`` follows, written once and run against each backend
/// (`SQLiteRoomStoreTests`, `PostgresRoomStoreTests`).
///
/// Each check gets a freshly migrated, empty store of its own (it reads global counts).
/// Times are fixed dates, never a clock.
enum RoomStoreConformance: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case insertThenTaken
    case expiredCodeIsReplaced
    case acceptOutcomes
    case concurrentAccepts
    case concurrentInserts
    case checkBeforeAndAfterAccept
    case deleteRoomOutcomes
    case hasRoomMembers
    case purgeCounts
    case failedGuessesBurnAtLimit
    case deleteExpiredCounts
    case countsLiveOnly
    case datesRoundTrip
    case migrateIsIdempotent

    var testDescription: String { rawValue }

    /// Runs this check against `store` (migrated and empty).
    func run(_ store: any RoomStore) async throws {
        switch self {
        case .insertThenTaken: try await Self.insertThenTaken(store)
        case .expiredCodeIsReplaced: try await Self.expiredCodeIsReplaced(store)
        case .acceptOutcomes: try await Self.acceptOutcomes(store)
        case .concurrentAccepts: try await Self.racingAccepts([store])
        case .concurrentInserts: try await Self.racingInserts([store])
        case .checkBeforeAndAfterAccept: try await Self.checkBeforeAndAfterAccept(store)
        case .deleteRoomOutcomes: try await Self.deleteRoomOutcomes(store)
        case .hasRoomMembers: try await Self.hasRoomMembers(store)
        case .purgeCounts: try await Self.purgeCounts(store)
        case .failedGuessesBurnAtLimit: try await Self.failedGuessesBurnAtLimit(store)
        case .deleteExpiredCounts: try await Self.deleteExpiredCounts(store)
        case .countsLiveOnly: try await Self.countsLiveOnly(store)
        case .datesRoundTrip: try await Self.datesRoundTrip(store)
        case .migrateIsIdempotent: try await Self.migrateIsIdempotent(store)
        }
    }
}

// MARK: - Fixtures

extension RoomStoreConformance {
    /// The fixed "now" of every check.
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// `seconds` after ``t0``.
    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// A 48-hex-digit room id derived from `n`.
    static func roomID(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 48 - hex.count) + hex
    }

    /// A pending code created at ``t0`` by `client1`, live for `lifetime` seconds.
    static func pending(
        _ joinID: String, by client1: String, lifetime: Double = 600, token: String? = nil, platform: String? = nil
    ) -> PendingRoom {
        PendingRoom(
            joinID: joinID, client1: client1, client1Token: token, client1Platform: platform, createdAt: t0,
            expiresAt: at(lifetime)
        )
    }

    /// Inserts a code and accepts it by `client2`; returns the room.
    @discardableResult
    static func makeRoom(
        _ store: any RoomStore, joinID: String, client1: String, client2: String, room: Int, lifetime: Double = 600
    ) async throws -> Room {
        try await store.insertPending(pending(joinID, by: client1, lifetime: lifetime), now: t0)
        let outcome = try await store.accept(
            joinID: joinID, client2: client2, client2Token: nil, client2Platform: nil, roomID: roomID(room), now: at(1)
        )
        guard case .accepted(let made) = outcome else {
            Issue.record("setting up room \(room): accept gave \(outcome)")
            throw SetupFailed()
        }
        return made
    }

    struct SetupFailed: Error {}
}

// MARK: - Checks

extension RoomStoreConformance {
    static func insertThenTaken(_ store: any RoomStore) async throws {
        let code = pending("100001", by: "device-a", token: "token-a", platform: "ios")
        try await store.insertPending(code, now: t0)
        #expect(try await store.pending(joinID: "100001", now: t0) == code)

        // Live, not accepted: taken, and the stored code is unchanged.
        await #expect(throws: RoomStoreError.codeTaken) {
            try await store.insertPending(pending("100001", by: "device-b"), now: at(10))
        }
        #expect(try await store.pending(joinID: "100001", now: at(10)) == code)

        // Live and accepted: still taken.
        _ = try await store.accept(
            joinID: "100001", client2: "device-c", client2Token: nil, client2Platform: nil, roomID: roomID(1),
            now: at(20)
        )
        await #expect(throws: RoomStoreError.codeTaken) {
            try await store.insertPending(pending("100001", by: "device-b"), now: at(599.999))
        }

        // Another code is free; live means expires_at > now, to the millisecond.
        try await store.insertPending(pending("100002", by: "device-b", lifetime: 30), now: t0)
        #expect(try await store.pending(joinID: "100002", now: at(29.999)) != nil)
        #expect(try await store.pending(joinID: "100002", now: at(30)) == nil)
        #expect(try await store.pending(joinID: "999999", now: t0) == nil)
    }

    static func expiredCodeIsReplaced(_ store: any RoomStore) async throws {
        let room = try await makeRoom(
            store, joinID: "200001", client1: "device-a", client2: "device-b", room: 1, lifetime: 60)
        #expect(try await store.recordFailedGuess(joinID: "200001", limit: 5, now: at(2)) == false)

        // At the expiry instant the code is free again; the new row starts clean.
        let replacement = PendingRoom(
            joinID: "200001", client1: "device-c", client1Token: "token-c", createdAt: at(60), expiresAt: at(120)
        )
        try await store.insertPending(replacement, now: at(60))
        #expect(try await store.pending(joinID: "200001", now: at(60)) == replacement)
        #expect(try await store.check(joinID: "200001", client1: "device-c", now: at(61)) == .pending)
        #expect(try await store.check(joinID: "200001", client1: "device-a", now: at(61)) == .notFound)

        // Rooms are not tied to their code's lifetime.
        #expect(try await store.room(id: room.roomID) == room)
        let second = try await store.accept(
            joinID: "200001", client2: "device-d", client2Token: nil, client2Platform: nil, roomID: roomID(2),
            now: at(62)
        )
        guard case .accepted(let secondRoom) = second else {
            Issue.record("accepting the replacement gave \(second)")
            return
        }
        #expect(secondRoom.client1 == "device-c")
        #expect(try await store.counts(now: at(62)) == StoreCounts(pendings: 1, rooms: 2))
    }

    static func acceptOutcomes(_ store: any RoomStore) async throws {
        #expect(
            try await store.accept(
                joinID: "300001", client2: "device-b", client2Token: nil, client2Platform: nil, roomID: roomID(9),
                now: t0
            ) == .notFoundOrExpired
        )

        try await store.insertPending(pending("300001", by: "device-a", token: "token-a", platform: "ios"), now: t0)
        let outcome = try await store.accept(
            joinID: "300001", client2: "device-b", client2Token: "token-b", client2Platform: "android",
            roomID: roomID(1), now: at(5)
        )
        let expected = Room(
            roomID: roomID(1), joinID: "300001", client1: "device-a", client2: "device-b", client1Token: "token-a",
            client2Token: "token-b", client1Platform: "ios", client2Platform: "android", createdAt: at(5)
        )
        #expect(outcome == .accepted(expected))
        #expect(try await store.room(id: roomID(1)) == expected)
        #expect(try await store.pending(joinID: "300001", now: at(5))?.roomID == roomID(1))

        // Accepting again, by anyone, is refused and makes no room.
        for client in ["device-b", "device-c", "device-a"] {
            #expect(
                try await store.accept(
                    joinID: "300001", client2: client, client2Token: nil, client2Platform: nil, roomID: roomID(2),
                    now: at(6)
                ) == .alreadyAccepted
            )
        }
        #expect(try await store.room(id: roomID(2)) == nil)

        // Expired (expires_at <= now): not found, no room.
        try await store.insertPending(pending("300002", by: "device-d", lifetime: 30), now: t0)
        #expect(
            try await store.accept(
                joinID: "300002", client2: "device-e", client2Token: nil, client2Platform: nil, roomID: roomID(3),
                now: at(30)
            ) == .notFoundOrExpired
        )
        #expect(try await store.room(id: roomID(3)) == nil)
        #expect(try await store.counts(now: t0) == StoreCounts(pendings: 2, rooms: 1))
    }

    /// Twenty accepts of one code, spread over `stores` (one store, or several instances
    /// on one database): exactly one makes a room.
    static func racingAccepts(_ stores: [any RoomStore], racers: Int = 20) async throws {
        try await stores[0].insertPending(pending("400001", by: "device-a"), now: t0)
        let outcomes = try await withThrowingTaskGroup(of: AcceptOutcome.self) { group in
            for racer in 0..<racers {
                let store = stores[racer % stores.count]
                group.addTask {
                    try await store.accept(
                        joinID: "400001", client2: "racer-\(racer)", client2Token: nil, client2Platform: nil,
                        roomID: roomID(100 + racer), now: at(1)
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let winners = outcomes.compactMap { outcome -> Room? in
            if case .accepted(let room) = outcome { return room }
            return nil
        }
        #expect(winners.count == 1)
        #expect(outcomes.filter { $0 == .alreadyAccepted }.count == racers - 1)
        guard let winner = winners.first else { return }
        #expect(try await stores[0].room(id: winner.roomID) == winner)
        #expect(try await stores[0].pending(joinID: "400001", now: at(1))?.roomID == winner.roomID)
        #expect(try await stores[0].counts(now: at(1)) == StoreCounts(pendings: 1, rooms: 1))
    }

    /// Twenty inserts of one code, spread over `stores`: exactly one is stored.
    static func racingInserts(_ stores: [any RoomStore], racers: Int = 20) async throws {
        let results = try await withThrowingTaskGroup(of: String?.self) { group in
            for racer in 0..<racers {
                let store = stores[racer % stores.count]
                group.addTask {
                    do {
                        try await store.insertPending(pending("500001", by: "racer-\(racer)"), now: t0)
                        return "racer-\(racer)"
                    } catch let error as RoomStoreError where error.code == .codeTaken {
                        return nil
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let winners = results.compactMap { $0 }
        #expect(winners.count == 1)
        #expect(try await stores[0].pending(joinID: "500001", now: t0)?.client1 == winners.first)
        #expect(try await stores[0].counts(now: t0) == StoreCounts(pendings: 1, rooms: 0))
    }

    static func checkBeforeAndAfterAccept(_ store: any RoomStore) async throws {
        try await store.insertPending(pending("600001", by: "device-a", lifetime: 60), now: t0)
        #expect(try await store.check(joinID: "600001", client1: "device-a", now: at(1)) == .pending)
        #expect(try await store.check(joinID: "600001", client1: "device-b", now: at(1)) == .notFound)
        #expect(try await store.check(joinID: "600002", client1: "device-a", now: at(1)) == .notFound)

        _ = try await store.accept(
            joinID: "600001", client2: "device-b", client2Token: nil, client2Platform: nil, roomID: roomID(1),
            now: at(2)
        )
        // Only the creator learns the room id, as often as it asks, until the code expires.
        for second in [3.0, 4, 59.999] {
            #expect(
                try await store.check(joinID: "600001", client1: "device-a", now: at(second))
                    == .accepted(roomID: roomID(1))
            )
        }
        #expect(try await store.check(joinID: "600001", client1: "device-b", now: at(3)) == .notFound)
        #expect(try await store.check(joinID: "600001", client1: "device-a", now: at(60)) == .notFound)
    }

    static func deleteRoomOutcomes(_ store: any RoomStore) async throws {
        let room = try await makeRoom(store, joinID: "700001", client1: "device-a", client2: "device-b", room: 1)
        let other = try await makeRoom(store, joinID: "700002", client1: "device-c", client2: "device-d", room: 2)

        #expect(try await store.deleteRoom(id: roomID(99), deviceID: "device-a") == .notFound)
        #expect(try await store.deleteRoom(id: room.roomID, deviceID: "device-c") == .notMember)
        #expect(try await store.room(id: room.roomID) == room)

        #expect(try await store.deleteRoom(id: room.roomID, deviceID: "device-b") == .deleted)
        #expect(try await store.room(id: room.roomID) == nil)
        #expect(try await store.deleteRoom(id: room.roomID, deviceID: "device-b") == .notFound)

        #expect(try await store.deleteRoom(id: other.roomID, deviceID: "device-c") == .deleted)
        #expect(try await store.counts(now: at(2)).rooms == 0)
    }

    static func hasRoomMembers(_ store: any RoomStore) async throws {
        #expect(try await store.hasRoom(member: "device-a") == false)

        // Rooms (a, b) and (c, a); an open code by e and one that expired unaccepted by f.
        let first = try await makeRoom(store, joinID: "150001", client1: "device-a", client2: "device-b", room: 1)
        let second = try await makeRoom(store, joinID: "150002", client1: "device-c", client2: "device-a", room: 2)
        try await store.insertPending(pending("150003", by: "device-e"), now: t0)
        try await store.insertPending(pending("150004", by: "device-f", lifetime: 1), now: t0)

        for member in ["device-a", "device-b", "device-c"] {
            #expect(try await store.hasRoom(member: member), "\(member) is in a room")
        }
        // Codes are not rooms; the match is exact (no case folding, no prefix, no pattern).
        for outsider in ["device-e", "device-f", "device-unknown", "DEVICE-A", "device-", "device-%", "device-_", ""] {
            #expect(try await store.hasRoom(member: outsider) == false, "\(outsider) is in no room")
        }

        // Membership ends with the room.
        #expect(try await store.deleteRoom(id: first.roomID, deviceID: "device-b") == .deleted)
        #expect(try await store.hasRoom(member: "device-b") == false)
        #expect(try await store.hasRoom(member: "device-a"))
        #expect(try await store.deleteRoom(id: second.roomID, deviceID: "device-c") == .deleted)
        #expect(try await store.hasRoom(member: "device-a") == false)
        #expect(try await store.hasRoom(member: "device-c") == false)

        // And with a purge of either member.
        try await makeRoom(store, joinID: "150005", client1: "device-g", client2: "device-h", room: 3)
        #expect(try await store.hasRoom(member: "device-g"))
        _ = try await store.purge(deviceIDs: ["device-h"])
        #expect(try await store.hasRoom(member: "device-g") == false)
    }

    static func purgeCounts(_ store: any RoomStore) async throws {
        // Rooms: (a, b), (c, a), (d, e), (g, h); open codes by a and f.
        try await makeRoom(store, joinID: "800001", client1: "device-a", client2: "device-b", room: 1)
        try await makeRoom(store, joinID: "800002", client1: "device-c", client2: "device-a", room: 2)
        let kept = try await makeRoom(store, joinID: "800003", client1: "device-d", client2: "device-e", room: 3)
        try await makeRoom(store, joinID: "800004", client1: "device-g", client2: "device-h", room: 4)
        try await store.insertPending(pending("800005", by: "device-a"), now: t0)
        try await store.insertPending(pending("800006", by: "device-f"), now: t0)
        #expect(try await store.counts(now: at(2)) == StoreCounts(pendings: 6, rooms: 4))

        #expect(try await store.purge(deviceIDs: []) == PurgeCounts(roomsDeleted: 0, pendingsDeleted: 0))
        #expect(try await store.counts(now: at(2)) == StoreCounts(pendings: 6, rooms: 4))

        // One device (the legacy single-ID form): both its rooms, its own open code, the
        // codes of both rooms (800002 was created by c, but its room is gone).
        #expect(
            try await store.purge(deviceIDs: ["device-a"])
                == PurgeCounts(roomsDeleted: 2, pendingsDeleted: 3, joinIDs: ["800001", "800002", "800005"]))
        #expect(try await store.room(id: roomID(1)) == nil)
        #expect(try await store.room(id: roomID(2)) == nil)
        #expect(try await store.pending(joinID: "800002", now: at(2)) == nil)
        #expect(try await store.room(id: roomID(3)) == kept)

        // Several devices, one of them unknown, both members of one room (counted once).
        #expect(
            try await store.purge(deviceIDs: ["device-g", "device-h", "device-f", "device-unknown"])
                == PurgeCounts(roomsDeleted: 1, pendingsDeleted: 2, joinIDs: ["800004", "800006"])
        )
        #expect(try await store.counts(now: at(2)) == StoreCounts(pendings: 1, rooms: 1))

        // A joiner's ID removes its room and that room's code.
        #expect(try await store.purge(deviceIDs: ["device-e"]) == PurgeCounts(roomsDeleted: 1, pendingsDeleted: 1, joinIDs: ["800003"]))
        #expect(try await store.counts(now: at(2)) == StoreCounts(pendings: 0, rooms: 0))
        #expect(try await store.purge(deviceIDs: ["device-e"]) == PurgeCounts(roomsDeleted: 0, pendingsDeleted: 0))
    }

    static func failedGuessesBurnAtLimit(_ store: any RoomStore) async throws {
        try await store.insertPending(pending("900001", by: "device-a"), now: t0)
        #expect(try await store.recordFailedGuess(joinID: "900001", limit: 3, now: at(1)) == false)
        #expect(try await store.pending(joinID: "900001", now: at(1))?.failedGuesses == 1)
        #expect(try await store.recordFailedGuess(joinID: "900001", limit: 3, now: at(2)) == false)
        #expect(try await store.pending(joinID: "900001", now: at(2))?.failedGuesses == 2)
        #expect(try await store.recordFailedGuess(joinID: "900001", limit: 3, now: at(3)) == true)
        #expect(try await store.pending(joinID: "900001", now: at(3)) == nil)
        #expect(try await store.check(joinID: "900001", client1: "device-a", now: at(3)) == .notFound)
        #expect(try await store.recordFailedGuess(joinID: "900001", limit: 3, now: at(4)) == false)

        // Unknown and expired codes: nothing happens.
        #expect(try await store.recordFailedGuess(joinID: "900002", limit: 3, now: at(4)) == false)
        try await store.insertPending(pending("900003", by: "device-b", lifetime: 10), now: t0)
        #expect(try await store.recordFailedGuess(joinID: "900003", limit: 1, now: at(10)) == false)
        #expect(try await store.pending(joinID: "900003", now: at(9))?.failedGuesses == 0)

        // A burnt code is free for a new one.
        try await store.insertPending(pending("900001", by: "device-c"), now: at(5))
        #expect(try await store.pending(joinID: "900001", now: at(5))?.failedGuesses == 0)
    }

    static func deleteExpiredCounts(_ store: any RoomStore) async throws {
        let room = try await makeRoom(
            store, joinID: "110001", client1: "device-a", client2: "device-b", room: 1, lifetime: 10)
        try await store.insertPending(pending("110002", by: "device-c", lifetime: 20), now: t0)
        try await store.insertPending(pending("110003", by: "device-d", lifetime: 30), now: t0)

        #expect(try await store.deleteExpired(now: at(5)) == 0)
        #expect(try await store.deleteExpired(now: at(20)) == 2)  // expires_at <= now
        #expect(try await store.deleteExpired(now: at(20)) == 0)
        #expect(try await store.pending(joinID: "110003", now: at(20)) != nil)
        #expect(try await store.room(id: room.roomID) == room)
        #expect(try await store.deleteExpired(now: at(1_000_000)) == 1)
        #expect(try await store.counts(now: t0) == StoreCounts(pendings: 0, rooms: 1))
    }

    static func countsLiveOnly(_ store: any RoomStore) async throws {
        #expect(try await store.counts(now: t0) == StoreCounts(pendings: 0, rooms: 0))
        try await makeRoom(store, joinID: "120001", client1: "device-a", client2: "device-b", room: 1, lifetime: 10)
        try await store.insertPending(pending("120002", by: "device-c", lifetime: 20), now: t0)
        try await store.insertPending(pending("120003", by: "device-d", lifetime: 30), now: t0)

        #expect(try await store.counts(now: at(1)) == StoreCounts(pendings: 3, rooms: 1))
        // Expired rows that are not deleted yet are not counted; accepted live ones are.
        #expect(try await store.counts(now: at(10)) == StoreCounts(pendings: 2, rooms: 1))
        #expect(try await store.counts(now: at(25)) == StoreCounts(pendings: 1, rooms: 1))
        #expect(try await store.counts(now: at(30)) == StoreCounts(pendings: 0, rooms: 1))
    }

    static func datesRoundTrip(_ store: any RoomStore) async throws {
        let cases: [(created: Double, expires: Double)] = [
            (1_800_000_000.123, 1_800_000_600.456),
            (1_000_000_000.001, 4_102_444_800.999),  // 2001 … 2100
            (0.5, 1_800_000_000.002),
        ]
        for (index, times) in cases.enumerated() {
            let code = PendingRoom(
                joinID: "13000\(index)", client1: "device-\(index)", client1Token: "tök€n ✓", client1Platform: "ios",
                createdAt: Date(timeIntervalSince1970: times.created),
                expiresAt: Date(timeIntervalSince1970: times.expires)
            )
            try await store.insertPending(code, now: code.createdAt)
            let stored = try await store.pending(joinID: code.joinID, now: code.createdAt)
            #expect(stored == code)
            #expect(stored?.createdAt.timeIntervalSince1970 == times.created)
            #expect(stored?.expiresAt.timeIntervalSince1970 == times.expires)
        }

        let acceptedAt = Date(timeIntervalSince1970: 1_800_000_001.789)
        let outcome = try await store.accept(
            joinID: "130000", client2: "device-z", client2Token: nil, client2Platform: nil, roomID: roomID(1),
            now: acceptedAt
        )
        guard case .accepted(let room) = outcome else {
            Issue.record("accept gave \(outcome)")
            return
        }
        let stored = try await store.room(id: roomID(1))
        #expect(stored == room)
        #expect(stored?.createdAt == acceptedAt)
        #expect(stored?.client1Token == "tök€n ✓")
        #expect(stored?.client2Token == nil)
        #expect(stored?.client2Platform == nil)
    }

    static func migrateIsIdempotent(_ store: any RoomStore) async throws {
        let room = try await makeRoom(store, joinID: "140001", client1: "device-a", client2: "device-b", room: 1)
        try await store.migrate()
        try await store.migrate()
        #expect(try await store.room(id: room.roomID) == room)
        #expect(
            try await store.check(joinID: "140001", client1: "device-a", now: at(2)) == .accepted(roomID: room.roomID))
    }
}
