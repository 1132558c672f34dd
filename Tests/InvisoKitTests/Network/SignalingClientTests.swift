import InvisoKit
import InvisoTesting
import InvisoWire
import Logging
import Testing

@Suite("SignalingClient against the real server", .timeLimit(.minutes(6)))
struct SignalingClientTests {
    /// Frequent pings and fast backoff; the pong timeout stays generous so that a loaded
    /// CI machine never drops a healthy connection in the middle of a test (every server
    /// of the suite shares NIO's two event loops with all the others: under the stress
    /// script a pong took more than 10 s).
    static func makeClient(_ server: KitTestServer, seed: UInt64) -> (SignalingClient, EventLog, Task<Void, Never>) {
        var configuration = SignalingClient.Configuration(endpoint: server.endpoint)
        configuration.pingInterval = .milliseconds(500)
        configuration.pongTimeout = .seconds(60)
        configuration.connectTimeout = .seconds(2)
        configuration.reconnect = ReconnectPolicy(base: .milliseconds(50), factor: 2, cap: .milliseconds(200))
        let client = SignalingClient(
            configuration: configuration, random: SeededGenerator(seed: seed),
            logger: Logger(label: "inviso.tests.signaling", factory: { _ in SwiftLogNoOpLogHandler() }))
        let log = EventLog(client)
        let run = Task { await client.run() }
        server.closeAtEnd { await client.close() }
        return (client, log, run)
    }

    static func pair(_ server: KitTestServer, code: String) async throws -> String {
        let api = RoomAPI(transport: NIOHTTPTransport(endpoint: server.endpoint, timeout: .seconds(90)))
        _ = try await api.createRoom(joinID: code, deviceID: "device-alice", expiresInSeconds: 600)
        return try await api.accept(joinID: code, deviceID: "device-bob")
    }

    static func isReady(_ event: SignalingEvent) -> Bool {
        if case .roomReady = event { return true }
        return false
    }

