internal import InvisoNoise

/// The seed corpus: one input per scenario and fixture that replays a genuine message (so
/// the fuzzer starts from inputs that get through every check), plus valid protocol names.
enum SeedCorpus {
    static func inputs() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(String, [UInt8])] = []
        let scenario = NoiseFuzzTarget.Scenario.self
        for (transcriptIndex, transcript) in fixtures.transcripts.enumerated() {
            let t = UInt8(transcriptIndex)
            for messageIndex in transcript.messages.indices {
                let m = UInt8(messageIndex)
                // XOR mode with an empty patch: exactly the genuine message.
                seeds.append(("handshake-\(t)-\(m)-genuine", [scenario.handshake.rawValue, t, m, 1, 0, 0]))
                // Raw mode carrying the genuine bytes.
                seeds.append(("handshake-\(t)-\(m)-raw", [scenario.handshake.rawValue, t, m, 0] + transcript.messages[messageIndex]))
                seeds.append(("handshake-\(t)-\(m)-loworder", [scenario.handshake.rawValue, t, m, 3, 0, 0]))
                seeds.append(("handshake-\(t)-\(m)-misuse", [scenario.handshake.rawValue, t, m, 7]))
            }
            for direction: UInt8 in [0, 1] {
                // Genuine, forged chunk, XOR-mutated, rekey, replay, jump to exhaustion.
                let operations: [UInt8] = [0, 5, 1, 3, 1, 2, 2, 8, 4, 0x40, 0, 7, 4, 0, 9, 7, 5, 1, 0, 3, 0, 3]
                seeds.append(("transport-\(t)-\(direction)", [scenario.transport.rawValue, t, direction] + operations))
                for window: UInt8 in [0, 2] {
                    let explicit: [UInt8] = [0, 0, 0, 0, 5, 3,  1, 1, 3,  1, 0xFF, 0,  0, 0, 0, 0, 5, 3,  2, 2, 1,
                                             3, 20] + [UInt8](repeating: 0x41, count: 20) + [4, 0, 2, 6, 1, 0x80,
                                             5, 0, 1, 1,  6,  7, 5,  7, 0,  0, 0xFF, 0xFF, 0xFF, 0xFF, 1]
                    seeds.append(("explicit-\(t)-\(direction)-\(window)",
                                  [scenario.explicitNonce.rawValue, t, direction, window] + explicit))
                }
            }
            seeds.append(("name-\(t)", [scenario.protocolName.rawValue] + Array(transcript.noiseProtocol.name.utf8)))
        }
        for name in ["Noise_XXfallback+psk0_25519_AESGCM_SHA512", "Noise_IKpsk1+psk2_25519_ChaChaPoly_BLAKE2b",
                     "Noise_NX1_448_AESGCM_SHA256", "Noise_XXpsk9_25519_ChaChaPoly_SHA256"] {
            seeds.append(("name-\(name)", [scenario.protocolName.rawValue] + Array(name.utf8)))
        }
        for mode: UInt8 in [0, 1, 2, 3, 4, 7] {
            seeds.append(("fallback-\(mode)", [scenario.fallback.rawValue, mode, 0, 0]))
        }
        seeds.append(("fallback-raw-genuine", [scenario.fallback.rawValue, 0] + fixtures.fallback.aliceMessage))
        return seeds
    }
}
