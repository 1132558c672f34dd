import ArgumentParser
import Foundation
import InvisoKit

/// `inviso resume ID`: continues a stored session after its process stopped.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Continue a stored chat session whose process stopped without leaving.",
        discussion: """
            ID is the session's id from `inviso sessions`. The session's keys and ratchet \
            state come from the data directory; the chat rejoins its room with the same \
            device and resends whatever the peer had not acknowledged. A session that was \
            left, or an ephemeral one, cannot be resumed.
            """)

    @Argument(help: "The session id (see `inviso sessions`).")
    var sessionID: String

    @OptionGroup var options: ChatOptions

    func validate() throws {
        try options.validate()
        if options.ephemeral { throw ValidationError("an ephemeral session keeps nothing and cannot be resumed") }
        if options.name != nil { throw ValidationError("--name: rename a stored session with `inviso sessions rename`") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try options.configuration(environment: environment)
        let session = try ChatSession(options: options, configuration: configuration, environment: environment)
        let id = sessionID
        try await session.run(display: nil) { client in
            try await client.resume(sessionID: id)
            return .joined
        }
    }
}
