@testable import InvisoKit
import InvisoStore
import InvisoTesting
import InvisoTime
import InvisoWire
import Logging
import Testing

/// The ChatClient and SignalingClient drivers against the in-process server: no socket,
/// no port, and every timer on a manual clock, so what these tests assert about time holds
/// however busy the host is.
@Suite("ChatClient over the in-process server", .timeLimit(.minutes(5)))
struct InProcessChatTests {
    struct Pair {
        let server: InProcessServer
        let clock: ManualClock
        let alice: ChatClient
        let aliceLog: ChatEventLog
        let bob: ChatClient
        let bobLog: ChatEventLog
    }

    static func client(
        _ server: InProcessServer, clock: ManualClock, seed: UInt64,
        configure: (inout ChatClient.Configuration) -> Void = { _ in }
    ) -> (ChatClient, ChatEventLog) {
        var configuration = ChatClient.Configuration(server: ServerEndpoint(host: "in-process.invalid", port: 1, useTLS: false))
        configuration.direct = nil
        // Virtual time runs while the test waits for work on real threads: deadlines far
        // beyond what a test advances, except where a test is about them.
        configuration.pairingTimeout = .seconds(100_000)
        configuration.signaling.reconnect = ReconnectPolicy(base: .milliseconds(100), factor: 2, cap: .seconds(1))
        configure(&configuration)
        let client = ChatClient(
            configuration: configuration, store: nil, random: SeededGenerator(seed: seed), clock: clock, http: server,
            signaling: server, logger: Logger(label: "inviso.tests.in-process", factory: { _ in SwiftLogNoOpLogHandler() }),
            frameTap: nil)
        return (client, ChatEventLog(client))
    }

    /// Alice invites, Bob joins; both hold the secured v2 channel.
    static func paired(configure: (inout ChatClient.Configuration) -> Void = { _ in }) async throws -> Pair {
        let clock = ManualClock()
        let server = InProcessServer(clock: clock)
        let (alice, aliceLog) = client(server, clock: clock, seed: 1, configure: configure)
        let (bob, bobLog) = client(server, clock: clock, seed: 2, configure: configure)
        let invite = try await alice.invite()
        try await bob.join(invite.text)
        do {
            try await run(clock, until: "both secured") { aliceLog.security != nil && bobLog.security != nil }
        } catch {
            throw NetworkTestFailure("\(error); alice: \(aliceLog.all.suffix(6)); bob: \(bobLog.all.suffix(6)); connections \(server.connectionsOpened)/\(server.connectionCount); frames \(server.binaryFramesRelayed); clock \(clock.now) deadlines \(clock.deadlines.count); server: \(server.trace.prefix(40))")
        }
        #expect(aliceLog.security?.version == bobLog.security?.version)
        // The second member to join hears room_joined and room_ready before the first
        // member hears room_ready (whose first frame must not overtake them).
        let join = try #require(server.trace.first { $0.contains("join_room → [") && $0.contains(",") })
        let ids = join.split(whereSeparator: { !$0.isNumber }).map(String.init)
        #expect(ids.count == 4 && ids[1] == ids[0] && ids[2] == ids[0] && ids[3] != ids[0], "\(join)")
        return Pair(server: server, clock: clock, alice: alice, aliceLog: aliceLog, bob: bob, bobLog: bobLog)
    }

    /// Lets virtual time pass in 5 ms steps, a little real time apart, until `condition`
    /// holds (acks wait 20 ms, reconnects back off): at most 120 s of real time.
    static func run(
        _ clock: ManualClock, until what: String, step: Duration = .milliseconds(5),
        _ condition: @Sendable () async -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw NetworkTestFailure("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(1))
            clock.advance(by: step)
        }
    }

    @Test("Pairs, chats both ways and leaves, with no socket")
    func pairChatLeave() async throws {
        let pair = try await Self.paired()
        #expect(pair.aliceLog.security?.version == .v2)
        for index in 0..<50 {
            _ = try await pair.alice.send(text: ChatFixture.text("alice", index))
            _ = try await pair.bob.send(text: ChatFixture.text("bob", index))
        }
        try await Self.run(pair.clock, until: "everything delivered") {
            pair.aliceLog.delivered.count == 50 && pair.bobLog.delivered.count == 50
        }
        ChatFixture.expectMessages(pair.bobLog, (0..<50).map { ChatFixture.text("alice", $0) })
        ChatFixture.expectMessages(pair.aliceLog, (0..<50).map { ChatFixture.text("bob", $0) })
        #expect(pair.aliceLog.delivered == Array(1...50))
        #expect(pair.server.binaryFramesRelayed > 0)
        await pair.bob.leave()
        try await Self.run(pair.clock, until: "alice hears bob left") {
            pair.aliceLog.closeReason != nil && pair.bobLog.closeReason != nil
        }
        #expect(pair.aliceLog.closeReason == .peerLeft)
        #expect(pair.bobLog.closeReason == .left)
        await pair.alice.leave()
        #expect(pair.server.connectionCount == 0)
    }

