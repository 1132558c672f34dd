import Foundation
import InvisoCrypto
import InvisoSignal
import InvisoTesting
import Testing

/// Group messaging with sender keys: seeded two-party runs, reordering, replay, tampering,
/// forward-jump limits, signatures, record storage and eviction.
@Suite("Sender keys")
struct SenderKeyTests {
    static let alice = ProtocolAddress(name: "alice", deviceID: 1)
    static let bob = ProtocolAddress(name: "bob", deviceID: 2)

    /// Alice sends to a group; Bob holds her chain.
    struct Group {
        var generator: SeededGenerator
        let distribution: UUID
        var aliceStore = InMemorySenderKeyStore()
        var bobStore = InMemorySenderKeyStore()
        let distributionMessage: SenderKeyDistributionMessage

        init(seed: UInt64) throws {
            var generator = SeededGenerator(seed: seed)
            distribution = generator.uuid()
            distributionMessage = try GroupCipher.createDistributionMessage(
                sender: alice, distributionID: distribution, store: &aliceStore, using: &generator)
            // Bob gets it through a 1:1 session: as bytes.
            let received = try SenderKeyDistributionMessage(serialized: distributionMessage.serialized)
            try GroupCipher.processDistributionMessage(received, sender: alice, store: &bobStore)
            self.generator = generator
        }

        mutating func send(_ plaintext: [UInt8]) throws -> SenderKeyMessage {
            try GroupCipher.encrypt(
                plaintext, sender: alice, distributionID: distribution, store: &aliceStore, using: &generator)
        }

        mutating func receive(_ message: SenderKeyMessage) throws -> [UInt8] {
            try GroupCipher.decrypt(message.serialized, sender: alice, store: &bobStore)
        }

        /// Bob's record for Alice's chain.
        var bobRecord: SenderKeyRecord? { bobStore.loadSenderKey(sender: alice, distributionID: distribution) }

        /// Moves Alice's chain `steps` iterations on without sending (chain-key steps only).
        mutating func skip(_ steps: Int) throws {
            var record = try #require(aliceStore.loadSenderKey(sender: alice, distributionID: distribution))
            var state = record.states[0]
            for _ in 0..<steps { _ = try state.nextSendingKey() }
            record.states[0] = state
            aliceStore.storeSenderKey(record, sender: alice, distributionID: distribution)
        }
    }

    // MARK: Known answers

    /// Runs shared/vectors/signal/chain-key.json through the sender chain (the chain step
    /// is the same HMAC-SHA256 with 0x01 and 0x02 in 1:1 and group chains).
    @Test("chain step: libsignal chain-key.json (message key seed and next chain key)", .enabled(if: SharedVectors.present("signal/chain-key.json"), SharedVectors.skipComment))
    func chainKeyVector() throws {
        guard let url = SharedVectors.url("signal/chain-key.json") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/signal/chain-key.json is missing under CI=true") }
            print(SharedVectors.skipMessage("libsignal chain-key vector"))
            return
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            let inputs = try #require(vector["inputs"] as? [String: Any])
            let expected = try #require(vector["expected"] as? [String: Any])
            let derived = try #require(vector["derived_not_in_source"] as? [String: Any])
            func bytes(_ dictionary: [String: Any], _ key: String) throws -> [UInt8] {
                try #require((dictionary[key] as? String).flatMap { [UInt8](hex: $0) }, "\(key)")
            }
            let index = UInt32(try #require(inputs["index"] as? Int))
            let chain = SenderChainKey(iteration: index, seed: SecretBytes(try bytes(inputs, "chain_key")))
            #expect(chain.messageKey.seed.testBytes == (try bytes(derived, "message_key_seed")))
            #expect(chain.messageKey.iteration == index)
            let next = try chain.next()
            #expect(next.seed.testBytes == (try bytes(expected, "next_chain_key")))
            #expect(Int(next.iteration) == (try #require(expected["next_chain_key_index"] as? Int)))
            ran += 1
        }
        print("libsignal chain-key vectors (sender chain): \(ran) ran")
        #expect(ran == 1, "expected 1 chain-key vector, ran \(ran)")
    }

