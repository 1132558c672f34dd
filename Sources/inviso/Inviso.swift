import ArgumentParser

/// The `inviso` command-line tool: end-to-end encrypted chats (invite/join), the server, the
/// mesh node, Noise interop peer, Signal sessions, stored chat sessions and benchmarks.
@main
struct Inviso: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inviso",
        abstract: "Inviso command-line tools.",
        version: Inviso.version,
        subcommands: [
            InviteCommand.self, JoinCommand.self, ResumeCommand.self, SendCommand.self, ReceiveCommand.self, CallCommand.self, ListenCommand.self, ContactsCommand.self, ServeCommand.self, MeshCommand.self, NoiseCommand.self, SignalCommand.self, SessionsCommand.self, HistoryCommand.self,
            VerifyCommand.self, OfflineCommand.self, NearbyCommand.self, EraseAllCommand.self, BenchCommand.self, QRCommand.self,
        ]
    )

    /// This build's version (`inviso --version`): raised with each release, as
    /// CONTRIBUTING.md says.
    static let version = "0.19.0"

    /// Runs the command line. `invite`, `join` and `resume` in their usual forms are read
    /// by ``ChatCommandLine`` rather than ArgumentParser: their process start is on the way
    /// to a chat's first message, and ArgumentParser's reflection of the command costs a
    /// tenth of such a process's CPU (`docs/cli.md`). Help, completion scripts, anything
    /// else it does not read, and every other command go the usual way.
    static func main() async {
        guard var command = ChatCommandLine.command(Array(CommandLine.arguments.dropFirst())) else {
            await main(nil)
            return
        }
        do {
            try await command.run()
        } catch {
            type(of: command).exit(withError: error)
        }
    }
}