    @Test("Messages sent in one call arrive in order with consecutive ids; a batch the outbox cannot take is refused whole")
    func sendContentsOf() async throws {
        let pair = try await Self.paired { $0.reliable.outboxLimit = 300 }
        let first = try await pair.alice.send(contentsOf: (0..<200).map { .text(ChatFixture.text("alice", $0)) })
        #expect(first == 1..<201)
        await #expect(throws: ChatError.outboxFull) {
            try await pair.alice.send(contentsOf: (200..<400).map { .text(ChatFixture.text("alice", $0)) })
        }
        let second = try await pair.alice.send(contentsOf: (200..<250).map { .text(ChatFixture.text("alice", $0)) })
        #expect(second == 201..<251)
        #expect(try await pair.alice.send(contentsOf: []).isEmpty)
        try await Self.run(pair.clock, until: "everything delivered") { pair.aliceLog.delivered.count == 250 }
        ChatFixture.expectMessages(pair.bobLog, (0..<250).map { ChatFixture.text("alice", $0) })
        #expect(pair.aliceLog.delivered == Array(1...250))
        await pair.alice.leave()
        await pair.bob.leave()
    }

    @Test("Sends from many threads at once, with a lifetime proposal among them: every id once, each message arrives under the id its sender got")
    func concurrentSends() async throws {
        let pair = try await Self.paired()
        let alice = pair.alice
        let sent = try await withThrowingTaskGroup(of: [(UInt64, String)].self) { group in
            for sender in 0..<4 {
                group.addTask {
                    var sent: [(UInt64, String)] = []
                    for index in 0..<100 {
                        let text = ChatFixture.text("sender\(sender)", index)
                        sent.append((try await alice.send(text: text), text))
                    }
                    return sent
                }
            }
            group.addTask {
                try await alice.proposeLifetime(.oneHour)
                return []
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(sent.map(\.0)).count == 400)
        try await Self.run(pair.clock, until: "everything delivered") { pair.aliceLog.delivered.count == 401 }
        #expect(Set(pair.aliceLog.delivered) == Set(1...401))
        let received = Dictionary(uniqueKeysWithValues: pair.bobLog.messages.compactMap { message -> (UInt64, String)? in
            if case .text(let text) = message.payload { (message.id, text) } else { nil }
        })
        for (id, text) in sent { #expect(received[id] == text) }
        #expect(pair.bobLog.all.contains { if case .lifetimeProposed(.oneHour) = $0 { true } else { false } })
        await pair.alice.leave()
        await pair.bob.leave()
    }

    @Test("A lost network: both reconnect after their backoff and nothing sent meanwhile is lost")
    func droppedConnections() async throws {
        let pair = try await Self.paired()
        _ = try await pair.alice.send(text: "before")
        try await Self.run(pair.clock, until: "the first message") { pair.aliceLog.delivered.count == 1 }
        let opened = pair.server.connectionsOpened
        pair.server.dropConnections()
        // Sent while both are away: queued, then resent after the reconnect.
        for index in 0..<20 { _ = try await pair.alice.send(text: ChatFixture.text("alice", index)) }
        for index in 0..<20 { _ = try await pair.bob.send(text: ChatFixture.text("bob", index)) }
        try await Self.run(pair.clock, until: "everything delivered after the reconnect") {
            pair.aliceLog.delivered.count == 21 && pair.bobLog.delivered.count == 20
        }
        #expect(pair.server.connectionsOpened == opened + 2)
        #expect(pair.bobLog.messages.map(\.payload) == [.text("before")] + (0..<20).map { .text(ChatFixture.text("alice", $0)) })
        ChatFixture.expectMessages(pair.aliceLog, (0..<20).map { ChatFixture.text("bob", $0) })
        #expect(pair.aliceLog.closeReason == nil && pair.bobLog.closeReason == nil)
        await pair.alice.leave()
        await pair.bob.leave()
    }

    @Test("An unanswered ping: the connection is dropped exactly at the pong deadline and the client reconnects")
    func pongTimeout() async throws {
        let pair = try await Self.paired {
            $0.signaling.pingInterval = .seconds(25)
            $0.signaling.pongTimeout = .seconds(10)
        }
        let opened = pair.server.connectionsOpened
        pair.server.answersPings = false
        // Both clients' next pings are due within 25 s; they go out unanswered and their
        // pong deadlines are 10 s after the clock got there.
        let start = pair.clock.now
        pair.clock.advance(by: .seconds(25))
        let pongDeadline = start.advanced(by: .seconds(35))
        try await waitUntil("the pong deadlines") { pair.clock.deadlines.count { $0 == pongDeadline } == 2 }
        pair.clock.advance(to: pongDeadline.advanced(by: .milliseconds(-1)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(pair.server.connectionsOpened == opened)
        #expect(pair.server.connectionCount == 2)
        pair.server.answersPings = true
        pair.clock.advance(to: pongDeadline)
        try await Self.run(pair.clock, until: "a new connection") { pair.server.connectionsOpened > opened }
        // The session carries on over the new connection.
        _ = try await pair.alice.send(text: "after")
        try await Self.run(pair.clock, until: "delivered") { pair.aliceLog.delivered.count == 1 }
        #expect(pair.bobLog.messages.map(\.payload) == [.text("after")])
        await pair.alice.leave()
        await pair.bob.leave()
    }

    @Test("A peer whose connection ends is not gone: its messages arrive once it is back")
    func peerDisconnected() async throws {
        let pair = try await Self.paired()
        pair.server.isReachable = false
        pair.server.dropConnections()
        _ = try await pair.alice.send(text: "while away")
        // Nobody can connect: both keep backing off; nothing closes the session.
        try await Self.run(pair.clock, until: "several failed reconnects") { pair.server.connectionsOpened == 2 && pair.clock.now > .origin.advanced(by: .seconds(3)) }
        #expect(pair.aliceLog.closeReason == nil && pair.bobLog.closeReason == nil)
        pair.server.isReachable = true
        try await Self.run(pair.clock, until: "delivered after the outage") { pair.aliceLog.delivered.count == 1 }
        #expect(pair.bobLog.messages.map(\.payload) == [.text("while away")])
        await pair.alice.leave()
        await pair.bob.leave()
    }

    @Test("An unreachable server: invite and join fail with a typed error")
    func unreachable() async throws {
        let clock = ManualClock()
        let server = InProcessServer(clock: clock)
        server.isReachable = false
        let (alice, _) = Self.client(server, clock: clock, seed: 1)
        await #expect(throws: ChatError.server) { try await alice.invite() }
        let (bob, _) = Self.client(server, clock: clock, seed: 2)
        await #expect(throws: ChatError.server) { try await bob.join("123456-abandon-ability-able") }
    }

    @Test("A code accepted twice or after it expired is refused, as the server does")
    func codeRules() async throws {
        let clock = ManualClock()
        let server = InProcessServer(clock: clock)
        let api = RoomAPI(transport: server)
        let created = try await api.createRoom(deviceID: "creator", expiresInSeconds: 60)
        #expect(try await api.check(joinID: created.joinID, deviceID: "creator") == .pending)
        let room = try await api.accept(joinID: created.joinID, deviceID: "joiner")
        #expect(try await api.check(joinID: created.joinID, deviceID: "creator") == .accepted(roomID: room))
        await #expect(throws: RoomAPIError.alreadyAccepted) { try await api.accept(joinID: created.joinID, deviceID: "other") }
        let late = try await api.createRoom(deviceID: "creator-2", expiresInSeconds: 60)
        clock.advance(by: .seconds(61))
        await #expect(throws: RoomAPIError.notFoundOrExpired) { try await api.accept(joinID: late.joinID, deviceID: "joiner-2") }
        await #expect(throws: RoomAPIError.notMember) { try await api.deleteRoom(roomID: room, deviceID: "stranger") }
        try await api.deleteRoom(roomID: room, deviceID: "creator")
        let purged = try await api.purge(deviceIDs: ["creator-2"])
        #expect(purged.pendingsDeleted == 1 && purged.roomsDeleted == 0)
    }
}
