import ArgumentParser
import Foundation
import InvisoKit

/// `inviso join INVITE`: accepts an invite and runs the chat.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join an end-to-end encrypted chat with an invite.",
        discussion: """
            INVITE is what `inviso invite` printed: NNNNNN-word-word-word or the \
            inviso://join/NNNNNN#word-word-word link. Six digits alone join in v1 mode, the \
            iOS app's protocol: encrypted but not authenticated (compare the safety number \
            with /verify).
            """)

    @Argument(help: "The invite (NNNNNN-word-word-word or inviso://join/…), or a bare six-digit code (v1).")
    var invite: String

    @OptionGroup var options: ChatOptions
    @OptionGroup var naming: SessionNaming
    @OptionGroup var text: TextStyleOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var options = self.options.named(naming)
        // A link may name its server (`?server=`); --server still wins.
        let (invite, linkServer) = ServerAddress.splitLink(self.invite)
        if options.server == nil, let linkServer { options.server = linkServer }
        let configuration = try options.configuration(environment: environment)
        let session = try ChatSession(options: options, configuration: configuration, environment: environment)
        try await session.run(display: text.display) { client in
            try await client.join(invite)
            return .joined
        }
    }
}
