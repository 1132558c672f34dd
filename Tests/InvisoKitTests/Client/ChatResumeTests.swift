import Crypto
import Foundation
import InvisoCrypto
@testable import InvisoKit
import InvisoServer
import InvisoStore
import InvisoTesting
import Testing

@Suite("ChatClient resume against the real server", .timeLimit(.minutes(6)))
struct ChatResumeTests {
    /// A real server and a store in a temporary directory (removed afterwards).
    static func withServerAndStore(
        limits: ServerLimits = ChatFixture.fastLimits, _ body: (KitTestServer, InvisoStore) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try InvisoStore(directory: directory, keySource: .key(.init(size: .bits256)))
        defer { store.close() }
        try await KitTestServer.with(limits: limits) { server in try await body(server, store) }
    }

    /// Alice's process "dies" (its client suspends: signaling closed, no leave) with a
    /// message possibly in flight; Bob keeps sending; a new client on Alice's store
    /// resumes. Both ways continue with every message once, in order, ids continuing, and
    /// the ratchet still verifying; leaving afterwards wipes the stored state.
    @Test func aResumedSessionContinuesBothWays() async throws {
        try await Self.withServerAndStore { server, store in
            let alice = ChatFixture.client(server, seed: 1, store: store)
            let bob = ChatFixture.client(server, seed: 2)
            let invite = try await alice.0.invite()
            try await bob.0.join(invite.text)
            let security = try await alice.1.waitForSecurity()
            try await ChatFixture.exchange(alice, bob, count: 3)
            let sessionID = try #require(await alice.0.sessionID)
            #expect(try store.secret(kind: .ratchet, sessionID: sessionID) != nil)

            _ = try await alice.0.send(text: ChatFixture.text("alice", 3))
            await alice.0.suspend()
            try await alice.1.wait("the suspension") { $0.closeReason == .suspended }
            #expect(try store.session(id: sessionID)?.state == .active)
            try await ChatFixture.send(bob.0, "bob", 3..<5)

            let resumed = ChatFixture.client(server, seed: 3, store: store)
            try await resumed.0.resume(sessionID: sessionID)
            #expect(await resumed.0.sessionID == sessionID)
            try await ChatFixture.send(resumed.0, "alice", 4..<6)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 6 }
            try await resumed.1.wait("bob's messages") { $0.messages.count >= 2 }
            try await bob.1.wait("bob's delivery reports") { $0.delivered.count >= 5 }
            try await resumed.1.wait("alice's delivery reports") { Set($0.delivered).isSuperset(of: [5, 6]) }
            try await ChatFixture.send(bob.0, "bob", 5..<6)
            try await resumed.1.wait("bob's last message") { $0.messages.count >= 3 }

            ChatFixture.expectMessages(bob.1, (0..<6).map { ChatFixture.text("alice", $0) })
            let after = resumed.1.messages
            #expect(after.map(\.id) == [4, 5, 6])
            #expect(after.map(\.payload) == (3..<6).map { ChatPayload.text(ChatFixture.text("bob", $0)) })
            // Bob's sixth message may be acknowledged already, or not yet.
            let bobDelivered = bob.1.delivered
            #expect(bobDelivered.count >= 5 && bobDelivered == Array(1...UInt64(bobDelivered.count)))
            let resumedSecurity = try #require(await resumed.0.security)
            #expect(resumedSecurity.isVerified && resumedSecurity.safetyNumber == security.safetyNumber)
            #expect(resumed.1.errors.isEmpty && bob.1.errors.isEmpty)

            await resumed.0.leave()
            #expect(try store.secret(kind: .ratchet, sessionID: sessionID) == nil)
            #expect(try store.session(id: sessionID)?.state == .closed)
            await bob.0.leave()
        }
    }

    /// The server goes away for longer than Alice's client retries: her session ends with
    /// `connectionLost` but stays stored, and resumes once the server is back.
    @Test func aSessionWhoseConnectionWasLostStaysResumable() async throws {
        try await Self.withServerAndStore { server, store in
            let alice = ChatFixture.client(server, seed: 1, store: store) {
                $0.signaling.reconnect = ReconnectPolicy(base: .milliseconds(20), factor: 1, cap: .milliseconds(20), maxAttempts: 2)
            }
            let bob = ChatFixture.client(server, seed: 2)
            let invite = try await alice.0.invite()
            try await bob.0.join(invite.text)
            try await ChatFixture.exchange(alice, bob, count: 2)
            let sessionID = try #require(await alice.0.sessionID)

            let port = server.port
            try await server.stop()
            try await alice.1.wait("the lost connection") { $0.closeReason == .connectionLost }
            #expect(try store.session(id: sessionID)?.state == .active)
            #expect(try store.secret(kind: .ratchet, sessionID: sessionID) != nil)
            try await server.start(port: port)

            let resumed = ChatFixture.client(server, seed: 3, store: store)
            try await resumed.0.resume(sessionID: sessionID)
            try await ChatFixture.send(resumed.0, "alice", 2..<4)
            try await ChatFixture.send(bob.0, "bob", 2..<4)
            try await bob.1.wait("alice's messages") { $0.messages.count >= 4 }
            try await resumed.1.wait("bob's messages") { $0.messages.count >= 2 }
            ChatFixture.expectMessages(bob.1, (0..<4).map { ChatFixture.text("alice", $0) })
            #expect(resumed.1.messages.map(\.payload) == (2..<4).map { ChatPayload.text(ChatFixture.text("bob", $0)) })
            await resumed.0.leave()
            await bob.0.leave()
        }
    }

    /// The process stops after messages arrived but before a save covered them (here: the
    /// saved state is put back to one from before they came, as a crash would leave it;
    /// no ack for them left, so Bob resends them). The resumed session opens them again,
    /// finds them already stored and does not report them twice.
    @Test func messagesReceivedAfterTheLastSaveAreNotReportedTwice() async throws {
        try await Self.withServerAndStore { server, store in
            // Alice holds her acks back, so Bob keeps the two messages unacknowledged.
            let alice = ChatFixture.client(server, seed: 1, store: store) { $0.ackDelay = .seconds(120) }
            let bob = ChatFixture.client(server, seed: 2)
            let invite = try await alice.0.invite()
            try await bob.0.join(invite.text)
            _ = try await alice.1.waitForSecurity()
            let sessionID = try #require(await alice.0.sessionID)
            try await alice.1.wait("the first save") { _ in (try? store.secret(kind: .ratchet, sessionID: sessionID)) != nil }
            let beforeTheMessages = try #require(try store.secret(kind: .ratchet, sessionID: sessionID))

            try await ChatFixture.send(bob.0, "bob", 0..<2)
            try await alice.1.wait("bob's messages") { $0.messages.count >= 2 }
            await alice.0.suspend()
            try store.saveSecret(beforeTheMessages, kind: .ratchet, sessionID: sessionID)

            let resumed = ChatFixture.client(server, seed: 3, store: store)
            try await resumed.0.resume(sessionID: sessionID)
            try await ChatFixture.send(bob.0, "bob", 2..<3)
            try await resumed.1.wait("bob's third message") { $0.messages.count >= 1 }
            try await bob.1.wait("bob's delivery reports") { $0.delivered.count >= 3 }
            #expect(resumed.1.messages.map(\.payload) == [.text(ChatFixture.text("bob", 2))])
            let stored = try store.messages(sessionID: sessionID, now: Date())
            #expect(stored.filter { $0.direction == .received }.count == 3)
            await resumed.0.leave()
            await bob.0.leave()
        }
    }

    @Test func resumingNeedsStoredState() async throws {
        try await Self.withServerAndStore { server, store in
            let (noStore, _) = ChatFixture.client(server, seed: 1)
            await #expect(throws: ChatError.storage) { try await noStore.resume(sessionID: "none") }
            let (client, _) = ChatFixture.client(server, seed: 2, store: store)
            await #expect(throws: ChatError.storage) { try await client.resume(sessionID: "none") }
            // A session whose state does not parse.
            let session = StoredSession(
                id: "S1", createdAt: Date(), state: .active, lifetime: .oneDay, name: "", serverURL: "",
                joinCode: nil, roomID: nil, deviceID: nil, protocolVersion: 2)
            try store.saveSession(session)
            try store.saveSecret(SecretBytes([1, 2, 3]), kind: .ratchet, sessionID: "S1")
            await #expect(throws: ChatError.storage) { try await client.resume(sessionID: "S1") }
            #expect(await client.state == .idle)
        }
    }

    /// The store stops taking the session's state (another process deleted it): a message
    /// sealed after that is withheld — a frame sealed with state the store does not hold
    /// would be sealed again with the same keys after a crash — and the failure is reported.
    @Test func framesSealedWithUnsavedStateAreWithheld() async throws {
        try await Self.withServerAndStore { server, store in
            let alice = ChatFixture.client(server, seed: 1, store: store)
            let bob = ChatFixture.client(server, seed: 2)
            let invite = try await alice.0.invite()
            try await bob.0.join(invite.text)
            try await ChatFixture.exchange(alice, bob, count: 2)
            let sessionID = try #require(await alice.0.sessionID)
            try store.leaveSession(id: sessionID)
            _ = try await alice.0.send(text: "sealed with unsaved state")
            try await alice.1.wait("the storage error") { $0.errors.contains(.storage) }
            // Withheld: it never reaches bob (2 s is ample for a delivered frame here).
            try await Task.sleep(for: .seconds(2))
            #expect(bob.1.messages.count == 2)
            #expect(await alice.0.unacknowledgedCount == 1)
            await alice.0.leave()
            await bob.0.leave()
        }
    }
}
