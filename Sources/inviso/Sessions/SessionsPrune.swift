import ArgumentParser
import Foundation
import InvisoStore

/// `inviso sessions prune`: removes the sessions that can never be used again.
struct SessionsPrune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete the sessions that can never continue: left or ended, and invites that never paired.",
        discussion: """
            A session that was left or ended has no keys any more; an invite or join whose \
            process stopped before the secure channel was up has nothing to resume from \
            (removed once it is over 24 hours old: a running invite may still be waiting). \
            Both are removed with their messages (locally: the server forgot them when they \
            closed, or forgets them when their invite expires). Sessions that `inviso resume` \
            can continue are kept.
            """
    )

    @OptionGroup var options: SessionStoreOptions

    /// The longest an invite stays open (`inviso invite --expires`), in seconds.
    static let longestInvite = 86_400

    struct Output: Encodable {
        let pruned: [String]
    }

    func run() async throws {
        try await options.run {
            guard let store = try options.openStore() else {
                return SessionCommandOutput(text: "nothing to prune", json: Output(pruned: []))
            }
            defer { store.close() }
            var pruned: [String] = []
            // An invite may still be waiting in a running `inviso invite` (for up to 24 h):
            // one that never paired goes only once no invite could still be open.
            let stale = Date().addingTimeInterval(-Double(Self.longestInvite))
            for session in try store.sessions() {
                let hasState = try store.secret(kind: .ratchet, sessionID: session.id) != nil
                let prunable = session.state == .closed || (!hasState && session.createdAt < stale)
                guard prunable else { continue }
                try store.deleteSession(id: session.id)
                pruned.append(session.id)
            }
            let text = pruned.isEmpty
                ? "nothing to prune"
                : "pruned \(pruned.count) session\(pruned.count == 1 ? "" : "s"):\n" + pruned.map { "  \($0)" }.joined(separator: "\n")
            return SessionCommandOutput(text: text, json: Output(pruned: pruned))
        }
    }
}
