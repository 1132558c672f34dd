internal import InvisoCrypto
internal import InvisoSignal
internal import InvisoTesting
internal import InvisoFuzzSupport

/// A deterministic conversation: Bob's store after receiving Alice's first (pre-key)
/// message and replying, Alice's next messages, and a fresh Bob store for pre-key input.
struct SignalFixture: Sendable {
    let alice = ProtocolAddress(name: "alice", deviceID: 1)
    let bob = ProtocolAddress(name: "bob", deviceID: 1)
    /// Bob, fresh: pre-keys published, no session yet.
    let freshBob: InMemorySignalProtocolStore
    /// Bob after the first exchange.
    let establishedBob: InMemorySignalProtocolStore
    /// Alice's first message (type 3) and two later ones (type 2, counters 0 and 1).
    let preKeyMessage: [UInt8]
    let whisperMessages: [[UInt8]]
    let texts: [[UInt8]]
    /// A serialized session record and a sender-key message pair.
    let record: [UInt8]

    init() {
        do {
            var random = SeededGenerator(seed: 0x5167_6e61_6c46_757a)
            var aliceStore = InMemorySignalProtocolStore(identity: .generate(using: &random), registrationID: 7)
            let bobIdentity = IdentityKeyPair.generate(using: &random)
            var bobStore = InMemorySignalProtocolStore(identity: bobIdentity, registrationID: 9)
            let signed = SignedPreKeyRecord.generate(id: 1, timestamp: 0, identity: bobIdentity, using: &random)
            let oneTime = PreKeyRecord(id: 2, keyPair: .generate(using: &random))
            let kyber = try KyberPreKeyRecord.generate(
                id: 3, timestamp: 0, isLastResort: false, identity: bobIdentity, using: &random)
            try bobStore.storeSignedPreKey(signed)
            try bobStore.storePreKey(oneTime)
            try bobStore.storeKyberPreKey(kyber)
            freshBob = bobStore
            let bundle = PreKeyBundle(
                registrationID: 9, deviceID: 1, preKey: (2, oneTime.keyPair.publicKey), signedPreKeyID: 1,
                signedPreKey: signed.keyPair.publicKey, signedPreKeySignature: signed.signature,
                identityKey: bobIdentity.identityKey, kyberPreKey: (3, kyber.keyPair.publicKey, kyber.signature))
            try SessionBuilder.process(bundle, for: bob, store: &aliceStore, using: &random)
            texts = [Array("first".utf8), Array("second".utf8), Array("third".utf8)]
            let first = try SessionCipher.encrypt(texts[0], for: bob, store: &aliceStore)
            preKeyMessage = first.serialized
            _ = try SessionCipher.decrypt(type: .preKey, body: first.serialized, from: alice, store: &bobStore, using: &random)
            let reply = try SessionCipher.encrypt([0x6f, 0x6b], for: alice, store: &bobStore)
            _ = try SessionCipher.decrypt(type: reply.type, body: reply.serialized, from: bob, store: &aliceStore, using: &random)
            whisperMessages = [
                try SessionCipher.encrypt(texts[1], for: bob, store: &aliceStore).serialized,
                try SessionCipher.encrypt(texts[2], for: bob, store: &aliceStore).serialized,
            ]
            establishedBob = bobStore
            record = try bobStore.loadSession(for: alice)!.serialize().withUnsafeBytes { Array($0) }
        } catch {
            fatalError("fixture: \(error)")
        }
    }
}

let fixture = SignalFixture()

