internal import InvisoNoise
internal import InvisoFuzzSupport

/// Everything the scenarios precompute once per process.
struct Fixtures: Sendable {
    /// The protocols whose genuine handshakes the scenarios mutate: the common patterns,
    /// PSK and deferred variants, both one-way patterns with and without `s`, and every
    /// cipher and hash.
    static let protocolNames = [
        "Noise_XX_25519_ChaChaPoly_SHA256",
        "Noise_IK_25519_ChaChaPoly_BLAKE2s",
        "Noise_NK_25519_AESGCM_SHA256",
        "Noise_XXpsk3_25519_ChaChaPoly_SHA512",
        "Noise_NNpsk0_25519_AESGCM_BLAKE2b",
        "Noise_N_25519_ChaChaPoly_SHA256",
        "Noise_X_25519_AESGCM_BLAKE2s",
        "Noise_X1X1_25519_AESGCM_SHA512",
        "Noise_IX_25519_ChaChaPoly_BLAKE2b",
        "Noise_KK_25519_AESGCM_SHA256",
    ]

    let keys: FuzzKeys
    /// One transcript per entry of ``protocolNames``, then the `XXfallback` handshake
    /// reached through the fallback API (``fallback``'s transcript).
    let transcripts: [Transcript]
    let fallback: FallbackFixture

    init() {
        let keys = FuzzKeys()
        LowOrderPoints.verify(with: keys)
        var transcripts = Self.protocolNames.map { name in
            let noiseProtocol = mustSucceed("parsing \(name)") { () throws(NoiseError) in try NoiseProtocol(name) }
            let parties = mustSucceed("initialising \(name)") { () throws(NoiseError) in
                try Transcript.parties(noiseProtocol, keys: keys)
            }
            return Transcript(initiator: parties.initiator, responder: parties.responder)
        }
        let fallback = FallbackFixture(keys: keys)
        transcripts.append(fallback.transcript)
        self.keys = keys
        self.transcripts = transcripts
        self.fallback = fallback
    }
}

/// Noise Pipes (rev 34 §10): Alice still pins Bob's old static key, so her `IK` first
/// message fails at Bob, who falls back to `XXfallback` using her ephemeral key.
struct FallbackFixture: Sendable {
    static let protocolName = "Noise_IK_25519_ChaChaPoly_BLAKE2s"

    /// Bob before reading anything.
    let bob: HandshakeState
    /// Alice before writing her first message.
    let aliceBefore: HandshakeState
    /// Alice after writing it.
    let alice: HandshakeState
    /// Alice's first message, which Bob cannot read.
    let aliceMessage: [UInt8]
    /// The genuine `XXfallback` handshake: Bob is its initiator, Alice its responder.
    let transcript: Transcript

    init(keys: FuzzKeys) {
        let ik = mustSucceed("parsing IK") { () throws(NoiseError) in try NoiseProtocol(Self.protocolName) }
        let prologue = Array("inviso fuzz pipes".utf8)
        var alice = mustSucceed("initialising Alice") { () throws(NoiseError) in
            try HandshakeState(
                ik, role: .initiator, prologue: prologue, localStatic: keys.initiatorStatic,
                localEphemeral: keys.initiatorEphemeral, remoteStatic: keys.responderOldStatic.publicKey,
                ephemeralGenerator: keys.ephemeralGenerator)
        }
        let bob = mustSucceed("initialising Bob") { () throws(NoiseError) in
            try HandshakeState(
                ik, role: .responder, prologue: prologue, localStatic: keys.responderStatic,
                localEphemeral: keys.responderEphemeral, ephemeralGenerator: keys.ephemeralGenerator)
        }
        aliceBefore = alice
        let message = mustSucceed("Alice writing IK message 1") { () throws(NoiseError) in
            try alice.writeMessage(Transcript.payload(0))
        }
        var probe = bob
        do throws(NoiseError) {
            _ = try probe.readMessage(message)
            fatalError("Bob read a message encrypted to his old static key")
        } catch {
            invariant(error == .authenticationFailed, "Bob failed with \(error), expected authenticationFailed")
        }
        invariant(HandshakeView(probe) == HandshakeView(bob), "Bob's failed read changed his state")
        let bobFallback = mustSucceed("Bob falling back") { () throws(NoiseError) in try bob.fallback(firstMessage: message) }
        let aliceFallback = mustSucceed("Alice falling back") { () throws(NoiseError) in try alice.fallback() }
        invariant(bobFallback.noiseProtocol.name == "Noise_XXfallback_25519_ChaChaPoly_BLAKE2s", "unexpected fallback protocol")
        self.bob = bob
        self.alice = alice
        aliceMessage = message
        transcript = Transcript(initiator: bobFallback, responder: aliceFallback)
    }
}

/// Built on first use and shared by every fuzz iteration (read-only).
let fixtures = Fixtures()
