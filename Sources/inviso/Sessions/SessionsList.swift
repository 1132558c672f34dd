import ArgumentParser
import Foundation
import InvisoStore

/// `inviso sessions [list]`.
struct SessionsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List stored sessions, newest first (the default)."
    )

    @OptionGroup var options: SessionStoreOptions

    struct Output: Encodable {
        let sessions: [SessionSummary]
    }

    func run() async throws {
        try await options.run {
            guard let store = try options.openStore() else {
                return SessionCommandOutput(text: "no sessions", json: Output(sessions: []))
            }
            defer { store.close() }
            let now = Date()
            let summaries = try store.sessions().reversed().map { try SessionSummary($0, store: store, now: now) }
            return SessionCommandOutput(text: SessionTable.render(summaries), json: Output(sessions: summaries))
        }
    }
}
