import InvisoNoise
import Testing

@Suite("Noise protocol names")
struct NoiseProtocolNameTests {
    static let suites = ["25519_ChaChaPoly_SHA256", "25519_AESGCM_SHA512", "25519_ChaChaPoly_BLAKE2s", "25519_AESGCM_BLAKE2b"]

    @Test("every base pattern of rev 34 parses: 3 one-way, 12 fundamental, 23 deferred")
    func basePatterns() throws {
        #expect(HandshakePattern.baseNames.count == 38)
        #expect(HandshakePattern.baseNames.filter { HandshakePattern.base(named: $0)!.isOneWay }.count == 3)
        #expect(HandshakePattern.baseNames.filter { $0.contains("1") }.count == 23)
        for base in HandshakePattern.baseNames {
            for suite in Self.suites {
                let parsed = try NoiseProtocol("Noise_\(base)_\(suite)")
                #expect(parsed.pattern.name == base)
            }
        }
    }

    @Test("psk modifiers go where rev 34 §9.4 puts them")
    func pskPlacement() throws {
        let xx0 = try NoiseProtocol("Noise_XXpsk0_25519_ChaChaPoly_SHA256").pattern
        #expect(xx0.messages[0] == [.psk, .e])
        let xx3 = try NoiseProtocol("Noise_XXpsk3_25519_ChaChaPoly_SHA256").pattern
        #expect(xx3.messages[2] == [.s, .se, .psk])
        let multi = try NoiseProtocol("Noise_NXpsk0+psk1+psk2_25519_ChaChaPoly_SHA256").pattern
        #expect(multi.messages == [[.psk, .e, .psk], [.e, .ee, .s, .es, .psk]])
        #expect(multi.preSharedKeyCount == 3)
        #expect(multi.name == "NXpsk0+psk1+psk2")
    }

    @Test("the fallback modifier turns Alice's first message into her pre-message")
    func fallbackShape() throws {
        let pattern = try NoiseProtocol("Noise_XXfallback_25519_ChaChaPoly_SHA256").pattern
        #expect(pattern.responderPreMessage == [.e])
        #expect(pattern.initiatorPreMessage.isEmpty)
        // Bob (now initiator) sends e, ee, s and DH(Bob's s, Alice's e); Alice sends s, DH(Alice's s... Bob's e).
        #expect(pattern.messages == [[.e, .ee, .s, .se], [.s, .es]])
        let withPSK = try NoiseProtocol("Noise_XXfallback+psk0_25519_ChaChaPoly_SHA256").pattern
        #expect(withPSK.messages[0].first == .psk)
    }

    @Test("invalid names are rejected", arguments: [
        "", "Noise", "Noise_XX_25519_ChaChaPoly", "Noise_XX_25519_ChaChaPoly_SHA256_extra",
        "noise_XX_25519_ChaChaPoly_SHA256", "Noise_XY_25519_ChaChaPoly_SHA256", "Noise_xx_25519_ChaChaPoly_SHA256",
        "Noise_XXpsk_25519_ChaChaPoly_SHA256", "Noise_XXpsk4_25519_ChaChaPoly_SHA256", "Noise_NNpsk3_25519_ChaChaPoly_SHA256",
        "Noise_XXpsk01_25519_ChaChaPoly_SHA256", "Noise_XXpsk0+psk0_25519_ChaChaPoly_SHA256",
        "Noise_XXfallback+fallback_25519_ChaChaPoly_SHA256", "Noise_XX+psk0_25519_ChaChaPoly_SHA256",
        "Noise_XXpsk0+_25519_ChaChaPoly_SHA256", "Noise_XXhfs_25519_ChaChaPoly_SHA256", "Noise_XX_25520_ChaChaPoly_SHA256",
        "Noise_XX_25519_ChaCha_SHA256", "Noise_XX_25519_ChaChaPoly_SHA3", "Noise_XX_25519_ChaChaPoly_blake2s",
        "Noise_XXpsk-1_25519_ChaChaPoly_SHA256", "Noise_XXpsk99999_25519_ChaChaPoly_SHA256", "Noise__25519_ChaChaPoly_SHA256",
    ])
    func invalidNames(name: String) {
        #expect(throws: NoiseError.invalidProtocolName) { try NoiseProtocol(name) }
    }

    @Test("modifiers that cannot apply are invalid patterns")
    func invalidModifiers() {
        for name in ["Noise_IKfallback_25519_ChaChaPoly_SHA256", "Noise_Nfallback_25519_ChaChaPoly_SHA256",
                     "Noise_KNfallback_25519_ChaChaPoly_SHA256", "Noise_XXpsk0+fallback_25519_ChaChaPoly_SHA256"] {
            #expect(throws: NoiseError.invalidPattern) { try NoiseProtocol(name) }
        }
    }

    @Test("names over 255 bytes are rejected; DH 448 is unsupported, not invalid")
    func lengthAndUnsupported() {
        let long = "Noise_XX" + (0..<70).map { "+psk\($0)" }.joined() + "_25519_ChaChaPoly_SHA256"
        #expect(long.utf8.count > 255)
        #expect(throws: NoiseError.invalidProtocolName) { try NoiseProtocol(long) }
        #expect(throws: NoiseError.unsupportedAlgorithm) { try NoiseProtocol("Noise_XX_448_ChaChaPoly_SHA256") }
    }
}
