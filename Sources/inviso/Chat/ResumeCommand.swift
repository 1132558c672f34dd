import ArgumentParser
import Foundation
import InvisoKit
import InvisoStore

/// `inviso resume ID`: continues a stored session after its process stopped.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Continue a stored chat session whose process stopped without leaving.",
        discussion: """
            ID is the session's id from `inviso sessions` (or a unique prefix of at least \
            4 characters). The session's keys and ratchet state come from the data \
            directory; the chat rejoins its room on the session's own server (unless \
            --server names another) with the same device, and resends whatever the peer \
            had not acknowledged. A session that was left, or an ephemeral one, cannot be \
            resumed.
            """)

    @Argument(help: "The session's ID (or a unique prefix).")
    var sessionID: String

    @OptionGroup var options: ChatOptions
    @OptionGroup var text: TextStyleOptions

    /// Stored messages shown before the input line.
    static let backlog = 10

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        // The session's own server, unless --server says otherwise.
        var options = self.options
        let stored: StoredSession
        var backlog: [String] = []
        var peerName: String?
        do {
            let store = try options.openStore(environment: environment)
            defer { store?.close() }
            guard let store else { throw CLIError("no store") }
            stored = try store.resolveSession(sessionID)
            guard stored.state != .closed else {
                throw CLIError(
                    "session \(stored.id) was left or ended: it cannot be resumed (its keys are gone). "
                        + "`inviso history \(stored.id.prefix(8))` shows what was kept; `inviso invite` starts a new chat.")
            }
            peerName = stored.peerDisplayName
            backlog = try store.messages(sessionID: stored.id, now: Date()).suffix(Self.backlog)
                .map { StoredMessageText.line($0, peer: stored.peerDisplayName ?? "peer") }
        }
        if options.server == nil, !stored.serverURL.isEmpty { options.server = stored.serverURL }
        let configuration = try options.configuration(environment: environment)
        let session = try ChatSession(options: options, configuration: configuration, environment: environment)
        let id = stored.id
        try await session.run(display: text.display, backlog: backlog, peerName: peerName) { client in
            try await client.resume(sessionID: id)
            return .joined
        }
    }
}
