import InvisoCrypto
import InvisoSignal
import Testing

@testable import InvisoOffline

/// The offline book's rules, two books talking through envelopes and texts: invites,
/// PQXDH and X3DH, rotation on injected time, order, replays, tampering, changed identities.
@Suite("Offline book")
struct BookTests {
    static let day: Int64 = 24 * 3600 * 1000
    static let start: Int64 = 1_795_743_453_000

    /// Everything that must not change when an operation is refused.
    struct Snapshot: Equatable {
        let generations: [UInt32]
        let invitesWritten: UInt32
        let contacts: [String]
        let sessions: [SecretBytes]

        init(_ book: OfflineBook) {
            generations = book.account.generations.map(\.number)
            invitesWritten = book.account.invitesWritten
            contacts = book.contacts.map {
                "\($0.id) \($0.name) \($0.address) \($0.verified) \($0.identityKey.serialized) \(String(describing: $0.pendingIdentityKey?.serialized)) \($0.knownGeneration)"
            }
            sessions = book.contacts.map { $0.session.serialize() }
        }
    }

    /// Alice invites, Bob opens the invite and writes first; Alice adds Bob from that
    /// message. Returns both books, talking.
    static func pair(kyber: Bool = true, now: Int64 = start) throws -> (alice: OfflineBook, bob: OfflineBook) {
        var generator = SystemRandomNumberGenerator()
        var alice = try OfflineBook.create(now: now, using: &generator)
        var bob = try OfflineBook.create(now: now, using: &generator)
        var invite = try alice.invite(now: now, using: &generator)
        if !kyber {
            invite.preKeyResponse?.kyberPreKeyID = nil
            invite.preKeyResponse?.kyberPublicKey = nil
            invite.preKeyResponse?.kyberSignature = nil
        }
        guard case .invite(let contact, added: true) = try bob.open(invite, as: "alice", now: now, using: &generator) else {
            Issue.record("the invite did not add a contact")
            return (alice, bob)
        }
        #expect(contact.sessionVersion == (kyber ? 4 : 3))
        let hello = try bob.seal("hello alice", to: "alice", now: now + 1, using: &generator)
        #expect(hello.envelope.kind == .message && hello.envelope.ciphertextType == 3)
        guard case .message(let message, let from, added: true) = try alice.open(hello.envelope, as: "bob", now: now + 2, using: &generator)
        else {
            Issue.record("the first message did not add its sender")
            return (alice, bob)
        }
        #expect(message.text == "hello alice" && from.name == "bob" && from.sessionVersion == (kyber ? 4 : 3))
        return (alice, bob)
    }

