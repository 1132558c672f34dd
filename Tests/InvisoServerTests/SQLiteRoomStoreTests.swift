import Foundation
import InvisoServer
import Testing

@Suite("SQLiteRoomStore")
struct SQLiteRoomStoreTests {
    /// A fresh directory under the system's temporary directory, removed by `body`'s end.
    private func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("inviso-store-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    @Test("conformance, in memory", arguments: RoomStoreConformance.allCases)
    func inMemory(_ check: RoomStoreConformance) async throws {
        let store = try SQLiteRoomStore.inMemory()
        try await store.migrate()
        try await check.run(store)
    }

    @Test("conformance, in a file whose directory does not exist yet", arguments: RoomStoreConformance.allCases)
    func file(_ check: RoomStoreConformance) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("nested/rooms.sqlite").path
            let store = try SQLiteRoomStore(path: path)
            try await store.migrate()
            try await check.run(store)
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("in-memory stores are separate")
    func inMemoryStoresAreSeparate() async throws {
        let first = try SQLiteRoomStore.inMemory()
        let second = try SQLiteRoomStore.inMemory()
        try await first.migrate()
        try await second.migrate()
        try await first.insertPending(
            RoomStoreConformance.pending("100001", by: "device-a"), now: RoomStoreConformance.t0)
        #expect(try await second.pending(joinID: "100001", now: RoomStoreConformance.t0) == nil)
    }

    @Test("reopening the file keeps the data; migrating again changes nothing")
    func reopenKeepsData() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("rooms.sqlite").path
            let t0 = RoomStoreConformance.t0
            let room: Room
            do {
                let store = try SQLiteRoomStore(path: path)
                try await store.migrate()
                room = try await RoomStoreConformance.makeRoom(
                    store, joinID: "100001", client1: "device-a", client2: "device-b", room: 1
                )
                try await store.insertPending(RoomStoreConformance.pending("100002", by: "device-c"), now: t0)
            }

            let reopened = try SQLiteRoomStore(path: path)
            try await reopened.migrate()
            try await reopened.migrate()
            #expect(try await reopened.room(id: room.roomID) == room)
            #expect(try await reopened.pending(joinID: "100002", now: t0)?.client1 == "device-c")
            #expect(try await reopened.counts(now: t0) == StoreCounts(pendings: 2, rooms: 1))
            await #expect(throws: RoomStoreError.codeTaken) {
                try await reopened.insertPending(RoomStoreConformance.pending("100002", by: "device-d"), now: t0)
            }
        }
    }

    @Test("two stores on one file (two processes) race on one code: one winner")
    func twoStoresOnOneFile() async throws {
        try await withTemporaryDirectory { directory in
            for race in ["accepts", "inserts"] {
                let path = directory.appendingPathComponent("\(race).sqlite").path
                let first = try SQLiteRoomStore(path: path)
                try await first.migrate()
                let second = try SQLiteRoomStore(path: path)
                try await second.migrate()
                if race == "accepts" {
                    try await RoomStoreConformance.racingAccepts([first, second])
                } else {
                    try await RoomStoreConformance.racingInserts([first, second])
                }
            }
        }
    }

    @Test("a path that cannot be a directory is reported as unavailable")
    func unusablePath() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let blocker = directory.appendingPathComponent("file")
            try Data("x".utf8).write(to: blocker)
            #expect(throws: RoomStoreError(.unavailable)) {
                try SQLiteRoomStore(path: blocker.appendingPathComponent("rooms.sqlite").path)
            }
        }
    }
}
