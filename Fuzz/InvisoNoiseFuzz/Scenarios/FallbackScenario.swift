internal import InvisoNoise
internal import InvisoFuzzSupport

/// Scenario 4: Noise Pipes. Bob (`IK` responder) receives a forged first message, fails,
/// and falls back to `XXfallback` with whatever ephemeral key the message starts with.
///
/// Input: shape mode (see ``MessageShape``; mode 7 instead checks `fallback()` misuse),
/// then the shape's bytes, applied to Alice's genuine first message.
enum FallbackScenario {
    static func run(_ input: inout FuzzInput, fixture: FallbackFixture) {
        let mode = input.byte()
        if mode % 8 == 7 {
            misuse(fixture)
            return
        }
        let message = MessageShape.make(mode: mode, genuine: fixture.aliceMessage, input: &input)
        var bob = fixture.bob
        do throws(NoiseError) {
            _ = try bob.readMessage(message)
            // Reading it would need Bob's static key in Alice's es/ss: only a forgery gets here.
            invariant(message != fixture.aliceMessage, "Bob read a message encrypted to his old key")
            return
        } catch {
            let allowed: [NoiseError] = [.malformedMessage, .authenticationFailed, .lowOrderPublicKey, .messageTooLarge]
            invariant(allowed.contains(error), "Bob's IK read failed with unexpected \(error)")
            invariant(HandshakeView(bob) == HandshakeView(fixture.bob), "Bob's failed IK read changed his state")
        }

        let ephemeralLength = 32
        do throws(NoiseError) {
            var fallback = try bob.fallback(firstMessage: message)
            invariant(message.count >= ephemeralLength, "fallback accepted a \(message.count)-byte first message")
            invariant(fallback.role == .initiator && fallback.nextMessageIndex == 0 && fallback.isWriteTurn,
                      "Bob's fallback state is not an initiator about to write")
            invariant(fallback.remoteEphemeralPublicKey == Array(message.prefix(ephemeralLength)),
                      "Bob's fallback did not take Alice's ephemeral from the message")
            let before = HandshakeView(fallback)
            do throws(NoiseError) {
                let written = try fallback.writeMessage(fixture.transcript.payloads[0])
                let sameEphemeral = message.prefix(ephemeralLength) == fixture.aliceMessage.prefix(ephemeralLength)
                invariant((written == fixture.transcript.messages[0]) == sameEphemeral,
                          "Bob's fallback message and Alice's ephemeral disagree")
                if sameEphemeral {
                    fixture.transcript.finish(fallback, from: 1)
                }
            } catch {
                invariant(error == .lowOrderPublicKey, "Bob's fallback write failed with \(error)")
                invariant(HandshakeView(fallback) == before, "Bob's failed fallback write changed the state")
            }
        } catch {
            invariant(error == .fallbackNotPossible && message.count < ephemeralLength, "Bob's fallback failed with \(error)")
        }

        // Bob's state is untouched: with Alice's genuine message he still falls back, and
        // the fallback handshake completes byte for byte.
        let genuine = mustSucceed("Bob falling back with the genuine message") { () throws(NoiseError) in
            try bob.fallback(firstMessage: fixture.aliceMessage)
        }
        fixture.transcript.finish(genuine, from: 0)
    }

    /// `fallback()` from the wrong point, or to a pattern that is not a fallback, refuses.
    static func misuse(_ fixture: FallbackFixture) {
        let cases: [(String, () throws(NoiseError) -> HandshakeState)] = [
            ("Bob without the first message", { () throws(NoiseError) in try fixture.bob.fallback() }),
            ("Alice before writing", { () throws(NoiseError) in try fixture.aliceBefore.fallback() }),
            ("Alice to plain XX", { () throws(NoiseError) in
                try fixture.alice.fallback(to: try NoiseProtocol("Noise_XX_25519_ChaChaPoly_BLAKE2s"))
            }),
            ("Bob with a short message", { () throws(NoiseError) in
                try fixture.bob.fallback(firstMessage: Array(fixture.aliceMessage.prefix(31)))
            }),
        ]
        for (what, call) in cases {
            do throws(NoiseError) {
                _ = try call()
                fatalError("invariant violated: fallback for \(what) was accepted")
            } catch {
                invariant(error == .fallbackNotPossible, "fallback for \(what) failed with \(error)")
            }
        }
        let alice = mustSucceed("Alice falling back") { () throws(NoiseError) in try fixture.alice.fallback() }
        invariant(HandshakeView(alice) == HandshakeView(fixture.transcript.responderStates[0]), "Alice's fallback state differs")
    }
}
