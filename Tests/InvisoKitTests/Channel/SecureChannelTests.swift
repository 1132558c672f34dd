import InvisoCrypto
@testable import InvisoKit
import InvisoNoise
import InvisoTesting
import InvisoWire
import Testing

@Suite("SecureChannel v1 and v2")
struct SecureChannelTests {
    static func key(_ channel: any SecureChannel) -> [UInt8]? {
        channel.directPathKey?.withUnsafeBytes { Array($0) }
    }

    @Test func v2PairsAndCarriesRecordsBothWays() throws {
        var harness = ChannelHarness([ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, seed: 2)], routes: [1, 0])
        harness.startAll()
        #expect(harness.established == [true, true])
        let (creator, joiner) = (harness.parties[0], harness.parties[1])
        #expect(creator.isVerified && joiner.isVerified && creator.version == .v2)
        #expect(creator.safetyNumber != nil && creator.safetyNumber == joiner.safetyNumber)
        #expect(creator.peerIdentity != nil && creator.peerIdentity != joiner.peerIdentity)
        // Both sides derive the same direct-path key, 32 bytes, not a ratchet key.
        #expect(Self.key(creator)?.count == 32 && Self.key(creator) == Self.key(joiner))
        try harness.send(.data(seq: 1, payload: Array("hello".utf8)), from: 0)
        try harness.send(.ack(1), from: 1)
        try harness.send(.data(seq: 1, payload: []), from: 1)
        #expect(harness.received[1] == [.data(seq: 1, payload: Array("hello".utf8))])
        #expect(harness.received[0] == [.ack(1), .data(seq: 1, payload: [])])
        // v2 takes nothing over signaling.
        #expect(throws: SecureChannelError.refused) {
            try harness.parties[0].receive(signal: KeyExchangeComplete(sessionId: ChannelFixture.roomID).message.object)
        }
        // Another pairing has another direct-path key.
        var other = ChannelHarness([ChannelFixture.v2(.creator, seed: 3), ChannelFixture.v2(.joiner, seed: 4)], routes: [1, 0])
        other.startAll()
        #expect(Self.key(other.parties[0]) != Self.key(creator))
    }

    @Test func v2CreatorMaySealBeforeTheConfirmation() throws {
        var creator = ChannelFixture.v2(.creator, seed: 1)
        #expect(throws: SecureChannelError.notEstablished) { try creator.seal(.data(seq: 1, payload: [1])) }
        #expect(!creator.canSeal)
        var harness = ChannelHarness([creator, ChannelFixture.v2(.joiner, seed: 2)], routes: [1, 0])
        harness.startAll()
        creator = harness.parties[0] as! V2SecureChannel
        #expect(creator.canSeal)
    }

    @Test func v2WrongSecretFailsBothSidesAfterOneAttempt() throws {
        var harness = ChannelHarness(
            [ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, invite: V2Fixture.wrongInvite, seed: 2)],
            routes: [1, 0])
        harness.startAll()
        #expect(harness.established == [false, false])
        #expect(harness.failures[0] == .pairingFailed && harness.failures[1] == .pairingFailed)
        // One attempt: the failed channels take nothing more.
        #expect(throws: SecureChannelError.pairingFailed) { try harness.parties[1].receive(frame: [0x01] + [UInt8](repeating: 0, count: 34)) }
        #expect(throws: SecureChannelError.notEstablished) { try harness.parties[0].seal(.data(seq: 1, payload: [])) }
    }

    /// A relay that substitutes its own keys: it runs the pairing with each side itself.
    /// Without the words, both honest sides fail closed; with the words (a lucky guess),
    /// both pair but their safety numbers differ.
    @Test(arguments: [false, true])
    func v2KeySubstitutionFailsClosedOrShowsInTheSafetyNumber(relayKnowsWords: Bool) throws {
        let relayInvite = relayKnowsWords ? V2Fixture.invite : V2Fixture.wrongInvite
        var harness = ChannelHarness(
            [
                ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, invite: relayInvite, seed: 10),
                ChannelFixture.v2(.creator, invite: relayInvite, seed: 11), ChannelFixture.v2(.joiner, seed: 2),
            ],
            routes: [1, 0, 3, 2])
        harness.startAll()
        if relayKnowsWords {
            #expect(harness.established == [true, true, true, true])
            #expect(harness.parties[0].safetyNumber != harness.parties[3].safetyNumber)
        } else {
            #expect(!harness.established[0] && !harness.established[3])
            #expect(harness.failures[0] == .pairingFailed && harness.failures[3] == .pairingFailed)
        }
    }

    /// A relay that only swaps the Noise ephemeral key in msg1 (no words): the joiner fails
    /// the pairing at once, and the creator then fails on the abort.
    @Test func v2TamperedHandshakeFailsClosed() throws {
        var harness = ChannelHarness([ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, seed: 2)], routes: [1, 0])
        for index in harness.parties.indices { harness.apply(harness.parties[index].start(), from: index) }
        var tampered = false
        var steps = 0
        while !harness.queue.isEmpty, steps < 100 {
            steps += 1
            var (to, item) = harness.queue.removeFirst()
            if case .frame(var frame) = item, frame.first == V2FrameType.handshake.rawValue, !tampered {
                var generator = SeededGenerator(seed: 99)
                let substitute = V2Fixture.keyPair(using: &generator).publicKey
                frame.replaceSubrange(1..<33, with: substitute)
                item = .frame(frame)
                tampered = true
            }
            let actions: [SecureChannelAction]
            switch item {
            case .frame(let frame): actions = (try? harness.parties[to].receive(frame: frame)) ?? []
            case .signal(let object): actions = (try? harness.parties[to].receive(signal: object)) ?? []
            }
            harness.apply(actions, from: to)
        }
        #expect(tampered)
        #expect(harness.established == [false, false])
        #expect(harness.failures[0] == .pairingFailed && harness.failures[1] == .pairingFailed)
    }

    @Test func v1KeyExchangeOverSignalingThenAppFrames() throws {
        var harness = ChannelHarness([ChannelFixture.v1(.initiator, seed: 1), ChannelFixture.v1(.responder, seed: 2)], routes: [1, 0])
        harness.startAll()
        #expect(harness.established == [true, true])
        let (creator, joiner) = (harness.parties[0], harness.parties[1])
        #expect(!creator.isVerified && !joiner.isVerified && !creator.carriesAcknowledgements)
        #expect(creator.safetyNumber?.count == 60 && creator.safetyNumber == joiner.safetyNumber)
        #expect(Self.key(creator)?.count == 32 && Self.key(creator) == Self.key(joiner))
        // The app's messages: key_exchange both ways, key_exchange_complete from the responder.
        let signals = harness.carried.compactMap { try? JSONValue.parse($0).objectValue?["type"]?.stringValue }
        #expect(signals.sorted() == ["key_exchange", "key_exchange", "key_exchange_complete"])
        // Frames are the app's JSON with the plain payload inside; the id is counter + 1.
        try harness.send(.data(seq: 1, payload: Array("hi".utf8)), from: 0)
        try harness.send(.data(seq: 2, payload: Array("again".utf8)), from: 0)
        #expect(harness.received[1] == [.data(seq: 1, payload: Array("hi".utf8)), .data(seq: 2, payload: Array("again".utf8))])
        let frame = try #require(harness.carried.last)
        #expect(try V1Frame(json: frame).counter == 1)
        // No acks in v1, and the seq must be the next counter + 1.
        #expect(throws: SecureChannelError.unsupported) { try harness.parties[0].seal(.ack(1)) }
        #expect(throws: SecureChannelError.unsupported) { try harness.parties[0].seal(.data(seq: 7, payload: [])) }
        // A replayed frame is refused.
        #expect(throws: SecureChannelError.refused) { try harness.parties[1].receive(frame: frame) }
    }

    @Test func v1RefusesAllZeroSecretsAndForeignSessions() throws {
        var channel = ChannelFixture.v1(.responder, seed: 2)
        let zero = KeyExchange(publicKey: Base64.encodeString([UInt8](repeating: 0, count: 32)), sessionId: ChannelFixture.roomID)
        let actions = try channel.receive(signal: zero.message.object)
        guard case .failed(let error)? = actions.last else {
            Issue.record("no failure")
            return
        }
        #expect(error == .invalidPeerKey && !channel.isEstablished)
        var other = ChannelFixture.v1(.responder, seed: 3)
        let foreign = KeyExchange(publicKey: Base64.encodeString([UInt8](repeating: 9, count: 32)), sessionId: "another-room")
        #expect(throws: SecureChannelError.refused) { try other.receive(signal: foreign.message.object) }
        #expect(!other.isEstablished)
        #expect(throws: SecureChannelError.notEstablished) { try other.receive(frame: [0x7B]) }
    }

    /// A relay that substitutes its own X25519 keys: v1 cannot notice during the exchange
    /// (it is unauthenticated), but the two safety numbers differ.
    @Test func v1KeySubstitutionShowsDifferentSafetyNumbers() throws {
        var harness = ChannelHarness(
            [
                ChannelFixture.v1(.initiator, seed: 1), ChannelFixture.v1(.responder, seed: 10),
                ChannelFixture.v1(.initiator, seed: 11), ChannelFixture.v1(.responder, seed: 2),
            ],
            routes: [1, 0, 3, 2])
        harness.startAll()
        #expect(harness.established == [true, true, true, true])
        let creator = harness.parties[0]
        let joiner = harness.parties[3]
        #expect(!creator.isVerified && !joiner.isVerified)
        #expect(creator.safetyNumber != nil && joiner.safetyNumber != nil && creator.safetyNumber != joiner.safetyNumber)
        #expect(Self.key(creator) != Self.key(joiner))
    }

    @Test func descriptionsHideKeys() {
        let channel = ChannelFixture.v2(.creator, seed: 1)
        #expect(String(describing: channel) == "V2SecureChannel(established: false)")
        var dumped = ""
        dump(ChannelFixture.v1(.initiator, seed: 1), to: &dumped)
        #expect(!dumped.contains("privateKey"))
    }
}