    /// Known answers computed with Python's `cryptography` 48 (HMAC-SHA256, HKDF-SHA256 with
    /// info "WhisperGroup" and no salt, AES-256-CBC with PKCS#7), starting from the chain key
    /// of chain-key.json; plaintext "sender key known answer".
    static let knownChainKey = "8ab72d6f4cc5ac0d387eaf463378ddb28edd07385b1cb01250c715982e7ad48f"
    static let knownPlaintext = Array("sender key known answer".utf8)
    static let knownAnswers: [(iteration: UInt32, seed: String, ciphertext: String, nextChainKey: String)] = [
        (
            0, "fae95235beda3d2e00b41cf2e655dada2405b4388cae0d251a51bcd2ebdd2e40",
            "92fce8131bd1dd5012d22a5bb136c8364bdbb14269d49e0f02f599d87a44a4a8",
            "28e8f8fee54b801eef7c5cfb2f17f32c7b334485bbb70fac6ec10342a246d15d"
        ),
        (
            1, "f202834a728d05ea6f2e544b3270f1d20fc6677122556bb3dccb4567914d5417",
            "8bbcb00f3d74667711c54c98c2c02875c85444b27717b41f39c0f752253cb126",
            "3432503588d6a66057cabd1c2399fe28dfe4301d502639328a013f7f2a748083"
        ),
        (
            2, "28dbff8362fbe7103c92db049850684eb215fbeff7a1be4a26f0187ee4c0377c",
            "029f4c09cf22bcc6b2de44eea5fb5270cd1501c556300ebf9bd23ab6a6804efd",
            "707fcdcd8a3739710a26a4efd2bd1f86e2a08ddaca832d66c191cb4f191932e6"
        ),
    ]

    @Test("message keys: HKDF \"WhisperGroup\" (IV first) and AES-256-CBC match independent known answers")
    func messageKeyKnownAnswers() throws {
        var chain = SenderChainKey(iteration: 0, seed: SecretBytes([UInt8](hex: Self.knownChainKey)!))
        for answer in Self.knownAnswers {
            let key = chain.messageKey
            #expect(key.iteration == answer.iteration)
            #expect(key.seed.testBytes.hex == answer.seed)
            #expect(try key.encrypt(Self.knownPlaintext).hex == answer.ciphertext)
            #expect(try key.decrypt([UInt8](hex: answer.ciphertext)!) == Self.knownPlaintext)
            chain = try chain.next()
            #expect(chain.seed.testBytes.hex == answer.nextChainKey)
        }
    }

    @Test("GroupCipher end to end on the known chain key: encrypt gives the known ciphertexts, decrypt accepts them")
    func groupCipherKnownAnswers() throws {
        var generator = SeededGenerator(seed: 0x6b)
        let distribution = generator.uuid()
        let signing = generator.keyPair()
        let chainKey = SecretBytes([UInt8](hex: Self.knownChainKey)!)

        // Alice's own record, set up with the known chain key.
        var aliceRecord = SenderKeyRecord()
        aliceRecord.addState(
            messageVersion: 3, chainID: 0x1234, iteration: 0, chainKey: chainKey, signingKey: signing.publicKey,
            signingPrivateKey: signing.privateKey)
        var aliceStore = InMemorySenderKeyStore()
        aliceStore.storeSenderKey(aliceRecord, sender: Self.alice, distributionID: distribution)
        let distributionMessage = try GroupCipher.createDistributionMessage(
            sender: Self.alice, distributionID: distribution, store: &aliceStore, using: &generator)
        #expect(distributionMessage.chainID == 0x1234 && distributionMessage.iteration == 0)
        #expect(distributionMessage.chainKey == chainKey)
        #expect(distributionMessage.signingKey == signing.publicKey)

        var bobStore = InMemorySenderKeyStore()
        try GroupCipher.processDistributionMessage(distributionMessage, sender: Self.alice, store: &bobStore)
        var sent: [SenderKeyMessage] = []
        for answer in Self.knownAnswers {
            let message = try GroupCipher.encrypt(
                Self.knownPlaintext, sender: Self.alice, distributionID: distribution, store: &aliceStore,
                using: &generator)
            #expect(message.iteration == answer.iteration)
            #expect(message.chainID == 0x1234)
            #expect(message.ciphertext.hex == answer.ciphertext)
            sent.append(message)
        }
        // Bob receives them newest first.
        for message in sent.reversed() {
            #expect(try GroupCipher.decrypt(message, sender: Self.alice, store: &bobStore) == Self.knownPlaintext)
        }
    }

