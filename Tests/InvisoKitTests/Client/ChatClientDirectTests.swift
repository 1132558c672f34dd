@testable import InvisoKit
import InvisoServer
import InvisoTesting
import InvisoWire
import Testing

/// The chat engine's automatic direct path, end to end against the real server on
/// 127.0.0.1 (the listeners bind 127.0.0.1 too).
@Suite("ChatClient direct path against the real server", .timeLimit(.minutes(6)))
struct ChatClientDirectTests {
    /// Creator and joiner paired with a v2 invite (or the bare join code: v1), the direct
    /// path on loopback unless `configure` changes it.
    static func pair(
        _ server: KitTestServer, capture: FrameCapture? = nil, v1: Bool = false,
        alice configureAlice: (inout ChatClient.Configuration) -> Void = { _ in },
        bob configureBob: (inout ChatClient.Configuration) -> Void = { _ in }
    ) async throws -> (alice: (ChatClient, ChatEventLog), bob: (ChatClient, ChatEventLog)) {
        let alice = ChatFixture.client(server, seed: 11, capture: capture) {
            $0.direct = ChatFixture.direct
            configureAlice(&$0)
        }
        let bob = ChatFixture.client(server, seed: 12, capture: capture) {
            $0.direct = ChatFixture.direct
            configureBob(&$0)
        }
        let invite = try await alice.0.invite()
        try await bob.0.join(v1 ? invite.joinCode : invite.text)
        return (alice, bob)
    }

    static func send(_ client: ChatClient, _ side: String, _ range: Range<Int>) async throws {
        try await ChatFixture.send(client, side, range)
    }

    static func onDirect(_ log: ChatEventLog) -> Bool { log.all.contains(.path(.direct)) }

    /// Waits until both sides have reported the direct path.
    static func waitUntilDirect(_ alice: (ChatClient, ChatEventLog), _ bob: (ChatClient, ChatEventLog)) async throws {
        try await alice.1.wait("alice on the direct path") { onDirect($0) }
        try await bob.1.wait("bob on the direct path") { onDirect($0) }
    }

    /// The last path event.
    static func lastPath(_ log: ChatEventLog) -> ChatEvent? {
        log.all.last { if case .path = $0 { true } else { false } }
    }

