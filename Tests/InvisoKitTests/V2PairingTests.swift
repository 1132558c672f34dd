import Crypto
import InvisoCrypto
@testable import InvisoKit
import InvisoNoise
import InvisoSignal
import InvisoTesting
import Testing

@Suite("Inviso v2 pairing")
struct V2PairingTests {
    @Test("both roles pair: the frames have the specified types and sizes, and the sessions talk")
    func pairing() throws {
        var link = V2Link()
        #expect(link.creator.pairing.state == .ready && link.joiner.pairing.state == .ready)
        link.start()
        #expect(link.creator.pairing.state == .awaitingCPace && link.joiner.pairing.state == .awaitingCPace)
        #expect(link.creator.pairing.start().isEmpty)  // once only
        link.run()
        #expect(link.refused.isEmpty)
        try link.expectWorkingSessions()

        let frames = link.delivered.map(\.frame)
        #expect(link.delivered.map(\.to) == [.joiner, .creator, .joiner, .creator, .joiner, .creator])
        #expect(frames.map(\.count).prefix(5) == [35, 35, 49, 130, 65])
        #expect(frames.map { $0[0] } == [0x01, 0x01, 0x02, 0x02, 0x02, 0x03])
        for cpace in frames[0...1] { #expect(cpace[1] == 0x20 && cpace[34] == 0x00) }
        #expect(frames[5][1] == 0x34 && frames[5].count == 67)  // SignalMessage version 3, one CBC block

        let creatorSession = try #require(link.creator.session)
        let joinerSession = try #require(link.joiner.session)
        #expect(creatorSession.peerIdentity == link.joiner.staticKey.publicKey)
        #expect(joinerSession.peerIdentity == link.creator.staticKey.publicKey)
        #expect(creatorSession.localIdentity == link.creator.staticKey.publicKey)
        #expect(creatorSession.role == .creator && joinerSession.role == .joiner)

        // Seeded generators make the run reproducible.
        var again = V2Link()
        again.start()
        again.run()
        #expect(again.delivered.map(\.frame) == frames)
    }

    @Test("the derivations are the documented HKDFs")
    func derivations() throws {
        let isk = SecretBytes((0..<64).map { UInt8($0) })
        let room = Array(V2Fixture.roomID.utf8)
        let psk = V2KeySchedule.preSharedKey(isk: isk, roomID: room)
        let expectedPSK = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: (0..<64).map { UInt8($0) }), salt: room,
            info: Array("inviso v2 psk".utf8), outputByteCount: 32)
        #expect(psk == expectedPSK)

