import Foundation
import InvisoCrypto
import InvisoStore
import Testing

@Suite("InvisoStore round trips")
struct StoreRoundTripTests {
    @Test("sessions, messages, identities and secrets read back, also after reopening")
    func roundTrip() throws {
        try Fixture.withStore { store, directory in
            let alice = Fixture.session("s1")
            let bob = Fixture.session("s2", lifetime: .oneDay, name: "Bob", state: .pending, at: Fixture.t0.addingTimeInterval(5))
            try store.saveSession(bob)
            try store.saveSession(alice)
            try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "hello", at: Fixture.t0)
            try store.appendMessage(
                id: "m2", sessionID: "s1", direction: .received, kind: "location", body: Data([1, 2, 3]),
                at: Fixture.t0.addingTimeInterval(1)
            )
            #expect(try store.markDelivered(messageID: "m1", sessionID: "s1"))
            #expect(try !store.markDelivered(messageID: "nope", sessionID: "s1"))
            let identity = PinnedIdentity(publicKey: Data(repeating: 7, count: 32), safetyNumber: "12345 67890", isVerified: true)
            try store.savePinnedIdentity(identity, sessionID: "s1")
            try store.saveSecret(SecretBytes([9, 8, 7]), kind: .ratchet, sessionID: "s1")
            try store.saveSecret(SecretBytes([1]), kind: .ratchet, sessionID: "s1")
            store.close()

            let reopened = try InvisoStore(directory: directory, keySource: Fixture.source)
            #expect(try reopened.sessions() == [alice, bob])
            #expect(try reopened.session(id: "s2") == bob)
            #expect(try reopened.session(id: "none") == nil)
            let messages = try reopened.messages(sessionID: "s1", now: Fixture.t0)
            #expect(messages.map(\.id) == ["m1", "m2"])
            #expect(messages[0].text == "hello")
            #expect(messages[0].direction == .sent)
            #expect(messages[0].isDelivered)
            #expect(messages[0].createdAt == Fixture.t0)
            #expect(messages[0].expiresAt == Fixture.t0.addingTimeInterval(7 * 86_400))
            #expect(messages[1].kind == "location")
            #expect(messages[1].body == Data([1, 2, 3]))
            #expect(messages[1].text == nil)
            #expect(!messages[1].isDelivered)
            #expect(try reopened.pinnedIdentity(sessionID: "s1") == identity)
            #expect(try reopened.pinnedIdentity(sessionID: "s2") == nil)
            #expect(try reopened.secret(kind: .ratchet, sessionID: "s1") == SecretBytes([1]))
            #expect(try reopened.secret(kind: .channel, sessionID: "s1") == nil)
        }
    }

    @Test("rename, state changes and upserts")
    func updates() throws {
        try Fixture.withStore { store, directory in
            var session = Fixture.session("s1", state: .pending)
            try store.saveSession(session)
            try store.renameSession(id: "s1", to: "Work")
            try store.setState(.active, sessionID: "s1")
            session.name = "Work"
            session.state = .active
            #expect(try store.session(id: "s1") == session)
            session.roomID = "another-room"
            try store.saveSession(session)
            #expect(try store.session(id: "s1")?.roomID == "another-room")
            #expect(try store.sessions().count == 1)
            #expect(throws: StoreError.sessionNotFound) { try store.renameSession(id: "zz", to: "x") }
            #expect(throws: StoreError.sessionNotFound) { try store.setState(.active, sessionID: "zz") }
            #expect(throws: StoreError.sessionNotFound) { try store.setLifetime(.oneHour, sessionID: "zz") }
            #expect(throws: StoreError.sessionNotFound) {
                try store.appendMessage(id: "m", sessionID: "zz", direction: .sent, text: "x", at: Fixture.t0)
            }
            #expect(throws: StoreError.sessionNotFound) { try store.saveSecret(SecretBytes([1]), kind: .ratchet, sessionID: "zz") }
            #expect(throws: StoreError.sessionNotFound) {
                try store.savePinnedIdentity(PinnedIdentity(publicKey: Data()), sessionID: "zz")
            }
        }
    }

    @Test("a message ID is stored once per session")
    func duplicateMessage() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1"))
            try store.saveSession(Fixture.session("s2"))
            try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "a", at: Fixture.t0)
            try store.appendMessage(id: "m1", sessionID: "s2", direction: .sent, text: "b", at: Fixture.t0)
            #expect(throws: StoreError(.messageExists)) {
                try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "c", at: Fixture.t0)
            }
            #expect(try store.messages(sessionID: "s1", now: Fixture.t0).map(\.text) == ["a"])
        }
    }

    @Test("descriptions leave out sealed fields")
    func redactedDescriptions() throws {
        let session = Fixture.session("s1", name: "Secret Name")
        let message = StoredMessage(
            id: "m1", sessionID: "s1", direction: .sent, kind: "text", body: Data("hush".utf8),
            createdAt: Fixture.t0, expiresAt: Fixture.t0, isDelivered: false
        )
        for text in [String(describing: session), String(reflecting: session), dumped(session)] {
            #expect(!text.contains("Secret Name"))
            #expect(!text.contains("482913"))
        }
        for text in [String(describing: message), String(reflecting: message), dumped(message)] {
            #expect(!text.contains("hush"))
        }
    }

    private func dumped(_ value: some Any) -> String {
        var output = ""
        dump(value, to: &output)
        return output
    }
}
