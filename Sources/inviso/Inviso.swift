import ArgumentParser

/// The `inviso` command-line tool: the server, the mesh node, Noise interop peer, Signal sessions and benchmarks.
@main
struct Inviso: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inviso",
        abstract: "Inviso command-line tools.",
        subcommands: [ServeCommand.self, MeshCommand.self, NoiseCommand.self, SignalCommand.self, EraseAllCommand.self, BenchCommand.self]
    )
}