/// The one entry function shared by libFuzzer and the replay tool. The first byte picks
/// a scenario; the rest is the scenario's input.
enum SignalFuzzTarget {
    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        switch selector % 8 {
        case 0: parseSignalMessage(body)
        case 1: parsePreKeyMessage(body)
        case 2: parseSessionRecord(body)
        case 3: decrypt(type: .whisper, body: body)
        case 4: decrypt(type: .preKey, body: body)
        case 5: patch(fixture.whisperMessages[0], with: body, type: .whisper, plaintext: fixture.texts[1])
        case 6: patch(fixture.preKeyMessage, with: body, type: .preKey, plaintext: fixture.texts[0])
        default: parseSenderKeyMessages(body)
        }
    }

    /// Parsing never crashes; what parses re-serializes to the same bytes.
    static func parseSignalMessage(_ body: [UInt8]) {
        guard let message = try? SignalMessage(serialized: body) else { return }
        invariant(message.serialized == body, "SignalMessage keeps its bytes")
        invariant((try? SignalMessage(serialized: message.serialized)) == message, "SignalMessage round trip")
    }

    static func parsePreKeyMessage(_ body: [UInt8]) {
        guard let message = try? PreKeySignalMessage(serialized: body) else { return }
        invariant(message.serialized == body, "PreKeySignalMessage keeps its bytes")
        invariant(message.message.messageVersion == message.messageVersion, "inner version matches")
    }

    static func parseSenderKeyMessages(_ body: [UInt8]) {
        _ = try? SenderKeyMessage(serialized: body)
        _ = try? SenderKeyDistributionMessage(serialized: body)
    }

    /// Records: anything that parses re-serializes to bytes that parse to the same record.
    static func parseSessionRecord(_ body: [UInt8]) {
        let input = body.count > 2 && body[0] == 0xff ? mutate(fixture.record, with: Array(body.dropFirst())) : body
        guard let record = try? SessionRecord(serialized: input) else { return }
        let again = record.serialize()
        let reparsed = again.withUnsafeBytes { try? SessionRecord(serialized: Array($0)) }
        invariant(reparsed?.serialize() == again, "SessionRecord round trip")
    }

    /// Arbitrary bytes never decrypt, and a failed decryption leaves the store unchanged.
    static func decrypt(type: CiphertextMessageType, body: [UInt8]) {
        var store = type == .whisper ? fixture.establishedBob : fixture.freshBob
        let before = snapshot(store)
        var random = SeededGenerator(seed: 1)
        let result = try? SessionCipher.decrypt(type: type, body: body, from: fixture.alice, store: &store, using: &random)
        if let result {
            // Only Alice's keys make a message that decrypts. The fixture is rebuilt in every
            // process and Kyber encapsulation is randomized, so a seed written by another
            // process may be a *different* authentic message: accept it only with the text
            // Alice sent.
            let expected = type == .whisper ? Array(fixture.texts.dropFirst()) : [fixture.texts[0]]
            invariant(expected.contains(result), "a message nobody sent decrypted")
        } else {
            invariant(snapshot(store) == before, "failed decryption changed the store")
        }
    }

    /// A genuine message with bytes XOR-ed in: decrypts to the same text or fails cleanly.
    static func patch(_ message: [UInt8], with body: [UInt8], type: CiphertextMessageType, plaintext: [UInt8]) {
        let patched = mutate(message, with: body)
        var store = type == .whisper ? fixture.establishedBob : fixture.freshBob
        let before = snapshot(store)
        var random = SeededGenerator(seed: 2)
        if let opened = try? SessionCipher.decrypt(type: type, body: patched, from: fixture.alice, store: &store, using: &random) {
            invariant(opened == plaintext, "a patched message decrypted to other text")
            invariant(patched == message || onlyUnauthenticatedFieldsDiffer(patched, type: type), "patched message accepted")
        } else {
            invariant(snapshot(store) == before, "failed decryption changed the store")
        }
    }

    /// In a PreKeySignalMessage the low nibble of the version byte and the registration id
    /// are not authenticated (as in libsignal); a message that differs from the genuine one
    /// only there may decrypt.
    static func onlyUnauthenticatedFieldsDiffer(_ body: [UInt8], type: CiphertextMessageType) -> Bool {
        guard type == .preKey, let parsed = try? PreKeySignalMessage(serialized: body),
            let genuine = try? PreKeySignalMessage(serialized: fixture.preKeyMessage)
        else { return false }
        return parsed.message == genuine.message && parsed.baseKey == genuine.baseKey
            && parsed.identityKey == genuine.identityKey && parsed.preKeyID == genuine.preKeyID
            && parsed.signedPreKeyID == genuine.signedPreKeyID && parsed.kyberPreKeyID == genuine.kyberPreKeyID
            && parsed.kyberCiphertext == genuine.kyberCiphertext
    }

    /// Applies (position, xor) pairs from `body` to `message`; a trailing odd byte truncates.
    static func mutate(_ message: [UInt8], with body: [UInt8]) -> [UInt8] {
        var result = message
        var index = 0
        while index + 2 < body.count {
            let position = (Int(body[index]) << 8 | Int(body[index + 1])) % max(result.count, 1)
            if !result.isEmpty { result[position] ^= body[index + 2] }
            index += 3
        }
        if index < body.count, body[index] & 1 == 1 { result = Array(result.prefix(Int(body[index]) % (result.count + 1))) }
        return result
    }

    static func snapshot(_ store: InMemorySignalProtocolStore) -> [[UInt8]] {
        let sessions = store.sessions.sorted { $0.key.description < $1.key.description }.map { entry in
            entry.value.serialize().withUnsafeBytes { Array($0) }
        }
        return sessions + [store.preKeys.keys.sorted().map { UInt8(truncatingIfNeeded: $0) }]
            + [store.kyberPreKeys.keys.sorted().map { UInt8(truncatingIfNeeded: $0) }]
            + store.identities.values.map(\.serialized)
    }

    /// Seeds: each scenario with genuine messages, a record and small patches.
    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for message in fixture.whisperMessages {
            seeds.append([0] + message)
            seeds.append([3] + message)
        }
        seeds.append([1] + fixture.preKeyMessage)
        seeds.append([4] + fixture.preKeyMessage)
        seeds.append([2] + fixture.record)
        seeds.append([2, 0xff, 0, 5, 1])
        seeds.append([5, 0, 0, 1])
        seeds.append([5, 0, 40, 0x80])
        seeds.append([6, 0, 0, 1])
        seeds.append([6, 0, 60, 2, 1])
        // Regression (found by the fuzzer): bit 7 of the base key's last byte (offset 37).
        seeds.append([6, 0x00, 37, 0x80])
        seeds.append([7, 0x33, 0x0a, 0x10] + [UInt8](repeating: 1, count: 16))
        return seeds
    }
}
