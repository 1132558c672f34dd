internal import InvisoNoise
internal import InvisoFuzzSupport

/// Scenario 0: a party in the middle of a genuine handshake reads a forged message.
///
/// Input: transcript selector, message index, shape mode (see ``MessageShape``; mode 7
/// instead checks misuse: wrong turn, finished handshake, early `transport()`), then the
/// shape's bytes. The reader is whoever receives that message: the responder for message
/// 0, the initiator (after writing message 0) for message 1, and so on.
enum HandshakeScenario {
    static func run(_ input: inout FuzzInput, fixtures: Fixtures) {
        let transcript = fixtures.transcripts[Int(input.byte()) % fixtures.transcripts.count]
        let index = Int(input.byte()) % transcript.messages.count
        let mode = input.byte()
        if mode % 8 == 7 {
            misuse(transcript, index: index)
            return
        }
        let reader = transcript.writer(of: index).peer
        let before = transcript.states(of: reader)[index]
        let genuine = transcript.messages[index]
        let message = MessageShape.make(mode: mode, genuine: genuine, input: &input)
        let name = transcript.noiseProtocol.name

        var state = before
        do throws(NoiseError) {
            let payload = try state.readMessage(message)
            invariant(message.count <= MessageShape.maximumMessageLength, "\(name): accepted an oversized message")
            invariant(state.nextMessageIndex == index + 1, "\(name): accepted message did not advance the state")
            // Every byte of a handshake message is mixed into h, so the hash matches the
            // genuine one exactly when the bytes do.
            let sameHash = state.handshakeHash == transcript.hashes[index + 1]
            invariant(sameHash == (message == genuine), "\(name): accepted message \(index) and its hash disagree")
            if message == genuine {
                invariant(payload == transcript.payloads[index], "\(name): genuine payload \(index) differs")
                transcript.finish(state, from: index + 1)
            } else {
                // Accepted but not genuine (unauthenticated bytes, e.g. a cleartext first
                // message): whatever follows must still fail cleanly or succeed.
                proceed(state, name: name)
            }
        } catch {
            let allowed: [NoiseError] = [.malformedMessage, .authenticationFailed, .lowOrderPublicKey, .messageTooLarge]
            invariant(allowed.contains(error), "\(name): reading message \(index) failed with unexpected \(error)")
            invariant(message.count <= MessageShape.maximumMessageLength || error == .messageTooLarge,
                      "\(name): oversized message failed with \(error)")
            invariant(HandshakeView(state) == HandshakeView(before), "\(name): failed readMessage changed the state")
            invariant(message != genuine, "\(name): the genuine message \(index) was rejected")
            // The rejected forgery cost nothing: the genuine handshake still completes.
            transcript.finish(state, from: index)
        }
    }

    /// After a non-genuine message was accepted: the next write either succeeds or fails
    /// with the state unchanged, and a finished handshake yields its transport.
    static func proceed(_ start: HandshakeState, name: String) {
        var state = start
        while !state.isComplete && state.isWriteTurn {
            let before = HandshakeView(state)
            do throws(NoiseError) {
                _ = try state.writeMessage(Array("reply".utf8))
            } catch {
                invariant(error == .lowOrderPublicKey, "\(name): writing after a forged message failed with \(error)")
                invariant(HandshakeView(state) == before, "\(name): failed writeMessage changed the state")
                return
            }
        }
        if state.isComplete {
            _ = mustSucceed("\(name): transport after completion") { () throws(NoiseError) in try state.transport() }
        }
    }

    /// Calls that are refused for the state they find, and must leave it untouched.
    static func misuse(_ transcript: Transcript, index: Int) {
        let name = transcript.noiseProtocol.name
        let message = transcript.messages[index]
        let writerState = transcript.states(of: transcript.writer(of: index))[index]
        let readerState = transcript.states(of: transcript.writer(of: index).peer)[index]
        expectRefusal(writerState, .outOfTurn, "\(name): writer reading message \(index)") { state throws(NoiseError) in
            _ = try state.readMessage(message)
        }
        expectRefusal(readerState, .outOfTurn, "\(name): reader writing message \(index)") { state throws(NoiseError) in
            _ = try state.writeMessage([])
        }
        for role in [NoiseRole.initiator, .responder] {
            let finished = transcript.states(of: role).last!
            expectRefusal(finished, .handshakeAlreadyComplete, "\(name): \(role) reading after completion") { state throws(NoiseError) in
                _ = try state.readMessage(message)
            }
            expectRefusal(finished, .handshakeAlreadyComplete, "\(name): \(role) writing after completion") { state throws(NoiseError) in
                _ = try state.writeMessage([])
            }
            let unfinished = transcript.states(of: role)[index]
            expectRefusal(unfinished, .handshakeNotComplete, "\(name): \(role) transport before completion") { state throws(NoiseError) in
                _ = try state.transport()
            }
        }
        // fallback() only works for Bob before his first read or Alice right after her
        // first write; elsewhere it must refuse.
        let eligible = (readerState.role == .responder && index == 0) || (readerState.role == .initiator && index == 1)
        do throws(NoiseError) {
            let derived = try readerState.fallback(firstMessage: index == 0 ? message : nil)
            invariant(eligible, "\(name): fallback accepted at message \(index) for \(readerState.role)")
            invariant(derived.nextMessageIndex == 0 && derived.role == readerState.role.peer, "\(name): fallback state is wrong")
        } catch {
            invariant(!eligible && error == .fallbackNotPossible, "\(name): fallback failed with \(error)")
        }
    }

    static func expectRefusal(
        _ start: HandshakeState,
        _ expected: NoiseError,
        _ what: String,
        _ call: (inout HandshakeState) throws(NoiseError) -> Void
    ) {
        var state = start
        do throws(NoiseError) {
            try call(&state)
            fatalError("invariant violated: \(what) was accepted")
        } catch {
            invariant(error == expected, "\(what) failed with \(error), expected \(expected)")
        }
        invariant(HandshakeView(state) == HandshakeView(start), "\(what) changed the state")
    }
}
