import ArgumentParser
import Foundation
import InvisoKit

/// `inviso invite`: creates a room, prints the invite (and a QR code of its link), waits
/// for the peer and then runs the chat.
struct InviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Invite someone to an end-to-end encrypted chat.",
        discussion: """
            Prints an invite (NNNNNN-word-word-word) and its link as a QR code, then waits for \
            the peer to join with `inviso join`. The six digits go to the server; the words \
            never do: they authenticate the peer (CPace, then Noise XXpsk3, then a Double \
            Ratchet). In the chat, /verify shows the safety number, /rename NAME names the \
            session, /leave ends it.
            """)

    @OptionGroup var options: ChatOptions
    @OptionGroup var naming: SessionNaming
    @OptionGroup var display: QRDisplayOptions

    @Option(help: "How long the invite stays open: a number and s, m, h or d, at most 24h (1d).")
    var expires = "5m"

    func validate() throws {
        _ = try InviteLifetime.seconds(expires)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let options = self.options.named(naming)
        var configuration = try options.configuration(environment: environment)
        configuration.inviteExpiry = .seconds(try InviteLifetime.seconds(expires))
        let session = try ChatSession(options: options, configuration: configuration, environment: environment)
        try await session.run(display: display) { client in
            let invite = try await client.invite()
            return .invite(invite)
        }
    }
}