    @Test("PQXDH and X3DH: invite, first message, answers both ways", arguments: [true, false])
    func conversation(kyber: Bool) throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair(kyber: kyber)
        for round in 0..<3 {
            let toBob = try alice.seal("alice \(round)", to: "bob", now: Self.start + 10 + Int64(round), using: &generator)
            #expect(toBob.envelope.ciphertextType == 2 && toBob.message.direction == .sent)
            guard case .message(let received, _, added: false) = try bob.open(toBob.envelope, now: Self.start + 20, using: &generator)
            else { Issue.record("bob did not read alice"); return }
            #expect(received.text == "alice \(round)" && received.direction == .received && received.sentAt == toBob.envelope.timestamp)
            let toAlice = try bob.seal("bob \(round) ✓", to: "alice", now: Self.start + 30, using: &generator)
            guard case .message(let back, _, _) = try alice.open(toAlice.envelope, now: Self.start + 40, using: &generator)
            else { Issue.record("alice did not read bob"); return }
            #expect(back.text == "bob \(round) ✓")
        }
    }

    @Test("every encoding and form, both directions, through the paste reader")
    func throughText() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        var now = Self.start + 100
        for form in OfflineEnvelope.Form.allCases {
            for encoding in OfflineEncoding.allCases {
                now += 1
                let text = encoding.encode(try alice.seal("to bob via \(encoding) \(form)", to: "bob", now: now, using: &generator).envelope, form: form, using: &generator)
                let found = try PasteReader.read(text)
                #expect(found.encoding == encoding && found.form == form)
                guard case .message(let message, _, _) = try bob.open(found.envelope, now: now, using: &generator) else { Issue.record("no message"); return }
                #expect(message.text == "to bob via \(encoding) \(form)")
                let reply = encoding.encode(try bob.seal("to alice \(encoding) \(form)", to: "alice", now: now, using: &generator).envelope, form: form, using: &generator)
                guard case .message(let back, _, _) = try alice.open(try PasteReader.read(reply).envelope, now: now, using: &generator) else { Issue.record("no reply"); return }
                #expect(back.text == "to alice \(encoding) \(form)")
            }
        }
    }

    @Test("messages opened out of order all read; a replay is refused as already read, the book unchanged")
    func orderAndReplay() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        let sealed = try (0..<4).map { index in try bob.seal("m\(index)", to: "alice", now: Self.start + 10 + Int64(index), using: &generator) }
        for index in [3, 0, 2, 1] {
            guard case .message(let message, _, _) = try alice.open(sealed[index].envelope, now: Self.start + 50, using: &generator)
            else { Issue.record("no message"); return }
            #expect(message.text == "m\(index)")
        }
        let before = Snapshot(alice)
        for envelope in sealed.map(\.envelope) {
            #expect(throws: OfflineError(.alreadyRead)) { try alice.open(envelope, now: Self.start + 60, using: &generator) }
        }
        #expect(Snapshot(alice) == before)
    }

    @Test("a tampered message (every ciphertext byte flipped in turn) is refused and changes nothing: pre-key and ordinary messages")
    func tampering() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        // Bob has not heard from Alice yet: a pre-key message (header and Kyber ciphertext
        // included) on a session Alice already has.
        let preKey = try bob.seal("secret", to: "alice", now: Self.start + 10, using: &generator)
        #expect(preKey.envelope.ciphertextType == 3)
        try Self.expectTamperRefused(preKey.envelope, text: "secret", book: &alice)
        let answer = try alice.seal("answer", to: "bob", now: Self.start + 20, using: &generator)
        _ = try bob.open(answer.envelope, now: Self.start + 21, using: &generator)
        let ordinary = try bob.seal("second secret", to: "alice", now: Self.start + 30, using: &generator)
        #expect(ordinary.envelope.ciphertextType == 2)
        try Self.expectTamperRefused(ordinary.envelope, text: "second secret", book: &alice)
    }

    /// Flips every byte of the envelope's ciphertext in turn: each is refused and leaves the
    /// book as it was; the untouched envelope then reads.
    static func expectTamperRefused(_ envelope: OfflineEnvelope, text: String, book: inout OfflineBook) throws {
        var generator = SystemRandomNumberGenerator()
        let before = Snapshot(book)
        let ciphertext = try #require(envelope.ciphertext)
        var refused = 0
        for index in ciphertext.indices {
            var tampered = envelope
            tampered.ciphertext![index] ^= 0x01
            #expect(throws: OfflineError.self, "byte \(index)") { try book.open(tampered, now: start + 40, using: &generator) }
            #expect(Snapshot(book) == before, "byte \(index)")
            refused += 1
        }
        #expect(refused == ciphertext.count && refused > 50)
        guard case .message(let message, _, _) = try book.open(envelope, now: start + 40, using: &generator) else {
            Issue.record("no message")
            return
        }
        #expect(message.text == text)
    }

    @Test("after two days the next message carries our new keys (a rotation); the old generation goes two days later")
    func rotation() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        let later = Self.start + 2 * Self.day + 5
        let rotated = try alice.seal("new keys", to: "bob", now: later, using: &generator)
        #expect(rotated.envelope.kind == .rotation && rotated.message.kind == .rotation)
        #expect(alice.account.generations.map(\.number) == [1, 2])
        #expect(rotated.envelope.preKeyResponse?.devices.first?.signedPreKey.keyID == 2)
        guard case .message(let message, _, _) = try bob.open(rotated.envelope, now: later, using: &generator) else { Issue.record("no message"); return }
        #expect(message.text == "new keys" && message.kind == .rotation)
        // Only the first message after a rotation carries the keys.
        #expect(try alice.seal("plain again", to: "bob", now: later + 1, using: &generator).envelope.kind == .message)
        let answer = try bob.seal("got them", to: "alice", now: later + 2, using: &generator)
        guard case .message(let back, _, _) = try alice.open(answer.envelope, now: later + 3, using: &generator) else { Issue.record("no answer"); return }
        #expect(back.text == "got them")

        let muchLater = later + 2 * Self.day
        try alice.rotate(now: muchLater, using: &generator)
        #expect(alice.account.generations.map(\.number) == [2, 3])
        let still = try bob.seal("still here", to: "alice", now: muchLater, using: &generator)
        guard case .message(let last, _, _) = try alice.open(still.envelope, now: muchLater, using: &generator) else { Issue.record("no message"); return }
        #expect(last.text == "still here")
    }

    @Test("an invite in flight works through the grace period and not after it")
    func inviteInFlight() throws {
        var generator = SystemRandomNumberGenerator()
        var alice = try OfflineBook.create(now: Self.start, using: &generator)
        let invite = try alice.invite(now: Self.start, using: &generator)
        try alice.rotate(now: Self.start + 2 * Self.day, using: &generator)

        var carol = try OfflineBook.create(now: Self.start, using: &generator)
        _ = try carol.open(invite, as: "alice", now: Self.start, using: &generator)
        let early = try carol.seal("in time", to: "alice", now: Self.start + 3 * Self.day, using: &generator)
        guard case .message(let message, _, _) = try alice.open(early.envelope, as: "carol", now: Self.start + 3 * Self.day, using: &generator)
        else { Issue.record("no message"); return }
        #expect(message.text == "in time")

        var dave = try OfflineBook.create(now: Self.start, using: &generator)
        _ = try dave.open(invite, as: "alice", now: Self.start, using: &generator)
        let late = try dave.seal("too late", to: "alice", now: Self.start + 4 * Self.day, using: &generator)
        #expect(throws: OfflineError(.notForUs)) {
            try alice.open(late.envelope, as: "dave", now: Self.start + 4 * Self.day, using: &generator)
        }
    }

    @Test("a known contact's changed identity is refused until trusted; then it reads")
    func changedIdentity() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        // Someone else claims Bob's address with their own keys.
        var mallory = try OfflineBook.create(now: Self.start, using: &generator)
        var forged = try mallory.invite(now: Self.start, using: &generator)
        forged.address = bob.account.address
        let before = Snapshot(alice)
        #expect(throws: OfflineError(.identityChanged)) { try alice.open(forged, now: Self.start + 5, using: &generator) }
        let contact = try #require(alice.contact(named: "bob"))
        #expect(contact.pendingIdentityKey == mallory.account.identity.identityKey)
        #expect(contact.identityKey == bob.account.identity.identityKey)
        #expect(Snapshot(alice).sessions == before.sessions)
        #expect(throws: OfflineError(.identityChanged)) { try alice.seal("hi", to: "bob", now: Self.start + 6, using: &generator) }

        try alice.verify("bob")
        #expect(try alice.trust("bob"))
        let trusted = try #require(alice.contact(named: "bob"))
        #expect(trusted.identityKey == mallory.account.identity.identityKey && !trusted.verified && trusted.pendingIdentityKey == nil)
        guard case .invite(_, added: false) = try alice.open(forged, now: Self.start + 7, using: &generator) else { Issue.record("not read"); return }
        #expect(!(try alice.trust("bob")))
    }

    @Test("our own envelopes, empty envelopes, unknown senders and nameless invites are refused")
    func refusals() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        let own = try alice.invite(now: Self.start, using: &generator)
        #expect(throws: OfflineError(.ownMessage)) { try alice.open(own, as: "me", now: Self.start, using: &generator) }
        var empty = own
        empty.preKeyResponse = nil
        #expect(throws: OfflineError(.notAnEnvelope)) { try bob.open(empty, now: Self.start, using: &generator) }

        var carol = try OfflineBook.create(now: Self.start, using: &generator)
        let carolInvite = try carol.invite(now: Self.start, using: &generator)
        #expect(throws: OfflineError(.nameNeeded)) { try alice.open(carolInvite, now: Self.start, using: &generator) }
        #expect(throws: OfflineError(.contactExists)) { try alice.open(carolInvite, as: "BOB", now: Self.start, using: &generator) }
        _ = try carol.open(own, as: "alice", now: Self.start, using: &generator)
        let first = try carol.seal("hi", to: "alice", now: Self.start + 1, using: &generator)
        #expect(throws: OfflineError(.unknownSender)) { try alice.open(first.envelope, now: Self.start + 2, using: &generator) }
        #expect(throws: OfflineError(.messageTooLong)) {
            try alice.seal(String(repeating: "x", count: OfflineBook.maxPlaintextByteCount + 1), to: "bob", now: Self.start, using: &generator)
        }
        #expect(throws: OfflineError(.contactNotFound)) { try alice.seal("hi", to: "nobody", now: Self.start, using: &generator) }
        var badKeys = carolInvite
        badKeys.preKeyResponse!.devices[0].signedPreKey.signature[0] ^= 1
        #expect(throws: OfflineError(.invalidKeys)) { try alice.open(badKeys, as: "carol", now: Self.start, using: &generator) }
        #expect(alice.contact(named: "carol") == nil)
    }

    @Test("the safety number: 60 digits, the same on both sides, as SecureChats computes it")
    func safetyNumber() throws {
        let (alice, bob) = try Self.pair()
        let fromAlice = try alice.safetyNumber(for: "bob")
        let fromBob = try bob.safetyNumber(for: "alice")
        #expect(fromAlice.displayable == fromBob.displayable)
        #expect(fromAlice.displayable.digits.count == 60 && fromAlice.displayable.digits.allSatisfy(\.isNumber))
        let expected = try Fingerprint(
            version: 2, iterations: 5200, localStableID: Array(bob.account.address.utf8),
            localIdentity: bob.account.identity.identityKey, remoteStableID: Array(alice.account.address.utf8),
            remoteIdentity: alice.account.identity.identityKey)
        #expect(expected.displayable == fromAlice.displayable)
    }

    @Test("extreme times and lifetimes saturate instead of trapping")
    func extremeTimes() throws {
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair()
        try alice.setLifetime(Int64.max, for: "bob")
        let sealed = try bob.seal("late", to: "alice", now: Self.start + 5, using: &generator)
        guard case .message(let message, _, _) = try alice.open(sealed.envelope, now: Int64.max - 1, using: &generator) else {
            Issue.record("no message")
            return
        }
        #expect(message.expiresAt == Int64.max)
        var early = try OfflineBook.create(now: Int64.max, using: &generator)
        #expect(!(try early.rotate(now: Int64.min, using: &generator)))
        #expect(try early.rotate(now: Int64.max, using: &generator) == false)
    }

    @Test("contacts: rename, verify, delete")
    func contacts() throws {
        var (alice, _) = try Self.pair()
        try alice.rename("bob", to: "Robert")
        #expect(alice.contact(named: "robert")?.name == "Robert" && alice.contact(named: "bob") == nil)
        #expect(throws: OfflineError(.nameNeeded)) { try alice.rename("Robert", to: " ") }
        #expect(throws: OfflineError(.nameNeeded)) { try alice.rename("Robert", to: "Rob\u{200E}ert") }
        #expect(throws: OfflineError(.nameNeeded)) { try alice.rename("Robert", to: String(repeating: "r", count: 65)) }
        try alice.rename("Robert", to: "  Bob Smith\n")
        #expect(alice.contact(named: "bob smith")?.name == "Bob Smith")
        try alice.rename("bob smith", to: "Robert")
        try alice.verify("Robert")
        #expect(alice.contact(named: "Robert")?.verified == true)
        try alice.delete("robert")
        #expect(alice.contacts.isEmpty)
        #expect(throws: OfflineError(.contactNotFound)) { try alice.delete("robert") }
    }
}
