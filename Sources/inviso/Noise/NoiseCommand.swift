import ArgumentParser

/// `inviso noise`: a Noise protocol peer for interoperability testing.
struct NoiseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noise",
        abstract: "Noise protocol interop peer (length-prefixed Noise messages over TCP).",
        discussion: """
            Output is JSON lines on standard output. Every Noise message, handshake or \
            transport, travels with a 2-byte big-endian length prefix.
            """,
        subcommands: [NoiseKeygen.self, NoiseListen.self, NoiseConnect.self]
    )
}
