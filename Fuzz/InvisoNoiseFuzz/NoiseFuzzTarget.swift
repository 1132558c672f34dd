import InvisoFuzzSupport

/// The one entry function shared by the libFuzzer callback and the replay tool.
///
/// The first byte picks a scenario; each scenario reads the rest with ``FuzzInput``, so
/// every byte string is a valid input. A broken property of the library stops the process
/// through ``invariant(_:_:file:line:)``, which libFuzzer reports as a crash.
enum NoiseFuzzTarget {
    enum Scenario: UInt8, CaseIterable {
        /// `readMessage` of a forged handshake message (``HandshakeScenario``).
        case handshake
        /// `NoiseTransport.decrypt` sequences (``TransportScenario``).
        case transport
        /// `ExplicitNonceTransport.open` sequences and the replay window (``ExplicitNonceScenario``).
        case explicitNonce
        /// `NoiseProtocol(name)` parsing, then a full handshake if it parses (``ProtocolNameScenario``).
        case protocolName
        /// Noise Pipes fallback from a forged `IK` first message (``FallbackScenario``).
        case fallback
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let scenario = Scenario(rawValue: input.byte() % UInt8(Scenario.allCases.count))!
        switch scenario {
        case .handshake: HandshakeScenario.run(&input, fixtures: fixtures)
        case .transport: TransportScenario.run(&input, fixtures: fixtures)
        case .explicitNonce: ExplicitNonceScenario.run(&input, fixtures: fixtures)
        case .protocolName: ProtocolNameScenario.run(&input, keys: fixtures.keys)
        case .fallback: FallbackScenario.run(&input, fixture: fixtures.fallback)
        }
    }
}
