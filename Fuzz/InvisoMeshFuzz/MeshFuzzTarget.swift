import InvisoFuzzSupport

/// The one entry function shared by the libFuzzer callback and the replay tool.
///
/// The first byte picks a scenario; the rest is its input. Every decoder gets arbitrary
/// bytes; what it accepts must re-encode to bytes that decode to the same value (byte for
/// byte where the format is canonical). A broken property stops the process through
/// ``invariant(_:_:file:line:)``, which libFuzzer reports as a crash.
enum MeshFuzzTarget {
    enum Scenario: UInt8, CaseIterable {
        /// `MeshPacket.decode`, re-encoding, signing bytes, decompression (``PacketScenario``).
        case packet
        /// `Inflate.decompress` with a fuzzed limit (``InflateScenario``).
        case inflate
        /// One payload decoder, chosen by the next byte (``PayloadScenario``).
        case payload
        /// A sequence of genuine, forged and raw fragments into a `Reassembler` (``ReassemblyScenario``).
        case reassembly
    }

    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let scenario = Scenario(rawValue: input.byte() % UInt8(Scenario.allCases.count))!
        switch scenario {
        case .packet: PacketScenario.run(input.rest())
        case .inflate: InflateScenario.run(&input)
        case .payload: PayloadScenario.run(&input)
        case .reassembly: ReassemblyScenario.run(&input)
        }
    }
}
