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

    /// Runs the command line. `invite`, `join` and `resume` are parsed on their own first:
    /// their process start is on the way to a chat's first message, and parsing them as
    /// children of the root reflects the whole command tree (every subcommand's
    /// arguments), checks it for a completion-script request and casts the result to a
    /// protocol — about a tenth of such a process's CPU (`docs/cli.md`). Help, completion
    /// scripts, anything that does not parse, and every other command go the usual way,
    /// with the usual messages.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let name = arguments.first, !arguments.contains(where: isBuiltInFlag) {
            let rest = Array(arguments.dropFirst())
            switch name {
            case "invite": if await runAlone(InviteCommand.self, rest) { return }
            case "join": if await runAlone(JoinCommand.self, rest) { return }
            case "resume": if await runAlone(ResumeCommand.self, rest) { return }
            default: break
            }
        }
        await main(nil)
    }

    /// Parses and runs `Command` with `arguments`; `false` (nothing run) when they do not
    /// parse, so that the full parser reports the error.
    private static func runAlone<Command: AsyncParsableCommand>(_: Command.Type, _ arguments: [String]) async -> Bool {
        guard let parsed = try? Command.parseAsRoot(arguments), var command = parsed as? Command else { return false }
        do {
            try await command.run()
        } catch {
            Command.exit(withError: error)
        }
        return true
    }

    /// The flags ArgumentParser answers itself (help, version, completion, dumps).
    private static func isBuiltInFlag(_ argument: String) -> Bool {
        ["-h", "--help", "-help", "--version"].contains(argument) || argument.hasPrefix("--generate-completion")
            || argument.hasPrefix("--experimental")
    }
}
