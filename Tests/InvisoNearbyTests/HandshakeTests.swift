import InvisoCrypto
import InvisoNearby
import InvisoNoise
import Testing

@Suite struct HandshakeTests {
    let alice = NearbyIdentity()
    let bob = NearbyIdentity()

    private func run(_ initiator: inout NearbyHandshake, _ responder: inout NearbyHandshake) throws
        -> (NearbyHandshake.Established, NearbyHandshake.Established)
    {
        let one = try initiator.start()
        let two = try responder.receive(one)
        #expect(two.established == nil)
        let three = try initiator.receive(try #require(two.reply))
        let done = try responder.receive(try #require(three.reply))
        #expect(done.reply == nil)
        return (try #require(three.established), try #require(done.established))
    }

    @Test func bothSidesLearnTheOthersVerifiedHelloAndShareKeys() throws {
        var initiator = try NearbyHandshake(role: .initiator, identity: alice, name: "alice")
        var responder = try NearbyHandshake(role: .responder, identity: bob, name: "bob ☕", capabilities: [.files])
        var (a, b) = try run(&initiator, &responder)
        #expect(a.peer.identity == bob.publicKey && a.peer.name == "bob ☕" && a.peer.capabilities == [.files])
        #expect(b.peer.identity == alice.publicKey && b.peer.name == "alice" && b.peer.capabilities == .all)
        #expect(a.handshakeHash == b.handshakeHash)
        let sealed = try a.transport.encrypt(Array("hi".utf8))
        #expect(try b.transport.decrypt(sealed) == Array("hi".utf8))
    }

    /// A relay that runs its own Noise handshakes with both sides can forward the victims'
    /// hellos, but their signatures cover the victims' static keys, not the relay's.
    @Test func relayedHelloOverAnotherStaticKeyIsRefused() throws {
        var initiator = try NearbyHandshake(role: .initiator, identity: alice, name: "alice")
        var realBob = try NearbyHandshake(role: .responder, identity: bob, name: "bob")
        // Bob's genuine message 2, seen by the relay through its own handshake with him.
        var relayToBob = try NearbyHandshake(role: .initiator, identity: NearbyIdentity(), name: "relay")
        let bobsTwo = try realBob.receive(try relayToBob.start())
        let bobsReply = try #require(bobsTwo.reply)
        let relayStep = try relayToBob.receive(bobsReply)
        let bobsHello = try #require(relayStep.established).peer
        // The relay answers Alice with its own static key but Bob's identity and signature.
        let relayStatic = NoiseKeyPair.generate()
        var relayHandshake = try HandshakeState(
            NoiseProtocol(NearbyHandshake.protocolName), role: .responder, prologue: NearbyHandshake.prologue,
            localStatic: relayStatic)
        _ = try relayHandshake.readMessage(try initiator.start())
        let forged = try relayHandshake.writeMessage(bobsHello.encoded())
        #expect(throws: NearbyError.self) { _ = try initiator.receive(forged) }
        #expect(nearbyCode { _ = try initiator.receive(forged) } == .unexpectedMessage)
        // Same with a fresh initiator: the code is badSignature.
        var fresh = try NearbyHandshake(role: .initiator, identity: alice, name: "alice")
        var relay2 = try HandshakeState(
            NoiseProtocol(NearbyHandshake.protocolName), role: .responder, prologue: NearbyHandshake.prologue,
            localStatic: relayStatic)
        _ = try relay2.readMessage(try fresh.start())
        let forgedAgain = try relay2.writeMessage(bobsHello.encoded())
        #expect(nearbyCode { _ = try fresh.receive(forgedAgain) } == .badSignature)
    }

    /// Flipping any byte of message 2 or 3 is refused by the receiver.
    @Test func everyFlippedByteIsRefused() throws {
        var initiator = try NearbyHandshake(role: .initiator, identity: alice, name: "alice")
        var responder = try NearbyHandshake(role: .responder, identity: bob, name: "bob")
        let one = try initiator.start()
        let two = try #require(try responder.receive(one).reply)
        for index in two.indices {
            var copy = initiator
            var tampered = two
            tampered[index] ^= 0x01
            #expect(throws: NearbyError.self) { _ = try copy.receive(tampered) }
        }
        let three = try #require(try initiator.receive(two).reply)
        for index in three.indices {
            var copy = responder
            var tampered = three
            tampered[index] ^= 0x80
            #expect(throws: NearbyError.self) { _ = try copy.receive(tampered) }
        }
        #expect(try responder.receive(three).established != nil)
    }

    @Test func outOfTurnAndTruncatedMessagesAreRefused() throws {
        var responder = try NearbyHandshake(role: .responder, identity: bob, name: "bob")
        #expect(throws: NearbyError.self) { _ = try responder.start() }
        var initiator = try NearbyHandshake(role: .initiator, identity: alice, name: "alice")
        #expect(throws: NearbyError.self) { _ = try initiator.receive([1, 2, 3]) }
        let one = try initiator.start()
        #expect(throws: NearbyError.self) { _ = try initiator.start() }
        for end in 0..<one.count {
            var copy = responder
            #expect(throws: NearbyError.self) { _ = try copy.receive(Array(one[..<end])) }
        }
    }

    @Test func helloCodecChecksEveryField() throws {
        let hello = try NearbyHello(identity: alice.publicKey, signature: alice.signature(overStaticKey: [1, 2]), capabilities: .all, name: "Zoë")
        let bytes = hello.encoded()
        #expect(try NearbyHello(decoding: bytes) == hello)
        #expect(bytes.count == 1 + 32 + 64 + 2 + 1 + 4)
        for end in 0..<bytes.count { #expect(throws: NearbyError.self) { try NearbyHello(decoding: Array(bytes[..<end])) } }
        #expect(throws: NearbyError.self) { try NearbyHello(decoding: bytes + [0]) }
        var version = bytes
        version[0] = 2
        #expect(nearbyCode { _ = try NearbyHello(decoding: version) } == .unsupportedVersion)
        var badUTF8 = bytes
        badUTF8[badUTF8.count - 1] = 0xFF
        #expect(nearbyCode { _ = try NearbyHello(decoding: badUTF8) } == .invalidName)
        #expect(throws: NearbyError.self) { try NearbyHandshake(role: .initiator, identity: alice, name: "") }
        #expect(throws: NearbyError.self) {
            try NearbyHandshake(role: .initiator, identity: alice, name: String(repeating: "x", count: 65))
        }
        #expect(throws: NearbyError.self) { try NearbyHandshake(role: .initiator, identity: alice, name: "a\u{7}b") }
    }

    @Test func identityRoundTripsThroughItsRawKeyAndHidesIt() throws {
        let restored = try NearbyIdentity(rawPrivateKey: alice.rawPrivateKey)
        #expect(restored.publicKey == alice.publicKey)
        #expect(alice.publicKey.shortFingerprint.count == 16)
        #expect("\(alice)" == "NearbyIdentity(\(alice.publicKey.shortFingerprint))")
        #expect(throws: NearbyError.self) { try NearbyIdentity(rawPrivateKey: SecretBytes([1, 2, 3])) }
        #expect(alice.publicKey.isValidSignature(alice.signature(overStaticKey: [9]), overStaticKey: [9]))
        #expect(!alice.publicKey.isValidSignature(alice.signature(overStaticKey: [9]), overStaticKey: [8]))
    }
}

/// The code of the ``NearbyError`` `body` throws (nil when it throws nothing or another error).
func nearbyCode(_ body: () throws -> Void) -> NearbyError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? NearbyError)?.code
    }
}