    static func binaries(_ log: EventLog, count: Int) async throws -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for _ in 0..<count {
            if case .binary(let bytes) = try await log.next(where: { if case .binary = $0 { true } else { false } }) {
                frames.append(bytes)
            }
        }
        return frames
    }

    /// Both clients see `room_ready` with the right initiator, then frames flow both ways
    /// in order.
    static func expectReadyAndRelay(
        alice: (SignalingClient, EventLog), bob: (SignalingClient, EventLog), room: String, round: UInt8
    ) async throws {
        #expect(try await alice.1.next(where: isReady) == .roomReady(roomID: room, isInitiator: true))
        #expect(try await bob.1.next(where: isReady) == .roomReady(roomID: room, isInitiator: false))
        let toBob = (0..<20).map { [round, 0xA0, UInt8($0)] }
        let toAlice = (0..<20).map { [round, 0xB0, UInt8($0)] }
        for frame in toBob { try await alice.0.send(binary: frame) }
        for frame in toAlice { try await bob.0.send(binary: frame) }
        #expect(try await binaries(bob.1, count: 20) == toBob)
        #expect(try await binaries(alice.1, count: 20) == toAlice)
    }

    @Test func joinReadyAndBinaryRelay() async throws {
        try await KitTestServer.with { server in
            let room = try await Self.pair(server, code: "111222")
            let (alice, aliceLog, aliceRun) = Self.makeClient(server, seed: 1)
            let (bob, bobLog, bobRun) = Self.makeClient(server, seed: 2)
            // Bob joins first: the creator is still the initiator.
            try await bob.join(roomID: room, deviceID: "device-bob")
            try await bobLog.next { if case .joined(room, 1, false) = $0 { true } else { false } }
            try await alice.join(roomID: room, deviceID: "device-alice")
            try await Self.expectReadyAndRelay(alice: (alice, aliceLog), bob: (bob, bobLog), room: room, round: 1)

            // A relayed signaling message arrives with `from` and `roomId` added.
            try await alice.send(KeyExchangeComplete(sessionId: "s1").message)
            let relayed = try await bobLog.next { if case .message = $0 { true } else { false } }
            guard case .message(let object) = relayed else { return }
            #expect(object["type"]?.stringValue == "key_exchange_complete")
            #expect(object["roomId"]?.stringValue == room)

            // Pings every 200 ms are answered: still connected after several intervals.
            try await Task.sleep(for: .milliseconds(700))
            #expect(!aliceLog.all.contains { if case .disconnected = $0 { true } else { false } })

            await alice.close()
            try await bobLog.next { $0 == .peerDisconnected }
            await bob.close()
            await aliceRun.value
            await bobRun.value
        }
    }

    @Test func reconnectAfterServerRestartRejoinsTheRoom() async throws {
        try await KitTestServer.with { server in
            let room = try await Self.pair(server, code: "333444")
            let (alice, aliceLog, aliceRun) = Self.makeClient(server, seed: 3)
            let (bob, bobLog, bobRun) = Self.makeClient(server, seed: 4)
            try await alice.join(roomID: room, deviceID: "device-alice")
            try await bob.join(roomID: room, deviceID: "device-bob")
            try await Self.expectReadyAndRelay(alice: (alice, aliceLog), bob: (bob, bobLog), room: room, round: 1)

            let port = server.port
            try await server.stop()
            try await aliceLog.next { $0 == .disconnected(.serverClosed(code: 1001)) || $0 == .disconnected(.connectionLost) }
            try await aliceLog.next { if case .reconnecting = $0 { true } else { false } }
            try await server.start(port: port)

            try await aliceLog.next { if case .connected = $0 { true } else { false } }
            try await bobLog.next { if case .connected = $0 { true } else { false } }
            try await Self.expectReadyAndRelay(alice: (alice, aliceLog), bob: (bob, bobLog), room: room, round: 2)

            await alice.close()
            await bob.close()
            await aliceRun.value
            await bobRun.value
        }
    }

    @Test func leaveDoesNotReconnect() async throws {
        try await KitTestServer.with { server in
            let room = try await Self.pair(server, code: "555666")
            let (alice, aliceLog, aliceRun) = Self.makeClient(server, seed: 5)
            let (bob, bobLog, bobRun) = Self.makeClient(server, seed: 6)
            try await alice.join(roomID: room, deviceID: "device-alice")
            try await bob.join(roomID: room, deviceID: "device-bob")
            try await aliceLog.next(where: Self.isReady)

            // (A loaded host may have dropped and restored the connection before this
            // point; what matters is that nothing reconnects after the leave.)
            let before = aliceLog.all.count
            await alice.leave()
            try await bobLog.next { $0 == .peerLeft }
            await aliceRun.value
            try await aliceLog.waitUntilFinished()
            #expect(aliceLog.all.last == .disconnected(.closedByUser))
            #expect(!aliceLog.all.dropFirst(before).contains { if case .reconnecting = $0 { true } else { false } })
            await #expect(throws: SignalingClientError.closed) { try await alice.send(binary: [1]) }

            await bob.close()
            await bobRun.value
        }
    }

    @Test func watchCodeIsPushedTheRoom() async throws {
        try await KitTestServer.with { server in
            let api = RoomAPI(transport: NIOHTTPTransport(endpoint: server.endpoint, timeout: .seconds(90)))
            _ = try await api.createRoom(joinID: "777888", deviceID: "device-alice", expiresInSeconds: 600)
            let (alice, aliceLog, aliceRun) = Self.makeClient(server, seed: 7)
            try await alice.watch(joinID: "777888", deviceID: "device-alice")
            try await aliceLog.next { if case .connected = $0 { true } else { false } }
            try await Task.sleep(for: .milliseconds(100))
            let room = try await api.accept(joinID: "777888", deviceID: "device-bob")
            try await aliceLog.next { $0 == .roomAccepted(joinID: "777888", roomID: room) }
            await alice.close()
            await aliceRun.value
        }
    }

    @Test func unreachableServerBacksOffAndGivesUp() async throws {
        var configuration = SignalingClient.Configuration(
            endpoint: ServerEndpoint(host: "127.0.0.1", port: 9, useTLS: false))
        configuration.reconnect = ReconnectPolicy(base: .milliseconds(20), factor: 2, cap: .milliseconds(40), maxAttempts: 2)
        let client = SignalingClient(configuration: configuration, random: SeededGenerator(seed: 9))
        let log = EventLog(client)
        await client.run()
        try await log.waitUntilFinished()
        var generator = SeededGenerator(seed: 9)
        let expected: [SignalingEvent] = [
            .disconnected(.connectFailed),
            .reconnecting(attempt: 1, delay: configuration.reconnect.delay(forAttempt: 1, using: &generator)),
            .disconnected(.connectFailed),
            .reconnecting(attempt: 2, delay: configuration.reconnect.delay(forAttempt: 2, using: &generator)),
            .disconnected(.connectFailed),
            .disconnected(.gaveUp),
        ]
        #expect(log.all == expected)
    }
}
