import Foundation
import InvisoServer
import InvisoTesting
import InvisoWire
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// Two server instances on one PostgreSQL database, one member connected to each: rooms,
/// signaling, binary relay and pushes cross between them through LISTEN/NOTIFY.
@Suite(
    "Two instances",
    .enabled(
        "needs PostgreSQL at INVISO_TEST_POSTGRES_URL (default 127.0.0.1:5432; start one with scripts/start-postgres.sh)",
        { await PostgresTestServer.isReachableOrRequired() }
    )
)
struct ClusterTests {
    /// Runs `body` with two servers (A, B), each with its own store pool and bus, on a
    /// fresh schema; drops the schema afterwards.
    static func withTwoInstances(_ body: @escaping @Sendable (TestServer, TestServer) async throws -> Void) async throws {
        guard await PostgresTestServer.isReachable() else {
            Issue.record("PostgreSQL at INVISO_TEST_POSTGRES_URL is unreachable, and CI=true requires it")
            return
        }
        let logger = PostgresTestServer.logger
        let base = try PostgresRoomStore.configuration(url: PostgresTestServer.url)
        let suffix = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let schema = "inviso_cluster_" + suffix
        var scoped = base
        scoped.options.additionalStartupParameters = [("search_path", schema)]
        let admin = PostgresClient(configuration: base, backgroundLogger: logger)
        let clock = ManualClock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            let outcome: Result<Void, any Error>
            do {
                try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
                let storeA = PostgresRoomStore(configuration: scoped, logger: logger)
                let storeB = PostgresRoomStore(configuration: scoped, logger: logger)
                let channel = "inviso_test_" + suffix
                let busA = PostgresSignalingBus(configuration: scoped, channel: channel, instanceID: "a-\(suffix)", logger: logger)
                let busB = PostgresSignalingBus(configuration: scoped, channel: channel, instanceID: "b-\(suffix)", logger: logger)
                try await TestServer.with(store: storeA, bus: busA, extraServices: [storeA, busA], clock: clock) { a, _ in
                    try await TestServer.with(store: storeB, bus: busB, extraServices: [storeB, busB], clock: clock) { b, _ in
                        // Both buses listen before the test starts talking.
                        try await Task.sleep(for: .milliseconds(300))
                        try await body(a, b)
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
            group.cancelAll()
            try outcome.get()
        }
    }

    @Test("one member on each instance: room_ready, relays both ways, binary, leave, disconnect, rejoin")
    func pairAcrossInstances() async throws {
        try await Self.withTwoInstances { a, b in
            // Rooms are shared: created on A, accepted on B.
            let created = try await a.post("/api/rooms", #"{"joinid":"654321","client1":"creator-dev","expiresInSeconds":300}"#)
            #expect(created.status == 201)
            let (creator, _) = try await TestSocket.connect(a)
            try await creator.send(#"{"type":"watch_code","joinid":"654321","client1":"creator-dev"}"#)
            try await creator.expectSilence(0.2)
            let accepted = try await b.post("/api/rooms/accept", #"{"joinid":"654321","client2":"joiner-dev"}"#)
            let roomID = try #require(accepted.json?["roomid"]?.stringValue)
            let push = try await creator.next()
            #expect(push["type"]?.stringValue == "room_accepted" && push["roomid"]?.stringValue == roomID)

            let (joiner, joinerHello) = try await TestSocket.connect(b)
            try await creator.send(.joinRoom(roomID: roomID, deviceID: "creator-dev"))
            let creatorJoined = try await creator.next()
            #expect(creatorJoined["type"]?.stringValue == "room_joined" && creatorJoined["isInitiator"] == .bool(true))
            try await joiner.send(.joinRoom(roomID: roomID, deviceID: "joiner-dev"))
            let joinerJoined = try await joiner.next()
            #expect(joinerJoined["type"]?.stringValue == "room_joined", "\(joinerJoined)")
            let joinerReady = try await joiner.next()
            #expect(joinerReady["type"]?.stringValue == "room_ready" && joinerReady["isInitiator"] == .bool(false))
            let creatorReady = try await creator.next()
            #expect(creatorReady["type"]?.stringValue == "room_ready" && creatorReady["isInitiator"] == .bool(true))

            try await creator.send(#"{"type":"webrtc_offer","sdp":"offer-sdp","x":[1]}"#)
            let offer = try await joiner.next()
            #expect(offer["sdp"]?.stringValue == "offer-sdp" && offer["x"] == .array([.integer(1)]))
            #expect(offer["roomId"]?.stringValue == roomID)
            try await joiner.send(#"{"type":"webrtc_answer","sdp":"answer-sdp"}"#)
            let answer = try await creator.next()
            #expect(answer["sdp"]?.stringValue == "answer-sdp" && answer["from"] == joinerHello["clientId"])
            // Order is kept across the bus.
            for index in 0..<20 {
                try await creator.send(#"{"type":"ice_candidate","candidate":{"candidate":"c\#(index)","sdpMLineIndex":0,"sdpMid":"0"}}"#)
            }
            for index in 0..<20 {
                #expect(try await joiner.next()["candidate"]?.objectValue?["candidate"]?.stringValue == "c\(index)")
            }
            let large = [UInt8]((0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            try await joiner.send(binary: large)
            guard case .binary(let received)? = try await creator.nextEvent() else { throw TestFailure("no binary") }
            #expect(received == large)

            try await joiner.send(#"{"type":"leave_room"}"#)
            #expect(try await joiner.next()["type"]?.stringValue == "left_room")
            #expect(try await creator.nextType() == "peer_left")
            try await joiner.send(.joinRoom(roomID: roomID, deviceID: "joiner-dev"))
            #expect(try await joiner.nextType() == "room_joined")
            #expect(try await joiner.nextType() == "room_ready")
            #expect(try await creator.nextType() == "room_ready")
            try await joiner.close()
            #expect(try await creator.nextType() == "peer_disconnected")

            // The joiner comes back on A this time; a stale seat on B would show as a
            // second room_ready or a refusal.
            let (again, _) = try await TestSocket.connect(a)
            try await again.send(.joinRoom(roomID: roomID, deviceID: "joiner-dev"))
            #expect(try await again.next()["userCount"] == .integer(2))
            try await again.close()
            try await creator.close()
        }
    }

    @Test("per-source limits hold across instances: failed attempts, live codes and creations are counted once")
    func sharedSourceLimits() async throws {
        try await Self.withTwoInstances { a, b in
            // Ten failed guesses in all, half on each instance: the source is then refused on both.
            for (index, server) in [a, b, a, b, a, b, a, b, a, b].enumerated() {
                let reply = try await server.post("/api/rooms/accept", #"{"joinid":"\#(910_000 + index)","client2":"g"}"#)
                #expect(reply.status == 404, "guess \(index)")
            }
            #expect(try await a.post("/api/rooms/accept", #"{"joinid":"910100","client2":"g"}"#).status == 429)
            #expect(try await b.post("/api/rooms/check", #"{"joinid":"910100","client1":"g"}"#).status == 429)
            // Twenty live codes per source, wherever they were created.
            for index in 0..<20 {
                let server = index.isMultiple(of: 2) ? a : b
                #expect(try await server.post("/api/rooms", #"{"client1":"c\#(index)","expiresInSeconds":600}"#).status == 201)
            }
            let capped = try await b.post("/api/rooms", #"{"client1":"c20","expiresInSeconds":600}"#)
            #expect(capped.status == 429 && capped.error == "too_many_codes")
            // A minute later the failures have aged out, on both.
            a.clock.advance(by: .seconds(61))
            #expect(try await b.post("/api/rooms/accept", #"{"joinid":"910200","client2":"g"}"#).status == 404)
            // Thirty creations a minute, counted once (refused ones count too: the bucket is
            // taken before the live-code cap is looked at).
            for index in 0..<30 {
                let reply = try await (index.isMultiple(of: 2) ? a : b).post("/api/rooms", #"{"client1":"d\#(index)","expiresInSeconds":1}"#)
                #expect(reply.error == "too_many_codes", "\(index): \(reply.body)")
            }
            let limited = try await a.post("/api/rooms", #"{"client1":"d30","expiresInSeconds":1}"#)
            #expect(limited.status == 429 && limited.error == "too_many_requests", "\(limited.body)")
        }
    }
}