    @Test func pairedClientsMoveToTheDirectPathAndCarryAThousandMessagesEachWay() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, bob) = try await Self.pair(server, capture: capture)
            try await Self.waitUntilDirect(alice, bob)
            // Relay first (at `.secured`), then direct.
            let paths = alice.1.all.filter { if case .path = $0 { true } else { false } }
            #expect(paths == [.path(.relay), .path(.direct)])
            #expect(await alice.0.currentPath == .direct)
            #expect(await bob.0.currentPath == .direct)
            #expect(await alice.0.directPhase == .connected)
            #expect(await bob.0.directPhase == .connected)
            // Each side saw the other's candidates (loopback, as configured).
            #expect(alice.1.all.contains { if case .transportCandidates(let c) = $0 { c.allSatisfy { $0.host == "127.0.0.1" } && !c.isEmpty } else { false } })
            let relayFramesBefore = capture.count(on: .relay)
            let count = 1_000
            try await ChatFixture.exchange(alice, bob, count: count)
            // The messages went direct, not through the server, and no frame on either path
            // holds a plaintext.
            #expect(capture.count(on: .direct) > 2 * count)
            #expect(capture.count(on: .relay) < relayFramesBefore + count / 10)
            #expect(!capture.contains(Array("alice-message-".utf8)) && !capture.contains(Array("bob-message-".utf8)))
            #expect(alice.1.errors.isEmpty && bob.1.errors.isEmpty)
            await alice.0.leave()
            try await bob.1.wait("bob closed on alice's leave") { $0.closeReason == .peerLeft }
            #expect(await alice.0.directPhase == .finished)
        }
    }

    /// Sending starts before pairing and goes on while the path moves relay → direct.
    @Test func messagesSentDuringTheMoveToDirectArriveOnceAndInOrder() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, bob) = try await Self.pair(server, capture: capture)
            var sent = 0
            var sentWhenDirect: Int?
            // Until both are direct (240 s at most: a hang detector), then 300 more. At most 200 a second each
            // way: the peer's transport_candidates travel on the signaling socket behind
            // every relay frame sent before them, so a flood faster than a loaded debug
            // build opens frames delays the move by the backlog (a full run once needed
            // more than 60 s at 2,000 a second).
            let deadline = ContinuousClock.now + .seconds(240)
            while sentWhenDirect.map({ sent < $0 + 300 }) ?? (ContinuousClock.now < deadline) {
                _ = try await alice.0.send(text: ChatFixture.text("alice", sent))
                _ = try await bob.0.send(text: ChatFixture.text("bob", sent))
                sent += 1
                if sentWhenDirect == nil, Self.onDirect(alice.1), Self.onDirect(bob.1) { sentWhenDirect = sent }
                if sent % 10 == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            let switchedAt = try #require(sentWhenDirect, "the direct path never came up")
            #expect(switchedAt > 0 && sent > switchedAt)
            try await bob.1.wait("alice's messages") { $0.messages.count >= sent }
            try await alice.1.wait("bob's messages") { $0.messages.count >= sent }
            try await alice.1.wait("alice's delivery reports") { $0.delivered.count >= sent }
            try await bob.1.wait("bob's delivery reports") { $0.delivered.count >= sent }
            ChatFixture.expectMessages(bob.1, (0..<sent).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<sent).map { ChatFixture.text("bob", $0) })
            #expect(alice.1.delivered == Array(1...UInt64(sent)) && bob.1.delivered == Array(1...UInt64(sent)))
            // Both paths carried frames, none a plaintext.
            #expect(capture.count(on: .relay) > 0 && capture.count(on: .direct) > 0)
            #expect(!capture.contains(Array("alice-message-".utf8)) && !capture.contains(Array("bob-message-".utf8)))
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    @Test func aPeerWithoutTheDirectPathKeepsTheSessionOnTheRelay() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, bob) = try await Self.pair(
                server, alice: { $0.directCandidatesTimeout = .milliseconds(500) }, bob: { $0.direct = nil })
            _ = try await alice.1.waitForSecurity()
            _ = try await bob.1.waitForSecurity()
            // Alice listened and offered candidates; bob, without the direct path, ignored them.
            try await bob.1.wait("alice's candidates") {
                $0.all.contains { if case .transportCandidates = $0 { true } else { false } }
            }
            #expect(await bob.0.directPhase == .finished)
            // Alice's listener gives up waiting for candidates that never come.
            let deadline = ContinuousClock.now + .seconds(120)
            while await alice.0.directPhase != .finished, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await alice.0.directPhase == .finished)
            #expect(!alice.1.all.contains { if case .transportCandidates = $0 { true } else { false } })
            try await Self.send(alice.0, "alice", 0..<100)
            try await Self.send(bob.0, "bob", 0..<100)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 100 }
            try await alice.1.wait("bob's messages") { $0.messages.count >= 100 }
            ChatFixture.expectMessages(bob.1, (0..<100).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<100).map { ChatFixture.text("bob", $0) })
            #expect(!Self.onDirect(alice.1) && !Self.onDirect(bob.1))
            #expect(await alice.0.currentPath == .relay)
            #expect(await bob.0.currentPath == .relay)
            #expect(alice.1.errors.isEmpty && bob.1.errors.isEmpty)
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    @Test func closingTheDirectConnectionFallsBackToTheRelayWithoutLoss() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, bob) = try await Self.pair(server, capture: capture)
            try await Self.waitUntilDirect(alice, bob)
            try await Self.send(alice.0, "alice", 0..<300)
            try await Self.send(bob.0, "bob", 0..<300)
            // Cut the direct path from alice's side while messages are in flight.
            let connection = try #require(await alice.0.directConnection)
            await connection.close()
            try await alice.1.wait("alice back on the relay") { Self.lastPath($0) == .path(.relay) }
            try await bob.1.wait("bob back on the relay") { Self.lastPath($0) == .path(.relay) }
            let relayFramesAtFallback = capture.count(on: .relay)
            try await Self.send(alice.0, "alice", 300..<600)
            try await Self.send(bob.0, "bob", 300..<600)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 600 }
            try await alice.1.wait("bob's messages") { $0.messages.count >= 600 }
            try await alice.1.wait("alice's delivery reports") { Set($0.delivered).count >= 600 }
            try await bob.1.wait("bob's delivery reports") { Set($0.delivered).count >= 600 }
            ChatFixture.expectMessages(bob.1, (0..<600).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<600).map { ChatFixture.text("bob", $0) })
            #expect(await alice.0.currentPath == .relay)
            #expect(await bob.0.currentPath == .relay)
            // The later messages went through the relay.
            #expect(capture.count(on: .relay) > relayFramesAtFallback + 600)
            #expect(!capture.contains(Array("alice-message-".utf8)) && !capture.contains(Array("bob-message-".utf8)))
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    /// v1 (a bare join code) between two of our clients: the v1 path key authenticates the
    /// direct connection too.
    @Test func v1SessionBetweenOurClientsAlsoMovesToDirect() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, bob) = try await Self.pair(server, capture: capture, v1: true)
            let security = try await alice.1.waitForSecurity()
            #expect(security.version == .v1)
            try await Self.waitUntilDirect(alice, bob)
            try await Self.send(alice.0, "alice", 0..<100)
            try await Self.send(bob.0, "bob", 0..<100)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 100 }
            try await alice.1.wait("bob's messages") { $0.messages.count >= 100 }
            ChatFixture.expectMessages(bob.1, (0..<100).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<100).map { ChatFixture.text("bob", $0) })
            #expect(capture.count(on: .direct) >= 400)
            #expect(!capture.contains(Array("alice-message".utf8)) && !capture.contains(Array("bob-message".utf8)))
            await alice.0.leave()
            await bob.0.leave()
        }
    }
}
