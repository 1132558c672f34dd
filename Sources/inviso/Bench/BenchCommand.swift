import ArgumentParser

/// `inviso bench`: micro-benchmarks (run them in release mode: `swift run -c release inviso bench …`).
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks; build with -c release for meaningful figures.",
        subcommands: [BenchNoise.self, BenchSignal.self, BenchOffline.self, BenchNearby.self, BenchV1.self, BenchChat.self, BenchSend.self, BenchServer.self, BenchIdleClients.self, BenchMesh.self]
    )
}
