import ArgumentParser
import Foundation
import InvisoStore

/// `inviso sessions delete ID`.
struct SessionsDelete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a stored session with its messages, pinned identity and keys.",
        discussion: """
            Only the local copy goes: the rows are removed in one transaction and overwritten \
            in the database file. The server forgets the session's device when the room \
            expires.
            """
    )

    @OptionGroup var options: SessionStoreOptions

    @Argument(help: "The session's ID (or a unique prefix).")
    var id: String

    struct Output: Encodable {
        let deleted: String
    }

    func run() throws {
        try options.run {
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            try store.deleteSession(id: session.id)
            return SessionCommandOutput(text: "deleted \(session.id)", json: Output(deleted: session.id))
        }
    }
}