        let sidOutput = [UInt8](repeating: 0xAB, count: 64)
        #expect(
            V2KeySchedule.prologue(roomID: room, sessionIDOutput: sidOutput)
                == Array("inviso v2".utf8) + [0] + room + [0] + sidOutput)

        let k1 = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
        let k2 = SymmetricKey(data: [UInt8](repeating: 2, count: 32))
        let h = [UInt8](repeating: 3, count: 32)
        let (root, chain) = V2KeySchedule.ratchetSeed(initiatorToResponder: k1, responderToInitiator: k2, handshakeHash: h)
        let expected = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 2, count: 32)),
            salt: h, info: Array("inviso v2 ratchet".utf8), outputByteCount: 64
        ).withUnsafeBytes { Array($0) }
        #expect(root.key == SecretBytes(expected[0..<32]) && chain.key == SecretBytes(expected[32..<64]) && chain.index == 0)
        #expect(V2KeySchedule.noiseProtocol.name == "Noise_XXpsk3_25519_ChaChaPoly_SHA256")
    }

    @Test("wrong words: the joiner fails at msg3 and aborts, the creator reports pairingFailed, no session")
    func wrongWords() throws {
        var link = V2Link(joinerInvite: V2Fixture.wrongInvite)
        link.start()
        for _ in 0..<4 { #expect(link.deliverNext() == .some(nil)) }  // CPace ×2, msg1, msg2 all pass
        #expect(link.joiner.pairing.state == .handshaking && link.creator.pairing.state == .awaitingConfirmation)
        #expect(link.next?.to == .joiner)
        link.deliverNext()  // msg3
        #expect(link.joiner.failure == .authenticationFailed)
        #expect(link.joiner.pairing.state == .failed(.authenticationFailed))
        #expect(link.next?.frame == [0x7F, 0x01])
        link.deliverNext()
        #expect(link.creator.failure == .pairingFailed && link.creator.pairing.state == .failed(.pairingFailed))
        #expect(link.next == nil)
        #expect(link.creator.session == nil && link.joiner.session == nil)
        // One attempt: a failed pairing stays failed, even for the genuine frames.
        var creator = link.creator
        #expect(throws: V2Error.pairingFailed) { try creator.receive(link.delivered[1].frame) }
        #expect(throws: V2Error.notEstablished) { try creator.pairing.seal([1]) }
    }

    @Test("a server in the middle with its own keys and a guessed secret fails closed on both sides")
    func manInTheMiddle() throws {
        // The server runs a pairing with each side, as the joiner toward the creator and as
        // the creator toward the joiner, with its own static keys and a guess of the words.
        var creatorSide = V2Link(
            creator: V2Side(.creator, seed: 1), joiner: V2Side(.joiner, invite: V2Fixture.wrongInvite, seed: 66))
        var joinerSide = V2Link(
            creator: V2Side(.creator, invite: V2Fixture.wrongInvite, seed: 77), joiner: V2Side(.joiner, seed: 2))
        creatorSide.start()
        creatorSide.run()
        joinerSide.start()
        joinerSide.run()
        for link in [creatorSide, joinerSide] { #expect(link.creator.session == nil && link.joiner.session == nil) }
        #expect(creatorSide.creator.failure == .pairingFailed)  // the server could not read msg3 and aborted
        #expect(joinerSide.joiner.failure == .authenticationFailed)  // msg3 from the server did not authenticate
    }

    @Test("a server that substitutes one CPace message, or relays between two runs, fails closed")
    func substitutedCPace() throws {
        // The server swaps the creator's CPace message for its own (right words even).
        var server = V2Side(.creator, seed: 99)
        let serverCPace = server.start()[0]
        var link = V2Link()
        link.start()
        link.deliverNext(substitute: serverCPace)
        link.run()
        #expect(link.creator.session == nil && link.joiner.session == nil)
        // The two CPace transcripts differ, so do the sid_outputs in the prologues: msg1,
        // whose payload tag covers h, fails at the joiner.
        #expect(link.joiner.failure == .authenticationFailed)
        #expect(link.creator.failure == .pairingFailed)

        // The server swaps the joiner's msg2 for one from its own run with the creator's
        // CPace message (it cannot complete CPace with the creator's transcript).
        var first = V2Link()
        first.start()
        var other = V2Link(creatorSeed: 1, joinerSeed: 5)
        other.start()
        other.run()
        let foreignMessage2 = other.delivered[3].frame
        for _ in 0..<3 { first.deliverNext() }
        first.deliverNext(substitute: foreignMessage2)
        first.run()
        #expect(first.creator.session == nil && first.joiner.session == nil)
        #expect(first.creator.failure == .authenticationFailed && first.joiner.failure == .pairingFailed)
    }

    @Test("a server that guesses the words right is caught by the safety numbers")
    func luckyServer() throws {
        var toCreator = V2Link(creator: V2Side(.creator, seed: 1), joiner: V2Side(.joiner, seed: 66))
        var toJoiner = V2Link(creator: V2Side(.creator, seed: 77), joiner: V2Side(.joiner, seed: 2))
        toCreator.start()
        toCreator.run()
        toJoiner.start()
        toJoiner.run()
        let creatorView = try #require(toCreator.creator.session)
        let joinerView = try #require(toJoiner.joiner.session)
        #expect(creatorView.safetyNumber != joinerView.safetyNumber)
        #expect(creatorView.peerIdentity == toCreator.joiner.staticKey.publicKey)
        #expect(creatorView.peerIdentity != toJoiner.joiner.staticKey.publicKey)
    }

    @Test(
        "every byte of every pairing frame flipped: a typed refusal that changes nothing, or a failed pairing, never a session",
        arguments: 0..<6)
    func tamper(step: Int) throws {
        let genuine = V2Link.paired().delivered
        let frame = genuine[step].frame
        var refusedCount = 0
        var failedCount = 0
        for index in frame.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var link = V2Link()
                link.start()
                for _ in 0..<step { link.deliverNext() }
                #expect(link.next?.frame == frame)
                var flipped = frame
                flipped[index] ^= mask
                let recipient = genuine[step].to
                let before = recipient == .creator ? link.creator.pairing.state : link.joiner.pairing.state
                let refusal = link.deliverNext(substitute: flipped)
                if case .some(.some(let error)) = refusal {
                    // Refused: nothing changed, so the genuine frame still completes the pairing.
                    refusedCount += 1
                    #expect([V2Error.malformedFrame, .unexpectedFrame, .authenticationFailed].contains(error))
                    let after = recipient == .creator ? link.creator.pairing.state : link.joiner.pairing.state
                    #expect(before == after, "step \(step) byte \(index)")
                    link.deliver(genuine[step])
                    link.run()
                    try link.expectWorkingSessions()
                } else {
                    link.run()
                    failedCount += 1
                    #expect(link.creator.session == nil && link.joiner.session == nil, "step \(step) byte \(index) mask \(mask)")
                    #expect(link.creator.failure != nil && link.joiner.failure != nil, "step \(step) byte \(index) mask \(mask)")
                }
            }
        }
        #expect(refusedCount + failedCount == 2 * frame.count)
        if step == 5 { #expect(failedCount == 0) }  // the confirmation is a ratchet frame: refused, never fatal
    }

    @Test("frames in the wrong state are refused and change nothing; the genuine flow then completes")
    func wrongState() throws {
        let transcript = V2Link.paired().delivered
        var link = V2Link()
        // Before start, every frame is unexpected.
        for delivery in transcript {
            #expect(throws: V2Error.unexpectedFrame) { try link.creator.receive(delivery.frame) }
            #expect(throws: V2Error.unexpectedFrame) { try link.joiner.receive(delivery.frame) }
        }
        link.start()
        for (step, genuine) in transcript.enumerated() {
            #expect(link.next?.frame == genuine.frame)
            for other in transcript.map(\.frame) where other != genuine.frame {
                var side = genuine.to == .creator ? link.creator : link.joiner
                let before = side.pairing.state
                #expect(throws: V2Error.unexpectedFrame, "step \(step)") { try side.receive(other) }
                #expect(side.pairing.state == before && side.session == nil && side.failure == nil)
                if genuine.to == .creator { link.creator = side } else { link.joiner = side }
            }
            link.deliverNext()
        }
        #expect(link.next == nil)
        try link.expectWorkingSessions()
        for delivery in transcript {
            #expect(throws: V2Error.unexpectedFrame) { try link.creator.receive(delivery.frame) }
            #expect(throws: V2Error.unexpectedFrame) { try link.joiner.receive(delivery.frame) }
        }
        // Junk of no v2 type is malformed, and also changes nothing.
        var fresh = V2Link()
        fresh.start()
        for junk: [UInt8] in [[], [0x00], [0x05, 1, 2], [0x7F], [0x7F, 1, 2]] {
            #expect(throws: V2Error.malformedFrame) { try fresh.joiner.receive(junk) }
        }
        fresh.run()
        try fresh.expectWorkingSessions()
    }

    @Test("an abort fails the pairing in every state before the end")
    func abort() throws {
        for step in 0..<6 {
            var link = V2Link()
            link.start()
            for _ in 0..<step { link.deliverNext() }
            let actions =
                link.next?.to == .creator
                ? try link.creator.pairing.receive([0x7F, 0x01]) : try link.joiner.pairing.receive([0x7F, 0x01])
            guard case .failed(.pairingFailed)? = actions.first, actions.count == 1 else {
                Issue.record("step \(step): \(actions)")
                continue
            }
        }
    }

    @Test("low-order CPace shares and a bad ratchet key in msg2 fail the pairing")
    func invalidKeys() throws {
        var link = V2Link()
        link.start()
        link.deliverNext(substitute: [0x01, 0x20] + [UInt8](repeating: 0, count: 32) + [0x00])
        #expect(link.joiner.failure == .invalidPeerKey)
        #expect(link.inFlight.last?.frame == [0x7F, 0x01] && link.inFlight.last?.to == .creator)

        // A joiner whose msg2 carries a low-order "ratchet key": honest Noise, bad payload.
        var creator = V2Side(.creator, seed: 1)
        var joinerGenerator = SeededGenerator(seed: 2)
        let joinerStatic = V2Fixture.keyPair(using: &joinerGenerator)
        var joinerParty = try CPace.Party(
            role: .responder, prs: V2Fixture.invite.passwordRelatedString, ci: Array("inviso v2".utf8),
            sid: Array(V2Fixture.roomID.utf8), using: &joinerGenerator)
        let creatorCPace = creator.start()[0]
        let msg1 = try creator.receive([0x01] + joinerParty.message)[0]
        let output = try joinerParty.receive(Array(creatorCPace.dropFirst()))
        var handshake = try HandshakeState(
            V2KeySchedule.noiseProtocol, role: .responder,
            prologue: V2KeySchedule.prologue(roomID: Array(V2Fixture.roomID.utf8), sessionIDOutput: output.sessionIDOutput),
            localStatic: joinerStatic,
            preSharedKeys: [V2KeySchedule.preSharedKey(isk: output.intermediateSessionKey, roomID: Array(V2Fixture.roomID.utf8))])
        #expect(try handshake.readMessage(Array(msg1.dropFirst())).isEmpty)
        let lowOrder = [0x05] + [UInt8](repeating: 0, count: 32)
        let msg2 = try handshake.writeMessage(lowOrder)
        let replies = try creator.receive([0x02] + msg2)
        #expect(creator.failure == .invalidPeerKey && replies == [[0x7F, 0x01]])
    }

    @Test("the creator may seal before the confirmation; a message may stand in for the confirmation")
    func earlyMessages() throws {
        var link = V2Link()
        link.start()
        for _ in 0..<4 { link.deliverNext() }
        #expect(link.creator.pairing.state == .awaitingConfirmation)
        #expect(throws: V2Error.notEstablished) { try link.joiner.pairing.seal([0]) }
        let early = try link.creator.pairing.seal(Array("early".utf8))
        link.deliverNext()  // msg3: the joiner is established and sends its confirmation
        var joinerSession = try #require(link.joiner.session)
        #expect(try joinerSession.open(early) == Array("early".utf8))
        // The joiner's next message overtakes its confirmation.
        let overtaking = joinerSession.seal(Array("first".utf8))
        let confirmation = try #require(link.next?.frame)
        _ = try link.creator.receive(overtaking)
        #expect(link.creator.pairing.state == .established && link.creator.received == [Array("first".utf8)])
        var creatorSession = try #require(link.creator.session)
        #expect(throws: V2Error.unexpectedFrame) { try creatorSession.open(confirmation) }
        #expect(try joinerSession.open(creatorSession.seal([9])) == [9])
    }

    @Test("room ids are checked; descriptions and dumps show no secret")
    func roomAndRedaction() throws {
        var generator = SeededGenerator(seed: 3)
        let key = V2Fixture.keyPair(using: &generator)
        for room in ["", String(repeating: "a", count: 256), "a\u{0}b"] {
            #expect(throws: V2Error.invalidRoomID) {
                try V2Pairing(role: .creator, invite: V2Fixture.invite, roomID: room, staticKey: key, using: &generator)
            }
        }
        let link = V2Link.paired()
        let session = try #require(link.creator.session)
        let privateHex = Hex.encode(link.creator.staticKey.privateKey.rawRepresentation)
        var texts = [String(describing: link.creator.pairing), String(reflecting: link.joiner.pairing), "\(session)",
                     String(reflecting: session)]
        for value in [link.creator.pairing as Any, session as Any, V2Fixture.invite as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        for text in texts {
            #expect(!text.contains(privateHex))
            for word in V2Fixture.invite.words { #expect(!text.contains(word), "\(text)") }
        }
    }
}
