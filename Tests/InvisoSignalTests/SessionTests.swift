import Foundation
import InvisoCrypto
import InvisoTesting
@testable import InvisoSignal
import Testing

@Suite("Signal sessions")
struct SessionTests {
    // MARK: - Setup, both directions

    @Test("X3DH (v3) and PQXDH (v4): pre-key message, reply, then ratchet both ways", arguments: [false, true])
    func setupBothDirections(kyber: Bool) throws {
        var chat = try Conversation(seed: kyber ? 41 : 40, kyber: kyber)
        let first = try chat.alice.encrypt("hello bob", to: chat.bob.address)
        guard case .preKey(let preKeyMessage) = first else {
            Issue.record("first message must be a PreKeySignalMessage")
            return
        }
        #expect(preKeyMessage.messageVersion == (kyber ? 4 : 3))
        #expect(preKeyMessage.serialized.first == (kyber ? 0x44 : 0x34))
        #expect((preKeyMessage.kyberCiphertext != nil) == kyber)
        #expect(try chat.bob.decrypt(first, from: chat.alice.address, using: &chat.generator) == "hello bob")
        // The one-time pre-key is consumed; the one-time Kyber pre-key too.
        #expect(chat.bob.store.preKeys.isEmpty)
        #expect(chat.bob.store.kyberPreKeys.isEmpty)

        // Until Bob answers, Alice keeps sending pre-key messages that reuse the session.
        let second = try chat.alice.encrypt("still there?", to: chat.bob.address)
        #expect(second.type == .preKey)
        #expect(try chat.bob.decrypt(second, from: chat.alice.address, using: &chat.generator) == "still there?")

        #expect(try chat.bobToAlice("hi alice") == "hi alice")
        let third = try chat.alice.encrypt("now plain", to: chat.bob.address)
        #expect(third.type == .whisper)
        #expect(try chat.bob.decrypt(third, from: chat.alice.address, using: &chat.generator) == "now plain")
        for round in 0..<20 {
            #expect(try chat.aliceToBob("a\(round)") == "a\(round)")
            #expect(try chat.bobToAlice("b\(round)") == "b\(round)")
            if round % 3 == 0 { #expect(try chat.bobToAlice("b\(round)'") == "b\(round)'") }
        }
        #expect(chat.alice.store.sessions[chat.bob.address]?.sessionVersion == (kyber ? 4 : 3))
        #expect(chat.bob.store.sessions[chat.alice.address]?.sessionVersion == (kyber ? 4 : 3))
    }

    @Test("Bob can also start: sessions in the other direction", arguments: [false, true])
    func bobInitiates(kyber: Bool) throws {
        var generator = SeededGenerator(seed: 77)
        var alice = TestParty(name: "alice", registrationID: 1, using: &generator)
        var bob = TestParty(name: "bob", registrationID: 2, using: &generator)
        let bundle = try alice.publishBundle(kyber: kyber, oneTime: false, kyberLastResort: true, using: &generator)
        try SessionBuilder.process(bundle, for: alice.address, store: &bob.store, using: &generator)
        let message = try bob.encrypt("from bob", to: alice.address)
        #expect(try alice.decrypt(message, from: bob.address, using: &generator) == "from bob")
        // A last-resort Kyber pre-key survives its use.
        #expect(alice.store.kyberPreKeys.count == (kyber ? 1 : 0))
        let reply = try alice.encrypt("from alice", to: bob.address)
        #expect(try bob.decrypt(reply, from: alice.address, using: &generator) == "from alice")
    }

    // MARK: - Reordering

    @Test("1,000 messages with random reordering inside the window, both directions", arguments: [false, true])
    func reordering(kyber: Bool) throws {
        var chat = try Conversation(seed: kyber ? 1001 : 1000, kyber: kyber)
        #expect(try chat.aliceToBob("setup") == "setup")
        #expect(try chat.bobToAlice("ack") == "ack")
        var random = SeededGenerator(seed: 99)
        var delivered = 0
        for batch in 0..<10 {
            // Alternate senders so DH ratchet steps interleave with skipped keys.
            let aliceSends = batch % 2 == 0
            var pending: [(Int, CiphertextMessage)] = []
            for index in 0..<100 {
                let text = "m\(batch)-\(index)"
                pending.append(
                    (index, aliceSends ? try chat.alice.encrypt(text, to: chat.bob.address)
                        : try chat.bob.encrypt(text, to: chat.alice.address)))
            }
            pending.shuffle(using: &random)
            for (index, message) in pending {
                let text =
                    aliceSends
                    ? try chat.bob.decrypt(message, from: chat.alice.address, using: &chat.generator)
                    : try chat.alice.decrypt(message, from: chat.bob.address, using: &chat.generator)
                #expect(text == "m\(batch)-\(index)")
                delivered += 1
            }
        }
        #expect(delivered == 1000)
    }

    @Test("Messages from an earlier chain still decrypt after a DH ratchet step")
    func lateMessagesFromOldChain() throws {
        var chat = try Conversation(seed: 5, kyber: true)
        #expect(try chat.aliceToBob("one") == "one")
        let late = try chat.alice.encrypt("late", to: chat.bob.address)
        #expect(try chat.bobToAlice("reply") == "reply")
        #expect(try chat.aliceToBob("new chain") == "new chain")
        #expect(try chat.bob.decrypt(late, from: chat.alice.address, using: &chat.generator) == "late")
    }

    // MARK: - Limits

    @Test("Forward jump: 25,000 accepted, 25,001 rejected with the state unchanged")
    func forwardJumpLimit() throws {
        var chat = try Conversation(seed: 7, kyber: false)
        #expect(try chat.aliceToBob("setup") == "setup")
        #expect(try chat.bobToAlice("ack") == "ack")
        // Alice's new sending chain starts at 0; skip 25,000 keys, send index 25,000.
        var messages: [CiphertextMessage] = []
        for index in 0...25_001 {
            let message = try chat.alice.encrypt("x\(index)", to: chat.bob.address)
            if index == 0 || index == 25_000 || index == 25_001 || index == 24_999 { messages.append(message) }
        }
        let before = chat.bob.sessionSnapshot(with: chat.alice.address)
        // Counter 25,001 from index 0 of the fresh chain: one too far.
        #expect(throws: SignalError.tooFarIntoFuture) {
            _ = try chat.bob.decrypt(messages[3], from: chat.alice.address, using: &chat.generator)
        }
        #expect(chat.bob.sessionSnapshot(with: chat.alice.address) == before)
        // Counter 25,000: exactly at the limit.
        #expect(try chat.bob.decrypt(messages[2], from: chat.alice.address, using: &chat.generator) == "x25000")
        // Only the newest 2,000 skipped keys are kept: 24,999 decrypts, 0 is gone.
        #expect(try chat.bob.decrypt(messages[1], from: chat.alice.address, using: &chat.generator) == "x24999")
        #expect(throws: SignalError.duplicateMessage) {
            _ = try chat.bob.decrypt(messages[0], from: chat.alice.address, using: &chat.generator)
        }
        let record = try #require(chat.bob.store.sessions[chat.alice.address])
        let stored = record.current?.receiverChains.map(\.messageKeys.count).max() ?? 0
        #expect(stored == RatchetConstants.maxMessageKeys - 1)
        // 25,001 is now within reach of the advanced chain.
        #expect(try chat.bob.decrypt(messages[3], from: chat.alice.address, using: &chat.generator) == "x25001")
    }

    @Test("At most five receiving chains are kept")
    func receiverChainLimit() throws {
        var chat = try Conversation(seed: 8, kyber: false)
        var lateFromAlice: [CiphertextMessage] = []
        for round in 0..<7 {
            lateFromAlice.append(try chat.alice.encrypt("late\(round)", to: chat.bob.address))
            #expect(try chat.aliceToBob("r\(round)") == "r\(round)")
            #expect(try chat.bobToAlice("s\(round)") == "s\(round)")
        }
        let record = try #require(chat.bob.store.sessions[chat.alice.address]?.current)
        #expect(record.receiverChains.count == RatchetConstants.maxReceiverChains)
        // The newest chains still hold their skipped keys; the oldest are gone.
        #expect(try chat.bob.decrypt(lateFromAlice[6], from: chat.alice.address, using: &chat.generator) == "late6")
        #expect(throws: SignalError.self) {
            _ = try chat.bob.decrypt(lateFromAlice[0], from: chat.alice.address, using: &chat.generator)
        }
    }

    // MARK: - Replay and tampering

    @Test("Replays are rejected as duplicates, state unchanged", arguments: [false, true])
    func replay(kyber: Bool) throws {
        var chat = try Conversation(seed: 9, kyber: kyber)
        let first = try chat.alice.encrypt("once", to: chat.bob.address)
        #expect(try chat.bob.decrypt(first, from: chat.alice.address, using: &chat.generator) == "once")
        #expect(try chat.bobToAlice("ack") == "ack")
        let second = try chat.alice.encrypt("twice?", to: chat.bob.address)
        #expect(try chat.bob.decrypt(second, from: chat.alice.address, using: &chat.generator) == "twice?")
        let before = chat.bob.sessionSnapshot(with: chat.alice.address)
        #expect(throws: SignalError.duplicateMessage) {
            _ = try chat.bob.decrypt(second, from: chat.alice.address, using: &chat.generator)
        }
        // A replayed pre-key message: its session exists, its key is used.
        #expect(throws: SignalError.duplicateMessage) {
            _ = try chat.bob.decrypt(first, from: chat.alice.address, using: &chat.generator)
        }
        #expect(chat.bob.sessionSnapshot(with: chat.alice.address) == before)
    }

    @Test("Flipping any bit of any byte is rejected and leaves the state unchanged", arguments: [false, true])
    func tamperEveryByte(kyber: Bool) throws {
        var chat = try Conversation(seed: 10, kyber: kyber)
        #expect(try chat.aliceToBob("setup") == "setup")
        #expect(try chat.bobToAlice("ack") == "ack")
        let message = try chat.alice.encrypt("tamper target", to: chat.bob.address)
        let bytes = message.serialized
        let before = chat.bob.sessionSnapshot(with: chat.alice.address)
        var rejected = 0
        for index in bytes.indices {
            for bit in [0, 7] {
                var tampered = bytes
                tampered[index] ^= UInt8(1 << bit)
                do {
                    _ = try SessionCipher.decrypt(
                        type: .whisper, body: tampered, from: chat.alice.address, store: &chat.bob.store,
                        using: &chat.generator)
                    Issue.record("tampered byte \(index) bit \(bit) was accepted")
                } catch {
                    rejected += 1
                }
                #expect(chat.bob.sessionSnapshot(with: chat.alice.address) == before)
            }
        }
        #expect(rejected == bytes.count * 2)
        #expect(try chat.bob.decrypt(message, from: chat.alice.address, using: &chat.generator) == "tamper target")
    }

    @Test("A tampered pre-key message is rejected and consumes no pre-key", arguments: [false, true])
    func tamperPreKeyMessage(kyber: Bool) throws {
        var chat = try Conversation(seed: 11, kyber: kyber)
        let message = try chat.alice.encrypt("first", to: chat.bob.address)
        let bytes = message.serialized
        let preKeys = chat.bob.store.preKeys.count
        let kyberKeys = chat.bob.store.kyberPreKeys.count
        // Two parts of a PreKeySignalMessage are not authenticated in the Signal protocol
        // (libsignal behaves the same): the low nibble of the version byte (old clients
        // wrote 3, current ones 4) and the registration id (field 5, metadata only).
        let registrationField: [UInt8] = [0x28, 0xd7, 0x08]  // tag 5/varint, 1111
        let registrationStart = try #require(
            bytes.indices.first { Array(bytes[$0..<min($0 + 3, bytes.count)]) == registrationField })
        let unauthenticated = Set([0] + Array(registrationStart + 1..<registrationStart + 3))
        // Bits 0 and 7 of every byte; with the 1,569-byte Kyber ciphertext inside, every byte
        // of the first 120 (ids, base and identity keys, the start of the inner message) and
        // every 7th byte after that keeps the test fast.
        let positions = (0..<bytes.count).filter { !kyber || $0 < 120 || $0 % 7 == 0 }
        for index in positions where !unauthenticated.contains(index) {
          for bit: UInt8 in [0x01, 0x80] {
            var tampered = bytes
            tampered[index] ^= bit
            var bob = chat.bob
            do {
                _ = try SessionCipher.decrypt(
                    type: .preKey, body: tampered, from: chat.alice.address, store: &bob.store,
                    using: &chat.generator)
                Issue.record("tampered pre-key message byte \(index) bit \(bit) accepted")
            } catch {}
            #expect(bob.store.sessions.isEmpty)
            #expect(bob.store.preKeys.count == preKeys)
            #expect(bob.store.kyberPreKeys.count == kyberKeys)
            #expect(bob.store.identities.isEmpty)
          }
        }
        #expect(try chat.bob.decrypt(message, from: chat.alice.address, using: &chat.generator) == "first")
    }

    @Test("Truncations of a message never crash and are rejected")
    func truncation() throws {
        var chat = try Conversation(seed: 12, kyber: true)
        let message = try chat.alice.encrypt("cut me", to: chat.bob.address)
        let bytes = message.serialized
        for length in 0..<bytes.count {
            #expect(throws: (any Error).self) {
                _ = try SessionCipher.decrypt(
                    type: .preKey, body: bytes.prefix(length), from: chat.alice.address, store: &chat.bob.store,
                    using: &chat.generator)
            }
        }
        #expect(chat.bob.store.sessions.isEmpty)
    }

    // MARK: - Identity

    @Test("A changed identity key is detected on receive, on send and on a new bundle")
    func identityChange() throws {
        var chat = try Conversation(seed: 13, kyber: true)
        #expect(try chat.aliceToBob("hello") == "hello")
        #expect(try chat.bobToAlice("hi") == "hi")

        // "Bob" reinstalls: new identity, new bundle; Alice must refuse it.
        var generator = SeededGenerator(seed: 1313)
        var newBob = TestParty(name: "bob", registrationID: 3333, using: &generator)
        let bundle = try newBob.publishBundle(kyber: true, using: &generator)
        let before = chat.alice.sessionSnapshot(with: chat.bob.address)
        #expect(throws: SignalError.untrustedIdentity) {
            try SessionBuilder.process(bundle, for: chat.bob.address, store: &chat.alice.store, using: &generator)
        }
        #expect(chat.alice.sessionSnapshot(with: chat.bob.address) == before)

        // A pre-key message from a new identity claiming to be Alice is refused by Bob.
        var mallory = TestParty(name: "alice", registrationID: 4444, using: &generator)
        let bobBundle = try chat.bob.publishBundle(kyber: true, id: 9, using: &generator)
        try SessionBuilder.process(bobBundle, for: chat.bob.address, store: &mallory.store, using: &generator)
        let forged = try mallory.encrypt("it's me, alice", to: chat.bob.address)
        #expect(throws: SignalError.untrustedIdentity) {
            _ = try chat.bob.decrypt(forged, from: chat.alice.address, using: &generator)
        }
        #expect(chat.bob.store.preKeys[109] != nil)
    }

    @Test("Bundles with bad signatures are refused")
    func badBundleSignatures() throws {
        var generator = SeededGenerator(seed: 14)
        var alice = TestParty(name: "alice", registrationID: 1, using: &generator)
        var bob = TestParty(name: "bob", registrationID: 2, using: &generator)
        let good = try bob.publishBundle(kyber: true, using: &generator)
        var badSigned = good.signedPreKeySignature
        badSigned[5] ^= 1
        let bundles = [
            PreKeyBundle(
                registrationID: 2, deviceID: 1, preKey: good.preKey, signedPreKeyID: good.signedPreKeyID,
                signedPreKey: good.signedPreKey, signedPreKeySignature: badSigned, identityKey: good.identityKey,
                kyberPreKey: good.kyberPreKey),
            PreKeyBundle(
                registrationID: 2, deviceID: 1, preKey: good.preKey, signedPreKeyID: good.signedPreKeyID,
                signedPreKey: good.signedPreKey, signedPreKeySignature: good.signedPreKeySignature,
                identityKey: good.identityKey,
                kyberPreKey: good.kyberPreKey.map { ($0.id, $0.publicKey, good.signedPreKeySignature) }),
        ]
        for bundle in bundles {
            #expect(throws: SignalError.invalidSignature) {
                try SessionBuilder.process(bundle, for: bob.address, store: &alice.store, using: &generator)
            }
        }
        #expect(alice.store.sessions.isEmpty)
        #expect(alice.store.identities.isEmpty)
    }

    @Test("Unknown pre-key ids are reported and nothing is stored")
    func unknownPreKeys() throws {
        var chat = try Conversation(seed: 15, kyber: true)
        let message = try chat.alice.encrypt("hello", to: chat.bob.address)
        var bob = chat.bob
        try bob.store.removePreKey(id: 101)
        #expect(throws: SignalError.invalidPreKeyID) {
            _ = try bob.decrypt(message, from: chat.alice.address, using: &chat.generator)
        }
        bob = chat.bob
        try bob.store.markKyberPreKeyUsed(id: 201)
        #expect(throws: SignalError.invalidKyberPreKeyID) {
            _ = try bob.decrypt(message, from: chat.alice.address, using: &chat.generator)
        }
        #expect(bob.store.sessions.isEmpty)
    }

    // MARK: - Archived sessions

    @Test("A new session archives the old one; late messages decrypt by trial decryption")
    func archivedSessions() throws {
        var chat = try Conversation(seed: 16, kyber: true)
        #expect(try chat.aliceToBob("s1") == "s1")
        #expect(try chat.bobToAlice("s1 ack") == "s1 ack")
        let late = try chat.alice.encrypt("late on old session", to: chat.bob.address)
        // Alice starts over from a fresh bundle of Bob's (same identity).
        let bundle = try chat.bob.publishBundle(kyber: true, id: 2, using: &chat.generator)
        try SessionBuilder.process(bundle, for: chat.bob.address, store: &chat.alice.store, using: &chat.generator)
        #expect(try chat.aliceToBob("s2") == "s2")
        #expect(chat.bob.store.sessions[chat.alice.address]?.archivedSessionCount == 1)
        #expect(try chat.bob.decrypt(late, from: chat.alice.address, using: &chat.generator) == "late on old session")
        // The old session became current again for Bob; the new one is archived, not lost.
        #expect(chat.bob.store.sessions[chat.alice.address]?.archivedSessionCount == 1)
        #expect(try chat.aliceToBob("s2 again") == "s2 again")
    }

    @Test("At most 40 archived sessions are kept")
    func archiveLimit() throws {
        var chat = try Conversation(seed: 17, kyber: false)
        for round in 0..<45 {
            let bundle = try chat.bob.publishBundle(kyber: false, oneTime: false, id: UInt32(10 + round), using: &chat.generator)
            try SessionBuilder.process(bundle, for: chat.bob.address, store: &chat.alice.store, using: &chat.generator)
        }
        #expect(chat.alice.store.sessions[chat.bob.address]?.archivedSessionCount == RatchetConstants.maxArchivedStates)
    }

    // MARK: - Records

    @Test("Session records serialize and restore mid-conversation", arguments: [false, true])
    func recordSerialization(kyber: Bool) throws {
        var chat = try Conversation(seed: 18, kyber: kyber)
        let pendingMessage = try chat.alice.encrypt("pending", to: chat.bob.address)
        _ = pendingMessage
        #expect(try chat.aliceToBob("a") == "a")
        let skipped = try chat.bob.encrypt("skipped", to: chat.alice.address)
        #expect(try chat.bobToAlice("b") == "b")

        for party in [chat.alice, chat.bob] {
            for (address, record) in party.store.sessions {
                let bytes = record.serialize()
                let restored = try bytes.withUnsafeBytes { try SessionRecord(serialized: Array($0)) }
                #expect(restored.serialize() == bytes, "\(address)")
            }
        }
        // Restore Alice's record into her store and carry on, including a skipped key.
        let aliceRecord = try #require(chat.alice.store.sessions[chat.bob.address])
        let restored = try aliceRecord.serialize().withUnsafeBytes { try SessionRecord(serialized: Array($0)) }
        try chat.alice.store.storeSession(restored, for: chat.bob.address)
        #expect(try chat.alice.decrypt(skipped, from: chat.bob.address, using: &chat.generator) == "skipped")
        #expect(try chat.aliceToBob("after restore") == "after restore")
    }

    @Test("Corrupt records are rejected with invalidRecord")
    func corruptRecords() throws {
        var chat = try Conversation(seed: 19, kyber: false)
        #expect(try chat.aliceToBob("a") == "a")
        let bytes = try #require(chat.alice.store.sessions[chat.bob.address]).serialize().withUnsafeBytes { Array($0) }
        // A prefix that ends on a field boundary may be a valid (smaller) record; every
        // other prefix must fail cleanly, and none may crash.
        var rejected = 0
        for length in 0..<bytes.count {
            do {
                _ = try SessionRecord(serialized: Array(bytes.prefix(length)))
            } catch {
                #expect(error == .invalidRecord)
                rejected += 1
            }
        }
        #expect(rejected > bytes.count - 20)
        #expect(throws: SignalError.invalidRecord) { _ = try SessionRecord(serialized: [0xff, 0xff]) }
        #expect(try SessionRecord(serialized: [0x08, 0x01]).hasCurrentSession == false)
    }

    @Test("Descriptions carry no key material")
    func descriptions() throws {
        let chat = try Conversation(seed: 20, kyber: false)
        let record = try #require(chat.alice.store.sessions[chat.bob.address])
        #expect(record.description == "SessionRecord(current: v3, archived: 0)")
        #expect("\(chat.alice.store.identity.privateKey)" == "ECPrivateKey(<redacted>)")
        #expect(String(reflecting: chat.alice.store.identity.privateKey) == "ECPrivateKey(<redacted>)")
    }
}
