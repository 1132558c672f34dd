import Crypto
import Foundation
@testable import InvisoKit
import InvisoServer
import InvisoStore
import InvisoTesting
import InvisoTime
import Synchronization
import Testing

@Suite("ChatClient end to end against the real server", .timeLimit(.minutes(6)))
struct ChatClientTests {
    /// Creator and joiner paired over the server with a v2 invite.
    static func pair(
        _ server: KitTestServer, capture: FrameCapture? = nil, seeds: (UInt64, UInt64) = (1, 2)
    ) async throws -> (alice: (ChatClient, ChatEventLog), bob: (ChatClient, ChatEventLog)) {
        let alice = ChatFixture.client(server, seed: seeds.0, capture: capture)
        let bob = ChatFixture.client(server, seed: seeds.1, capture: capture)
        let invite = try await alice.0.invite()
        try await bob.0.join(invite.text)
        return (alice, bob)
    }

    static func send(_ client: ChatClient, _ side: String, _ range: Range<Int>) async throws {
        try await ChatFixture.send(client, side, range)
    }

    @Test func invitePairsV2AndCarriesAThousandMessagesEachWay() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, bob) = try await Self.pair(server, capture: capture)
            let aliceSecurity = try await alice.1.waitForSecurity()
            let bobSecurity = try await bob.1.waitForSecurity()
            #expect(aliceSecurity.version == .v2 && aliceSecurity.isVerified && bobSecurity.isVerified)
            #expect(aliceSecurity.safetyNumber == bobSecurity.safetyNumber)
            #expect(await alice.0.state == .active)
            #expect(await bob.0.state == .active)
            #expect(alice.1.all.contains(.path(.relay)))
            let count = 1_000
            try await ChatFixture.exchange(alice, bob, count: count)
            // The relay carried thousands of frames and none holds a plaintext.
            #expect(capture.all.count > 2 * count)
            #expect(!capture.contains(Array("alice-message-".utf8)) && !capture.contains(Array("bob-message-".utf8)))
            await alice.0.leave()
            try await bob.1.wait("bob closed on alice's leave") { $0.closeReason == .peerLeft }
            try await alice.1.wait("alice's stream finished") { $0.finished }
            #expect(alice.1.closeReason == .left)
            await #expect(throws: ChatError.closed) { try await alice.0.send(text: "late") }
        }
    }

    @Test func serverRestartMidConversationLosesAndDuplicatesNothing() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, bob) = try await Self.pair(server)
            _ = try await alice.1.waitForSecurity()
            _ = try await bob.1.waitForSecurity()
            try await Self.send(alice.0, "alice", 0..<200)
            try await Self.send(bob.0, "bob", 0..<200)
            try await bob.1.wait("some of alice's messages") { $0.messages.count >= 50 }
            let port = server.port
            try await server.stop()
            // While the server is down: the outbox takes everything.
            try await Self.send(alice.0, "alice", 200..<400)
            try await Self.send(bob.0, "bob", 200..<400)
            try await server.start(port: port)
            try await Self.send(alice.0, "alice", 400..<500)
            try await Self.send(bob.0, "bob", 400..<500)
            try await bob.1.wait("all of alice's messages", timeout: 120) { $0.messages.count >= 500 }
            try await alice.1.wait("all of bob's messages", timeout: 120) { $0.messages.count >= 500 }
            try await alice.1.wait("alice's delivery reports", timeout: 120) { Set($0.delivered).count >= 500 }
            try await bob.1.wait("bob's delivery reports", timeout: 120) { Set($0.delivered).count >= 500 }
            ChatFixture.expectMessages(bob.1, (0..<500).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<500).map { ChatFixture.text("bob", $0) })
            #expect(alice.1.delivered == Array(1...500) && bob.1.delivered == Array(1...500))
            #expect(await alice.0.unacknowledgedCount == 0)
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    /// The room is deleted over REST with no `leave_room` first (as when a peer's DELETE
    /// overtakes its socket message): the other side still ends with `peerLeft`.
    @Test func aRoomDeletedWithoutLeaveClosesThePeer() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, bob) = try await Self.pair(server)
            _ = try await alice.1.waitForSecurity()
            _ = try await bob.1.waitForSecurity()
            let roomID = try #require(await alice.0.roomID)
            let deviceID = try #require(await alice.0.deviceID)
            try await alice.0.api.deleteRoom(roomID: roomID, deviceID: deviceID)
            try await bob.1.wait("bob closed") { $0.closeReason == .peerLeft }
            await alice.0.leave()
        }
    }

    @Test func wrongSecretFailsThePairingOnceWithATypedError() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, aliceLog) = ChatFixture.client(server, seed: 1)
            let (bob, bobLog) = ChatFixture.client(server, seed: 2)
            let invite = try await alice.invite()
            let wrongWord = invite.words[2] == "zoo" ? "abandon" : "zoo"
            try await bob.join("\(invite.joinCode)-\(invite.words[0])-\(invite.words[1])-\(wrongWord)")
            _ = try await bob.send(text: "never readable")
            try await aliceLog.wait("alice's failure") { $0.closeReason != nil }
            try await bobLog.wait("bob's failure") { $0.closeReason != nil }
            #expect(aliceLog.errors == [.pairingFailed], "\(aliceLog.all)")
            #expect(bobLog.errors == [.pairingFailed], "\(bobLog.all)")
            #expect(aliceLog.closeReason == .pairingFailed)
            #expect(bobLog.closeReason == .pairingFailed)
            #expect(aliceLog.security == nil && bobLog.security == nil && aliceLog.messages.isEmpty)
            #expect(ChatError.pairingFailed.description.contains("secret words"))
            #expect(await alice.state == .closed)
            #expect(await bob.state == .closed)
        }
    }

    @Test func bareJoinCodeFallsBackToUnverifiedV1() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let capture = FrameCapture()
            let (alice, aliceLog) = ChatFixture.client(server, seed: 1, capture: capture)
            let (bob, bobLog) = ChatFixture.client(server, seed: 2, capture: capture)
            let invite = try await alice.invite()
            try await bob.join(invite.joinCode)
            try await bobLog.wait("the v1 warning") { $0.all.contains(.warning(.unverifiedV1)) }
            let aliceSecurity = try await aliceLog.waitForSecurity()
            let bobSecurity = try await bobLog.waitForSecurity()
            #expect(aliceSecurity.version == .v1 && !aliceSecurity.isVerified && !bobSecurity.isVerified)
            #expect(aliceSecurity.safetyNumber == bobSecurity.safetyNumber)
            #expect(aliceLog.all.contains(.warning(.unverifiedV1)))
            try await Self.send(alice, "alice", 0..<50)
            try await Self.send(bob, "bob", 0..<50)
            try await bobLog.wait("alice's v1 messages") { $0.messages.count >= 50 }
            try await aliceLog.wait("bob's v1 messages") { $0.messages.count >= 50 }
            ChatFixture.expectMessages(bobLog, (0..<50).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(aliceLog, (0..<50).map { ChatFixture.text("bob", $0) })
            #expect(aliceLog.delivered.isEmpty)  // v1 has no acks
            // The frames are the app's v1 JSON, and carry no plaintext.
            #expect(capture.all.contains { (try? V1Frame(json: $0)) != nil })
            #expect(!capture.contains(Array("alice-message".utf8)))
            await alice.leave()
            await bob.leave()
        }
    }

    /// Sending moves from the relay to a second path mid-stream (an in-memory pair standing
    /// in for a direct connection): nothing is lost, duplicated or reordered.
    @Test func pathChangeMidStreamKeepsOrderWithoutLossOrDuplicates() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, bob) = try await Self.pair(server)
            _ = try await alice.1.waitForSecurity()
            _ = try await bob.1.waitForSecurity()
            #expect(await alice.0.directPathKey != nil)
            try await Self.send(alice.0, "alice", 0..<300)
            try await Self.send(bob.0, "bob", 0..<300)
            let (toBob, toAlice) = InMemoryFrameTransport.pair()
            // Switch while frames are still in flight on the relay.
            try await alice.0.addPath(toBob)
            try await Self.send(alice.0, "alice", 300..<450)
            try await bob.0.addPath(toAlice)
            try await Self.send(alice.0, "alice", 450..<600)
            try await Self.send(bob.0, "bob", 300..<600)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 600 }
            try await alice.1.wait("bob's messages") { $0.messages.count >= 600 }
            try await alice.1.wait("alice's delivery reports") { Set($0.delivered).count >= 600 }
            ChatFixture.expectMessages(bob.1, (0..<600).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<600).map { ChatFixture.text("bob", $0) })
            #expect(alice.1.all.contains(.path(.direct)) && bob.1.all.contains(.path(.direct)))
            #expect(await alice.0.currentPath == .direct)
            #expect(toBob.sentCount > 0 && toAlice.sentCount > 0)
            // The direct path closes: sending falls back to the relay and still works.
            await toBob.close()
            await toAlice.close()
            try await alice.1.wait("fallback to the relay") { $0.all.last(where: { if case .path = $0 { true } else { false } }) == .path(.relay) }
            _ = try await alice.0.send(text: ChatFixture.text("alice", 600))
            try await bob.1.wait("the message after the fallback") { $0.messages.count >= 601 }
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    /// The driver over a direct link that loses, duplicates and reorders frames: the
    /// machine's acks and resends deliver everything once and in order.
    @Test func aLossyDirectLinkLosesNothing() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, bob) = try await Self.pair(server)
            _ = try await alice.1.waitForSecurity()
            _ = try await bob.1.waitForSecurity()
            let (toBob, toAlice) = InMemoryFrameTransport.pair(
                conditions: .init(loss: 0.2, duplication: 0.1, jitter: .milliseconds(5)), seed: 7)
            try await alice.0.addPath(toBob)
            try await bob.0.addPath(toAlice)
            try await ChatFixture.exchange(alice, bob, count: 500)
            #expect(await alice.0.currentPath == .direct && toBob.sentCount > 500)
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    @Test func storeKeepsSessionMessagesAndIdentityButEphemeralKeepsNothing() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-chat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try InvisoStore(directory: directory.appendingPathComponent("a"), keySource: .key(.init(size: .bits256)))
        let ephemeralStore = try InvisoStore(directory: directory.appendingPathComponent("b"), keySource: .key(.init(size: .bits256)))
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let (alice, aliceLog) = ChatFixture.client(server, seed: 1, store: store) { $0.name = "with bob" }
            let (bob, bobLog) = ChatFixture.client(server, seed: 2, store: ephemeralStore) { $0.isEphemeral = true }
            let invite = try await alice.invite()
            try await bob.join(invite.text)
            _ = try await aliceLog.waitForSecurity()
            _ = try await alice.send(text: "stored-marker-1")
            _ = try await bob.send(text: "stored-marker-2")
            try await aliceLog.wait("bob's message") { $0.messages.count == 1 }
            try await aliceLog.wait("delivery") { $0.delivered == [1] }
            let sessionID = try #require(await alice.sessionID)
            let session = try #require(try store.session(id: sessionID))
            #expect(session.state == .active && session.name == "with bob" && session.joinCode == invite.joinCode)
            let messages = try store.messages(sessionID: sessionID, now: Date())
            #expect(messages.compactMap(\.text).sorted() == ["stored-marker-1", "stored-marker-2"])
            #expect(messages.first { $0.direction == .sent }?.isDelivered == true)
            #expect(try store.pinnedIdentity(sessionID: sessionID)?.isVerified == true)
            try await alice.rename(to: "renamed")
            #expect(try store.session(id: sessionID)?.name == "renamed")
            // Lifetimes are negotiated as the app does; the store applies the agreed one.
            try await alice.proposeLifetime(.oneHour)
            try await bobLog.wait("the proposal") { $0.all.contains(.lifetimeProposed(.oneHour)) }
            try await bob.acceptLifetime(.oneHour)
            try await aliceLog.wait("the agreement") { $0.all.contains(.lifetime(.oneHour)) }
            #expect(try store.session(id: sessionID)?.lifetime == .oneHour)
            #expect(try ephemeralStore.sessions().isEmpty)
            await alice.leave()
            #expect(try store.session(id: sessionID)?.state == .closed)
            await bob.leave()
        }
        #expect(try ephemeralStore.sessions().isEmpty)
        store.close()
        ephemeralStore.close()
    }

    /// With the server's default limits (50 messages/s per socket) and the default pacing,
    /// a burst larger than the server's burst arrives whole: sends wait instead of being
    /// dropped, and acks interleave with the messages.
    @Test func defaultServerLimitsArePacedNotDropped() async throws {
        try await KitTestServer.with { server in
            let alice = ChatFixture.client(server, seed: 1) { $0.relayPacing = .serverDefault }
            let bob = ChatFixture.client(server, seed: 2) { $0.relayPacing = .serverDefault }
            let invite = try await alice.0.invite()
            try await bob.0.join(invite.text)
            _ = try await alice.1.waitForSecurity()
            let count = 250
            try await Self.send(alice.0, "alice", 0..<count)
            try await Self.send(bob.0, "bob", 0..<count)
            try await bob.1.wait("alice's messages", timeout: 120) { $0.messages.count >= count }
            try await alice.1.wait("bob's messages", timeout: 120) { $0.messages.count >= count }
            try await alice.1.wait("delivery reports", timeout: 120) { Set($0.delivered).count >= count }
            ChatFixture.expectMessages(bob.1, (0..<count).map { ChatFixture.text("alice", $0) })
            ChatFixture.expectMessages(alice.1, (0..<count).map { ChatFixture.text("bob", $0) })
            await alice.0.leave()
            await bob.0.leave()
        }
    }

    /// A peer that takes its seat but never speaks: the pairing times out with a typed
    /// error and the session closes (no hang).
    @Test func silentPeerTimesOutThePairing() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            // The timeout fires when the test clock says so, however busy the host is.
            let clock = ManualClock()
            let (alice, aliceLog) = ChatFixture.client(server, seed: 1, clock: clock) {
                $0.pairingTimeout = .seconds(30)
                $0.acceptPollInterval = .seconds(3_600)
                $0.signaling.pingInterval = .seconds(3_600)
            }
            let invite = try await alice.invite()
            let room = try await RoomAPI(transport: NIOHTTPTransport(endpoint: server.endpoint, timeout: .seconds(90)))
                .accept(joinID: invite.joinCode, deviceID: "silent-device")
            let (silent, silentLog, _) = SignalingClientTests.makeClient(server, seed: 9)
            try await silent.join(roomID: room, deviceID: "silent-device")
            try await silentLog.next(where: SignalingClientTests.isReady)
            // Alice saw the room ready when her pairing timer sleeps on the clock.
            try await waitUntil("the pairing timer") { clock.deadlines.contains(ClockInstant.origin.advanced(by: .seconds(30))) }
            clock.advance(by: .seconds(29))
            try await Task.sleep(for: .milliseconds(50))
            #expect(aliceLog.closeReason == nil)
            clock.advance(by: .seconds(1))
            try await aliceLog.wait("the timeout") { $0.closeReason != nil }
            #expect(aliceLog.errors == [.pairingTimedOut])
            #expect(aliceLog.closeReason == .pairingFailed)
            // The creator left the room: the silent peer sees it.
            try await silentLog.next { $0 == .peerLeft }
            await silent.close()
        }
    }

    /// The REST calls and the signaling socket log to the logger the app gave the client,
    /// not to a default one on standard output (where they tore the chat screen and mixed
    /// into `--json` events) — and never the join code or device id.
    @Test func theSessionLogsOnlyToTheInjectedLogger() async throws {
        try await KitTestServer.with { server in
            let logs = LogCapture()
            let (alice, _) = ChatFixture.client(server, seed: 1, logger: logs.logger())
            let invite = try await alice.invite()
            let deviceID = try #require(await alice.deviceID)
            try await server.stop()
            let deadline = ContinuousClock.now + .seconds(120)
            while !logs.all.contains(where: { $0.contains("signaling connection ended") }) {
                guard ContinuousClock.now < deadline else {
                    throw NetworkTestFailure("no signaling log; last: \(logs.all.suffix(5))")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            await alice.leave()
            #expect(logs.all.contains { $0.contains("room API answered") && $0.contains("create") })
            #expect(!logs.all.contains { $0.contains(invite.joinCode) || $0.contains(deviceID) })
        }
    }

    @Test func invalidInvitesAndStatesAreTypedErrors() async throws {
        try await KitTestServer.with { server in
            let (client, _) = ChatFixture.client(server, seed: 1)
            await #expect(throws: ChatError.wrongState) { try await client.send(text: "too early") }
            await #expect(throws: ChatError.invalidInvite) { try await client.join("not an invite") }
            await #expect(throws: ChatError.expired) { try await client.join("123456-orbit-violin-quantum") }
            #expect(await client.state == .idle)
            _ = try await client.invite()
            await #expect(throws: ChatError.wrongState) { try await client.invite() }
            await client.leave()
        }
    }
}
