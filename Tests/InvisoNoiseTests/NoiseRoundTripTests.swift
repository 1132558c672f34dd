import Crypto
import InvisoNoise
import InvisoTesting
import Testing

/// Seeded random round trips over every pattern and modifier combination the vectors do
/// not reach (e.g. psk on deferred patterns, fallback with psk).
@Suite("Noise round trips")
struct NoiseRoundTripTests {
    static var names: [String] {
        var names: [String] = []
        for base in HandshakePattern.baseNames {
            let messageCount = HandshakePattern.base(named: base)!.messages.count
            names.append(base)
            for position in 0...messageCount { names.append("\(base)psk\(position)") }
            names.append("\(base)psk0+psk\(messageCount)")
        }
        names += ["XXfallback", "NNfallback", "XXfallback+psk0", "XXfallback+psk2", "NXfallback", "XNfallback+psk1"]
        return names
    }

    @Test("every pattern with psk variants completes and both sides agree", arguments: names)
    func roundTrip(pattern: String) throws {
        for (index, suite) in ["25519_ChaChaPoly_SHA256", "25519_AESGCM_BLAKE2b"].enumerated() {
            var pair = try HandshakePair("Noise_\(pattern)_\(suite)", prologue: Array(pattern.utf8), seed: UInt64(index + 7))
            var (initiator, responder) = try pair.complete()
            #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)
            #expect(pair.initiator.handshakeHash.count == (suite.hasSuffix("SHA256") ? 32 : 64))
            var random = SeededGenerator(seed: UInt64(pattern.utf8.count))
            for _ in 0..<5 {
                let message = random.bytes(Int(random.next() % 300))
                #expect(try responder.decrypt(try initiator.encrypt(message)) == message)
                if !pair.initiator.noiseProtocol.pattern.isOneWay {
                    #expect(try initiator.decrypt(try responder.encrypt(message)) == message)
                }
            }
        }
    }

    @Test("static keys are authenticated: each side learns the other's static key")
    func staticKeysLearned() throws {
        var pair = try HandshakePair("Noise_XX_25519_ChaChaPoly_SHA256")
        let (initiator, responder) = try pair.complete()
        #expect(initiator.remoteStaticPublicKey != nil)
        #expect(responder.remoteStaticPublicKey != nil)
        #expect(initiator.remoteStaticPublicKey != responder.remoteStaticPublicKey)
    }

    @Test("Noise Pipes: IK with a stale server key falls back to XXfallback")
    func noisePipes() throws {
        let ik = try NoiseProtocol("Noise_IK_25519_ChaChaPoly_BLAKE2s")
        let bobStatic = NoiseKeyPair.generate()
        let staleBobKey = NoiseKeyPair.generate().publicKey
        var alice = try HandshakeState(ik, role: .initiator, prologue: [7], localStatic: .generate(), remoteStatic: staleBobKey)
        let bob = try HandshakeState(ik, role: .responder, prologue: [7], localStatic: bobStatic)
        let first = try alice.writeMessage(Array("0-RTT".utf8))
        var attempt = bob
        #expect(throws: NoiseError.authenticationFailed) { try attempt.readMessage(first) }
        var bobFallback = try bob.fallback(firstMessage: first)
        var aliceFallback = try alice.fallback()
        #expect(bobFallback.role == .initiator && aliceFallback.role == .responder)
        _ = try aliceFallback.readMessage(try bobFallback.writeMessage())
        _ = try bobFallback.readMessage(try aliceFallback.writeMessage())
        #expect(aliceFallback.remoteStaticPublicKey == bobStatic.publicKey)
        var bobTransport = try bobFallback.transport()
        var aliceTransport = try aliceFallback.transport()
        #expect(try aliceTransport.decrypt(try bobTransport.encrypt([1, 2])) == [1, 2])
        #expect(try bobTransport.decrypt(try aliceTransport.encrypt([3])) == [3])
        // Fallback is only possible at that point of the handshake.
        #expect(throws: NoiseError.fallbackNotPossible) { try aliceFallback.fallback() }
        #expect(throws: NoiseError.fallbackNotPossible) { try bob.fallback() }
    }
}