    // MARK: Two parties

    @Test("distribution message: a new chain (31-bit id, iteration 0, can sign), reused afterwards")
    func distributionMessageCreation() throws {
        var group = try Group(seed: 0x6c)
        let first = group.distributionMessage
        #expect(first.chainID < 1 << 31)
        #expect(first.iteration == 0)
        #expect(first.distributionID == group.distribution)
        #expect(first.chainKey.count == 32)
        let own = try #require(group.aliceStore.loadSenderKey(sender: Self.alice, distributionID: group.distribution))
        #expect(own.states.count == 1 && own.states[0].canSign)
        let theirs = try #require(group.bobRecord)
        #expect(theirs.states.count == 1 && !theirs.states[0].canSign)
        #expect(theirs.states[0].chainID == first.chainID && theirs.states[0].signingKey == first.signingKey)

        for index in 0..<3 { _ = try group.send([UInt8(index)]) }
        let again = try GroupCipher.createDistributionMessage(
            sender: Self.alice, distributionID: group.distribution, store: &group.aliceStore, using: &group.generator)
        #expect(again.chainID == first.chainID && again.signingKey == first.signingKey)
        #expect(again.iteration == 3)
        #expect(again.chainKey != first.chainKey)
        #expect(
            group.aliceStore.loadSenderKey(sender: Self.alice, distributionID: group.distribution)?.states.count == 1)

