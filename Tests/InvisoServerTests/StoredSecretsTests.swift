import Foundation
import GRDB
@testable import InvisoServer
import InvisoWire
import Testing

/// Device IDs (bearer secrets) and push tokens never reach the server's files: digests
/// are stored instead of device IDs, tokens not at all, deleted rows are zeroed and the
/// write-ahead log is truncated after deletions (issue 16, LOW 8).
@Suite("Stored secrets")
struct StoredSecretsTests {
    static let secrets = ["DEVICE-CREATOR-5f3a9c", "DEVICE-JOINER-77b2e1", "TOKEN-APNS-c0ffee42", "TOKEN-FCM-deadbeef"]

    /// Every file of the database (`rooms.sqlite`, `-wal`, `-shm`), concatenated.
    static func databaseBytes(_ directory: URL) throws -> [UInt8] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().flatMap { name in
            [UInt8]((try? Data(contentsOf: directory.appendingPathComponent(name))) ?? Data())
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        haystack.firstRange(of: Array(needle.utf8)) != nil
    }

    @Test("device IDs and push tokens are not in rooms.sqlite or its WAL, while rooms live and after purge")
    func noSecretsOnDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-secrets-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteRoomStore(path: directory.appendingPathComponent("rooms.sqlite").path)
        try await TestServer.with(store: store) { server, _ async throws in
            let (creator, joiner, apns, fcm) = (Self.secrets[0], Self.secrets[1], Self.secrets[2], Self.secrets[3])
            let created = try await server.post(
                "/api/rooms", #"{"client1":"\#(creator)","client1_token":"\#(apns)","platform":"ios","expiresInSeconds":600}"#)
            let code = try #require(created.json?["joinid"]?.stringValue)
            let accepted = try await server.post(
                "/api/rooms/accept", #"{"joinid":"\#(code)","client2":"\#(joiner)","client2_token":"\#(fcm)"}"#)
            let roomID = try #require(accepted.json?["roomid"]?.stringValue)
            // The server still recognizes both members by their IDs…
            #expect(try await server.post("/api/rooms/check", #"{"joinid":"\#(code)","client1":"\#(creator)"}"#).status == 200)
            let socket = try await RawWebSocket.connect(port: server.port)
            try await socket.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"\#(joiner)"}"#)
            #expect(try await socket.nextText().contains(#""isInitiator":false"#))
            await socket.close()
            // … but no file holds them.
            var bytes = try Self.databaseBytes(directory)
            #expect(!bytes.isEmpty)
            for secret in Self.secrets { #expect(!Self.contains(bytes, secret), "\(secret) on disk while live") }
            #expect(Self.contains(bytes, DeviceDigest.of(creator)))
            // After a purge, not even the digests are left.
            #expect(try await server.post("/api/user/purge", #"{"deviceIds":["\#(creator)"]}"#).json?["roomsDeleted"]?.integerValue == 1)
            bytes = try Self.databaseBytes(directory)
            #expect(!Self.contains(bytes, DeviceDigest.of(creator)), "digest left after purge")
            #expect(!Self.contains(bytes, roomID), "room id left after purge")
        }
    }

    @Test("a database written by the previous version is migrated: IDs become digests, tokens go, rooms still work")
    func migratesOldRows() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-migrate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("rooms.sqlite").path
        // The version-1 schema and rows as the previous server wrote them.
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    CREATE TABLE pendings (join_id TEXT PRIMARY KEY NOT NULL, client1 TEXT NOT NULL, client1_token TEXT,
                        client1_platform TEXT, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, room_id TEXT,
                        failed_guesses INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE rooms (room_id TEXT PRIMARY KEY NOT NULL, join_id TEXT NOT NULL, client1 TEXT NOT NULL,
                        client2 TEXT NOT NULL, client1_token TEXT, client2_token TEXT, client1_platform TEXT,
                        client2_platform TEXT, created_at INTEGER NOT NULL);
                    INSERT INTO rooms VALUES ('r-old', '111222', 'old-creator', 'old-joiner', 'TOKEN-OLD-1', 'TOKEN-OLD-2', 'ios', 'ios', 0);
                    INSERT INTO pendings VALUES ('333444', 'old-waiting', 'TOKEN-OLD-3', 'ios', 0, 99999999999999, NULL, 0);
                    """)
        }
        try old.close()
        let store = try SQLiteRoomStore(path: path)
        try await store.migrate()
        let room = try #require(try await store.room(id: "r-old"))
        #expect(room.client1 == DeviceDigest.of("old-creator") && room.client2 == DeviceDigest.of("old-joiner"))
        #expect(room.client1Token == nil && room.client2Token == nil)
        #expect(try await store.pending(joinID: "333444", now: Date())?.client1 == DeviceDigest.of("old-waiting"))
        try await store.migrate()  // idempotent: digests are not digested again
        #expect(try await store.room(id: "r-old")?.client1 == DeviceDigest.of("old-creator"))
        try await TestServer.with(store: store) { server, _ async throws in
            #expect(try await server.post("/api/rooms/check", #"{"joinid":"333444","client1":"old-waiting"}"#).status == 204)
            #expect(try await server.request("DELETE", "/api/rooms", #"{"roomid":"r-old","deviceId":"old-joiner"}"#).status == 200)
        }
    }
}
