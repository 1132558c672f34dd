import ArgumentParser

/// The `inviso` command-line tool: end-to-end encrypted chats (invite/join), the server, the
/// mesh node, Noise interop peer, Signal sessions, stored chat sessions and benchmarks.
@main
struct Inviso: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inviso",
        abstract: "Inviso command-line tools.",
        subcommands: [
            InviteCommand.self, JoinCommand.self, ResumeCommand.self, ServeCommand.self, MeshCommand.self, NoiseCommand.self, SignalCommand.self, SessionsCommand.self,
            VerifyCommand.self, EraseAllCommand.self, BenchCommand.self, QRCommand.self,
        ]
    )
}