        // The same seed gives the same chain; a different seed a different one.
        #expect(try Group(seed: 0x6c).distributionMessage == first)
        #expect(try Group(seed: 0x6d).distributionMessage.chainID != first.chainID)
    }

    @Test("200 messages, reordered within a window, all decrypt; replays are duplicates and change nothing")
    func reorderedDelivery() throws {
        var group = try Group(seed: 0x6e)
        var messages: [(SenderKeyMessage, [UInt8])] = []
        for index in 0..<200 {
            let plaintext = group.generator.bytes(index % 50)
            let message = try group.send(plaintext)
            #expect(message.iteration == UInt32(index))
            messages.append((message, plaintext))
        }
        // Shuffle within windows of 40, then swap some neighbours across window edges.
        var order = Array(0..<200)
        for start in stride(from: 0, to: 200, by: 40) { order[start..<start + 40].shuffle(using: &group.generator) }
        for edge in stride(from: 40, to: 200, by: 40) { order.swapAt(edge - 1, edge) }
        #expect(order != Array(0..<200))

        var received = 0
        var maxStored = 0
        for index in order {
            let (message, plaintext) = messages[index]
            #expect(try group.receive(message) == plaintext, "message \(index)")
            received += 1
            maxStored = max(maxStored, group.bobRecord?.states[0].storedMessageKeyCount ?? 0)
        }
        #expect(received == 200)
        #expect(maxStored > 0)
        let state = try #require(group.bobRecord?.states[0])
        #expect(state.iteration == 200)
        #expect(state.storedMessageKeyCount == 0)

        // Replays: the newest, the oldest and one from the middle.
        let before = group.bobStore
        for index in [199, 0, 117] {
            #expect(throws: SignalError.duplicateMessage, "replay of \(index)") { try group.receive(messages[index].0) }
            #expect(group.bobStore == before)
        }
        print("sender keys: 200 reordered messages decrypted, at most \(maxStored) skipped keys stored")
    }

    @Test("a message with any one byte flipped is rejected and leaves Bob's store unchanged")
    func tamperEveryByte() throws {
        var group = try Group(seed: 0x6f)
        _ = try group.receive(try group.send([1]))
        let message = try group.send(Array("tamper with every byte of this".utf8))
        _ = try group.send([3])
        let bytes = message.serialized
        let before = group.bobStore
        var rejected = 0
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x01
            let error = caughtError {
                _ = try GroupCipher.decrypt(tampered, sender: Self.alice, store: &group.bobStore)
            }
            #expect(error is SignalError, "byte \(index): \(String(describing: error))")
            #expect(group.bobStore == before, "byte \(index)")
            if error != nil { rejected += 1 }
        }
        #expect(rejected == bytes.count)
        #expect(try group.receive(message) == Array("tamper with every byte of this".utf8))
    }

    @Test("a jump of 25,000 iterations is accepted, 25,001 is too far into the future")
    func forwardJumpLimit() throws {
        var group = try Group(seed: 0x70)
        let start = group

        // Alice's messages at these iterations, made in one pass over her chain.
        var sender = start
        var at: [Int: SenderKeyMessage] = [:]
        var next = 0
        for iteration in [22_999, 23_000, 24_999, 25_000, 25_001, 50_001, 50_002] {
            try sender.skip(iteration - next)
            at[iteration] = try sender.send([UInt8(truncatingIfNeeded: iteration)])
            next = iteration + 1
        }
        func plaintext(_ iteration: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: iteration)] }

        // 25,000 ahead of Bob's chain (at 0).
        let far = try #require(at[25_000])
        #expect(far.iteration == 25_000)
        #expect(try group.receive(far) == plaintext(25_000))
        let state = try #require(group.bobRecord?.states[0])
        #expect(state.iteration == 25_001)
        #expect(state.storedMessageKeyCount == SenderKeyState.maxMessageKeys)
        // Only the newest 2000 skipped keys are kept: 23,000 … 24,999.
        #expect(throws: SignalError.duplicateMessage) { try group.receive(at[22_999]!) }
        #expect(try group.receive(at[23_000]!) == plaintext(23_000))
        #expect(try group.receive(at[24_999]!) == plaintext(24_999))
        #expect(group.bobRecord?.states[0].storedMessageKeyCount == 1998)

        // 25,001 ahead of a fresh Bob.
        var tooFar = start
        let before = tooFar.bobStore
        #expect(throws: SignalError.tooFarIntoFuture) { try tooFar.receive(at[25_001]!) }
        #expect(tooFar.bobStore == before)
        // The limit counts from where Bob's chain is now (25,001).
        let beforeJump = group.bobStore
        #expect(throws: SignalError.tooFarIntoFuture) { try group.receive(at[50_002]!) }
        #expect(group.bobStore == beforeJump)
        #expect(try group.receive(at[50_001]!) == plaintext(50_001))
        #expect(try group.receive(at[50_002]!) == plaintext(50_002))
    }

    @Test("a message signed by another key is an invalid signature and changes nothing")
    func wrongSigningKey() throws {
        var group = try Group(seed: 0x71)
        let genuine = try group.send([1, 2, 3])
        let impostor = group.generator.keyPair()
        let forged = SenderKeyMessage(
            distributionID: genuine.distributionID, chainID: genuine.chainID, iteration: genuine.iteration,
            ciphertext: genuine.ciphertext, signingKey: impostor.privateKey, using: &group.generator)
        let before = group.bobStore
        #expect(throws: SignalError.invalidSignature) { try group.receive(forged) }
        #expect(group.bobStore == before)
        #expect(try group.receive(genuine) == [1, 2, 3])

        // A distribution message with Alice's chain id but another signing key replaces her
        // state, after which her real messages no longer verify.
        let replacement = try SenderKeyDistributionMessage(
            distributionID: group.distribution, chainID: group.distributionMessage.chainID, iteration: 0,
            chainKey: group.distributionMessage.chainKey, signingKey: impostor.publicKey)
        try GroupCipher.processDistributionMessage(replacement, sender: Self.alice, store: &group.bobStore)
        #expect(group.bobRecord?.states.count == 1)
        #expect(group.bobRecord?.states[0].signingKey == impostor.publicKey)
        let next = try group.send([4])
        #expect(throws: SignalError.invalidSignature) { try group.receive(next) }
    }

    @Test("no state: unknown sender, distribution or chain id; sending needs our own chain")
    func missingState() throws {
        var group = try Group(seed: 0x72)
        let message = try group.send([1])

        var empty = InMemorySenderKeyStore()
        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.decrypt(message, sender: Self.alice, store: &empty)
        }
        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.decrypt(message, sender: Self.bob, store: &group.bobStore)
        }
        let otherChain = SenderKeyMessage(
            distributionID: message.distributionID, chainID: message.chainID ^ 1, iteration: 0,
            ciphertext: message.ciphertext, signingKey: group.generator.keyPair().privateKey, using: &group.generator)
        #expect(throws: SignalError.noSenderKeyState) { try group.receive(otherChain) }
        let otherDistribution = SenderKeyMessage(
            distributionID: group.generator.uuid(), chainID: message.chainID, iteration: 0,
            ciphertext: message.ciphertext, signingKey: group.generator.keyPair().privateKey, using: &group.generator)
        #expect(throws: SignalError.noSenderKeyState) { try group.receive(otherDistribution) }
        #expect(empty.count == 0)

        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.encrypt([1], sender: Self.bob, distributionID: group.distribution, store: &empty)
        }
        // Bob holds Alice's chain without its private key: he cannot send on it.
        let before = group.bobStore
        #expect(throws: SignalError.invalidSessionState) {
            try GroupCipher.encrypt([1], sender: Self.alice, distributionID: group.distribution, store: &group.bobStore)
        }
        #expect(group.bobStore == before)
        // An empty record is no state either.
        var emptyRecord = InMemorySenderKeyStore()
        emptyRecord.storeSenderKey(SenderKeyRecord(), sender: Self.alice, distributionID: group.distribution)
        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.encrypt([1], sender: Self.alice, distributionID: group.distribution, store: &emptyRecord)
        }
        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.decrypt(message, sender: Self.alice, store: &emptyRecord)
        }
    }

    @Test("a signed message whose ciphertext does not decrypt fails authentication and changes nothing")
    func undecryptableCiphertext() throws {
        var group = try Group(seed: 0x73)
        let record = try #require(
            group.aliceStore.loadSenderKey(sender: Self.alice, distributionID: group.distribution))
        let signingKey = try #require(record.states[0].signingPrivateKey)
        let before = group.bobStore
        for ciphertext in [[], [UInt8](repeating: 1, count: 15), [UInt8](repeating: 1, count: 17)] {
            let message = SenderKeyMessage(
                distributionID: group.distribution, chainID: record.states[0].chainID, iteration: 0,
                ciphertext: ciphertext, signingKey: signingKey, using: &group.generator)
            #expect(throws: SignalError.authenticationFailed, "\(ciphertext.count) bytes") {
                try group.receive(message)
            }
            #expect(group.bobStore == before)
        }
    }

    // MARK: Records

    @Test("more than five states: the oldest chain is dropped; a known chain keeps its progress")
    func stateEviction() throws {
        var generator = SeededGenerator(seed: 0x74)
        let distribution = generator.uuid()
        var bobStore = InMemorySenderKeyStore()
        var chains: [(store: InMemorySenderKeyStore, message: SenderKeyDistributionMessage)] = []
        for _ in 0..<6 {
            // Alice rotates her sender key: a fresh chain in a fresh record.
            var aliceStore = InMemorySenderKeyStore()
            let message = try GroupCipher.createDistributionMessage(
                sender: Self.alice, distributionID: distribution, store: &aliceStore, using: &generator)
            try GroupCipher.processDistributionMessage(message, sender: Self.alice, store: &bobStore)
            chains.append((aliceStore, message))
        }
        #expect(Set(chains.map(\.message.chainID)).count == 6)
        let record = try #require(bobStore.loadSenderKey(sender: Self.alice, distributionID: distribution))
        #expect(record.states.count == SenderKeyRecord.maxStates)
        #expect(record.states.map(\.chainID) == chains.dropFirst().reversed().map(\.message.chainID))

        func send(_ chain: Int, _ plaintext: [UInt8]) throws -> SenderKeyMessage {
            try GroupCipher.encrypt(
                plaintext, sender: Self.alice, distributionID: distribution, store: &chains[chain].store,
                using: &generator)
        }
        #expect(throws: SignalError.noSenderKeyState) {
            try GroupCipher.decrypt(try send(0, [0]), sender: Self.alice, store: &bobStore)
        }
        for chain in 1..<6 {
            #expect(
                try GroupCipher.decrypt(try send(chain, [UInt8(chain)]), sender: Self.alice, store: &bobStore) == [
                    UInt8(chain)
                ])
        }

        // Re-processing chain 2's (old) distribution message keeps its progress and moves it first.
        try GroupCipher.processDistributionMessage(chains[2].message, sender: Self.alice, store: &bobStore)
        let moved = try #require(bobStore.loadSenderKey(sender: Self.alice, distributionID: distribution))
        #expect(moved.states.count == 5)
        #expect(moved.states[0].chainID == chains[2].message.chainID)
        #expect(moved.states[0].iteration == 1)
        #expect(Set(moved.states.map(\.chainID)) == Set(chains.dropFirst().map(\.message.chainID)))
    }

    @Test("records serialize and parse back to equal records that keep working")
    func recordRoundTrip() throws {
        var group = try Group(seed: 0x75)
        var messages: [SenderKeyMessage] = []
        for index in 0..<12 { messages.append(try group.send([UInt8(index)])) }
        _ = try group.receive(messages[10])  // stores keys 0…9

        let own = try #require(group.aliceStore.loadSenderKey(sender: Self.alice, distributionID: group.distribution))
        let theirs = try #require(group.bobRecord)
        #expect(theirs.states[0].storedMessageKeyCount == 10)
        for record in [own, theirs, SenderKeyRecord()] {
            let serialized = record.serialize()
            let parsed = try SenderKeyRecord(serialized: serialized)
            #expect(parsed == record)
            #expect(parsed.serialize() == serialized)
            #expect(try SenderKeyRecord(serialized: serialized.testBytes) == record)
            #expect(parsed.states.map(\.chainID) == record.states.map(\.chainID))
            #expect(parsed.states.map(\.iteration) == record.states.map(\.iteration))
            #expect(parsed.states.map(\.canSign) == record.states.map(\.canSign))
            #expect(parsed.states.map(\.storedMessageKeyCount) == record.states.map(\.storedMessageKeyCount))
        }
        #expect(SenderKeyRecord().serialize().count == 0)

        // Restored stores keep working on both sides.
        var aliceStore = InMemorySenderKeyStore()
        aliceStore.storeSenderKey(
            try SenderKeyRecord(serialized: own.serialize()), sender: Self.alice, distributionID: group.distribution)
        var bobStore = InMemorySenderKeyStore()
        bobStore.storeSenderKey(
            try SenderKeyRecord(serialized: theirs.serialize()), sender: Self.alice, distributionID: group.distribution)
        #expect(try GroupCipher.decrypt(messages[3], sender: Self.alice, store: &bobStore) == [3])
        #expect(try GroupCipher.decrypt(messages[11], sender: Self.alice, store: &bobStore) == [11])
        let next = try GroupCipher.encrypt(
            [12], sender: Self.alice, distributionID: group.distribution, store: &aliceStore, using: &group.generator)
        #expect(next.iteration == 12)
        #expect(try GroupCipher.decrypt(next, sender: Self.alice, store: &bobStore) == [12])
    }

    /// A hand-built state (our storage layout): chain id 1, chain key {iteration, seed},
    /// signing key {public, private?}, message keys, version.
    private func encodeState(
        chainID: [UInt8]? = Hand.number(0x08, 1),
        chainKey: (iteration: UInt64, seed: [UInt8])? = (10, [UInt8](repeating: 7, count: 32)),
        publicKey: [UInt8],
        privateKey: [UInt8]? = nil,
        messageKeys: [(iteration: UInt64, seed: [UInt8])] = [],
        version: UInt64? = 3,
        extra: [UInt8] = []
    ) -> [UInt8] {
        var state: [UInt8] = chainID ?? []
        if let chainKey {
            state += Hand.bytes(0x12, Hand.number(0x08, chainKey.iteration) + Hand.bytes(0x12, chainKey.seed))
        }
        var signing = Hand.bytes(0x0a, publicKey)
        if let privateKey { signing += Hand.bytes(0x12, privateKey) }
        state += Hand.bytes(0x1a, signing)
        for key in messageKeys {
            state += Hand.bytes(0x22, Hand.number(0x08, key.iteration) + Hand.bytes(0x12, key.seed))
        }
        if let version { state += Hand.number(0x28, version) }
        return Hand.bytes(0x0a, state + extra)
    }

    @Test("record parsing is strict: every malformed or inconsistent record is invalidRecord")
    func recordValidation() throws {
        var generator = SeededGenerator(seed: 0x76)
        let pair = generator.keyPair()
        let other = generator.keyPair()
        let publicKey = pair.publicKey.serialized
        let privateKey = pair.privateKey.rawRepresentation.testBytes
        let seed = [UInt8](repeating: 9, count: 32)

        // The hand-built layout is exactly what serialize() writes.
        let valid = encodeState(publicKey: publicKey, privateKey: privateKey, messageKeys: [(3, seed), (7, seed)])
        let record = try SenderKeyRecord(serialized: valid)
        #expect(record.states.count == 1 && record.states[0].iteration == 10 && record.states[0].canSign)
        #expect(record.serialize().testBytes == valid)

        let invalid: [(String, [UInt8])] = [
            ("garbage", [0xff]),
            ("truncated", Array(valid.dropLast())),
            ("unknown top-level field", valid + Hand.number(0x10, 1)),
            ("state as varint", Hand.number(0x08, 1)),
            ("unknown state field", encodeState(publicKey: publicKey, extra: Hand.number(0x30, 1))),
            ("repeated chain id", encodeState(publicKey: publicKey, extra: Hand.number(0x08, 2))),
            ("missing chain id", encodeState(chainID: nil, publicKey: publicKey)),
            ("chain id as bytes", encodeState(chainID: Hand.bytes(0x0a, [1]), publicKey: publicKey)),
            ("missing chain key", encodeState(chainKey: nil, publicKey: publicKey)),
            ("short chain key", encodeState(chainKey: (1, Array(seed.dropLast())), publicKey: publicKey)),
            ("long chain key", encodeState(chainKey: (1, seed + [0]), publicKey: publicKey)),
            ("iteration above 32 bits", encodeState(chainKey: (1 << 32, seed), publicKey: publicKey)),
            ("missing version", encodeState(publicKey: publicKey, version: nil)),
            ("version 2", encodeState(publicKey: publicKey, version: 2)),
            ("version 4", encodeState(publicKey: publicKey, version: 4)),
            ("bad public key type", encodeState(publicKey: [0x06] + publicKey.dropFirst())),
            ("short public key", encodeState(publicKey: Array(publicKey.dropLast()))),
            ("short private key", encodeState(publicKey: publicKey, privateKey: Array(privateKey.dropLast()))),
            (
                "private key of another pair",
                encodeState(publicKey: publicKey, privateKey: other.privateKey.rawRepresentation.testBytes)
            ),
            ("message key at the chain iteration", encodeState(publicKey: publicKey, messageKeys: [(10, seed)])),
            ("message key past the chain", encodeState(publicKey: publicKey, messageKeys: [(11, seed)])),
            ("message keys out of order", encodeState(publicKey: publicKey, messageKeys: [(5, seed), (4, seed)])),
            ("duplicate message keys", encodeState(publicKey: publicKey, messageKeys: [(5, seed), (5, seed)])),
            ("short message key", encodeState(publicKey: publicKey, messageKeys: [(5, Array(seed.prefix(16)))])),
            (
                "two states with one chain id",
                encodeState(publicKey: publicKey) + encodeState(publicKey: other.publicKey.serialized)
            ),
            (
                "six states",
                (1...6).flatMap { encodeState(chainID: Hand.number(0x08, UInt64($0)), publicKey: publicKey) }
            ),
            (
                "2001 message keys",
                encodeState(
                    chainKey: (3000, seed), publicKey: publicKey,
                    messageKeys: (0..<2001).map { (UInt64($0), seed) })
            ),
        ]
        for (name, bytes) in invalid {
            #expect(throws: SignalError.invalidRecord, "\(name)") { try SenderKeyRecord(serialized: bytes) }
        }
        // The limits themselves are fine.
        #expect(
            try SenderKeyRecord(
                serialized: (1...5).flatMap {
                    encodeState(chainID: Hand.number(0x08, UInt64($0)), publicKey: publicKey)
                }
            ).states.count == 5)
        #expect(
            try SenderKeyRecord(
                serialized: encodeState(
                    chainKey: (3000, seed), publicKey: publicKey, messageKeys: (0..<2000).map { (UInt64($0), seed) })
            ).states[0].storedMessageKeyCount == 2000)

        // Every flipped byte and every prefix is either rejected as invalidRecord or gives a
        // record (a flipped seed byte, a prefix ending between states) — never a crash.
        var group = try Group(seed: 0x77)
        for index in 0..<5 { _ = try group.send([UInt8(index)]) }
        _ = try group.receive(try group.send([9]))
        let serialized = try #require(group.bobRecord).serialize().testBytes
        var accepted = 0
        for index in serialized.indices {
            var tampered = serialized
            tampered[index] ^= 0x01
            let error = caughtError { _ = try SenderKeyRecord(serialized: tampered) }
            if let error { #expect(error as? SignalError == .invalidRecord, "byte \(index)") } else { accepted += 1 }
        }
        for length in 0..<serialized.count {
            let error = caughtError { _ = try SenderKeyRecord(serialized: serialized.prefix(length)) }
            #expect(length == 0 || error as? SignalError == .invalidRecord, "prefix \(length)")
        }
        #expect(accepted < serialized.count)
    }

    @Test("descriptions and mirrors of keys, states, records and stores are redacted")
    func redaction() throws {
        var group = try Group(seed: 0x78)
        _ = try group.receive(try group.send([1]))
        _ = try group.send([2])
        let chainKeyHex = group.distributionMessage.chainKey.testBytes.hex
        let own = try #require(group.aliceStore.loadSenderKey(sender: Self.alice, distributionID: group.distribution))
        let privateHex = try #require(own.states[0].signingPrivateKey).rawRepresentation.testBytes.hex
        let ownSerialized = own.serialize().testBytes.hex
        let values: [Any] = [own, try #require(group.bobRecord), group.aliceStore, group.bobStore, own.states[0]]
        for value in values {
            var text = "\(value) \(String(reflecting: value))"
            dump(value, to: &text)
            #expect(!text.contains(chainKeyHex))
            #expect(!text.contains(privateHex))
            #expect(!text.contains(ownSerialized))
        }
        #expect("\(own.serialize())".contains("redacted"))
    }

    @Test("the system-random overloads work end to end")
    func systemRandomness() throws {
        let distribution = UUID()
        var aliceStore = InMemorySenderKeyStore()
        var bobStore = InMemorySenderKeyStore()
        let distributionMessage = try GroupCipher.createDistributionMessage(
            sender: Self.alice, distributionID: distribution, store: &aliceStore)
        try GroupCipher.processDistributionMessage(distributionMessage, sender: Self.alice, store: &bobStore)
        let message = try GroupCipher.encrypt(
            Array("hi".utf8), sender: Self.alice, distributionID: distribution, store: &aliceStore)
        #expect(try GroupCipher.decrypt(message, sender: Self.alice, store: &bobStore) == Array("hi".utf8))
        let signing = ECKeyPair.generate()
        let signed = SenderKeyMessage(
            distributionID: distribution, chainID: 1, iteration: 2, ciphertext: [3], signingKey: signing.privateKey)
        #expect(signed.verifySignature(signing.publicKey))
    }
}
