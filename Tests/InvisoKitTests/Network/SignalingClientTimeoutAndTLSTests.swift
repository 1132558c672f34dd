import Foundation
import InvisoKit
import InvisoTesting
import Testing

@Suite("SignalingClient: pong timeout and TLS", .timeLimit(.minutes(6)))
struct SignalingClientTimeoutAndTLSTests {
    /// The self-signed test certificate of the server tests (for 127.0.0.1 and localhost;
    /// how it was made is in `Tests/InvisoServerTests/TLSTests.swift`).
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("InvisoServerTests/Fixtures")
    static let certificate = fixtures.appendingPathComponent("tls-cert.pem").path
    static let key = fixtures.appendingPathComponent("tls-key.pem").path

    @Test("a server that never answers pings: the connection ends with pongTimeout, then the client reconnects")
    func pongTimeout() async throws {
        let server = try await SilentWebSocketServer()
        var configuration = SignalingClient.Configuration(
            endpoint: ServerEndpoint(host: "127.0.0.1", port: server.port, useTLS: false))
        configuration.pingInterval = .milliseconds(300)
        configuration.pongTimeout = .milliseconds(300)
        configuration.reconnect = ReconnectPolicy(base: .milliseconds(20), factor: 2, cap: .milliseconds(40))
        let client = SignalingClient(configuration: configuration, random: SeededGenerator(seed: 11))
        let log = EventLog(client)
        let run = Task { await client.run() }
        try await log.next { $0 == .connected(clientID: "silent") }
        try await log.next { $0 == .disconnected(.pongTimeout) }
        try await log.next { if case .reconnecting = $0 { true } else { false } }
        try await log.next { $0 == .connected(clientID: "silent") }
        #expect(server.upgradeCount >= 2)
        await client.close()
        await run.value
        await server.close()
    }

    @Test("REST over HTTPS and signaling over WSS with a trusted certificate: pair, join, relay")
    func tlsEndToEnd() async throws {
        try await KitTestServer.with(tls: (Self.certificate, Self.key)) { server in
            let endpoint = ServerEndpoint(host: "localhost", port: server.port, trustRootsFile: Self.certificate)
            let api = RoomAPI(transport: NIOHTTPTransport(endpoint: endpoint, timeout: .seconds(90)))
            _ = try await api.createRoom(joinID: "515151", deviceID: "tls-alice", expiresInSeconds: 600)
            let room = try await api.accept(joinID: "515151", deviceID: "tls-bob")
            var configuration = SignalingClient.Configuration(endpoint: endpoint)
            configuration.pongTimeout = .seconds(10)
            let alice = SignalingClient(configuration: configuration, random: SeededGenerator(seed: 12))
            let bob = SignalingClient(configuration: configuration, random: SeededGenerator(seed: 13))
            let (aliceLog, bobLog) = (EventLog(alice), EventLog(bob))
            let runs = [Task { await alice.run() }, Task { await bob.run() }]
            try await alice.join(roomID: room, deviceID: "tls-alice")
            try await bob.join(roomID: room, deviceID: "tls-bob")
            try await aliceLog.next { $0 == .roomReady(roomID: room, isInitiator: true) }
            try await bobLog.next { $0 == .roomReady(roomID: room, isInitiator: false) }
            try await alice.send(binary: [1, 2, 3])
            #expect(try await bobLog.next { if case .binary = $0 { true } else { false } } == .binary([1, 2, 3]))
            await alice.close()
            await bob.close()
            for run in runs { await run.value }
        }
    }

    @Test("a certificate the client does not trust: REST fails with a typed error, signaling never connects")
    func untrustedCertificate() async throws {
        try await KitTestServer.with(tls: (Self.certificate, Self.key)) { server in
            // The system roots do not include the self-signed test certificate.
            let endpoint = ServerEndpoint(host: "localhost", port: server.port)
            let api = RoomAPI(transport: NIOHTTPTransport(endpoint: endpoint, timeout: .seconds(90)))
            await #expect(throws: RoomAPIError.self) {
                _ = try await api.createRoom(joinID: "525252", deviceID: "tls-alice", expiresInSeconds: 600)
            }
            var configuration = SignalingClient.Configuration(endpoint: endpoint)
            configuration.reconnect = ReconnectPolicy(base: .milliseconds(20), factor: 2, cap: .milliseconds(40), maxAttempts: 1)
            let client = SignalingClient(configuration: configuration, random: SeededGenerator(seed: 14))
            let log = EventLog(client)
            await client.run()
            try await log.waitUntilFinished()
            #expect(!log.all.contains { if case .connected = $0 { true } else { false } })
            #expect(log.all.last == .disconnected(.gaveUp))
        }
    }
}
