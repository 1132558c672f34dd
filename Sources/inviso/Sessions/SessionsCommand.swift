import ArgumentParser
import Foundation
import InvisoStore

/// `inviso sessions`: the chat sessions kept in the encrypted store — list, rename, delete.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List, rename or delete stored chat sessions.",
        discussion: """
            Reads the encrypted store in the data directory, with the master key from \
            INVISO_PASSPHRASE or the store's key file. A session is named by its ID or by a \
            unique prefix of it (at least 4 characters).
            """,
        subcommands: [SessionsList.self, SessionsRename.self, SessionsDelete.self],
        defaultSubcommand: SessionsList.self
    )
}

/// `inviso sessions [list]`.
struct SessionsList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List stored sessions, newest first (the default)."
    )

    @OptionGroup var options: SessionStoreOptions

    struct Output: Encodable {
        let sessions: [SessionSummary]
    }

    func run() throws {
        try options.run {
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

/// `inviso sessions rename ID NAME`.
struct SessionsRename: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Give a stored session a new name."
    )

    @OptionGroup var options: SessionStoreOptions

    @Argument(help: "The session's ID (or a unique prefix).")
    var id: String

    @Argument(help: "The new name.")
    var name: String

    struct Output: Encodable {
        let renamed: String
        let name: String
    }

    func run() throws {
        try options.run {
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw CLIError("the new name is empty") }
            guard !TerminalText.hasUnsafeCharacters(trimmed) else { throw CLIError("the new name has control characters") }
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            try store.renameSession(id: session.id, to: trimmed)
            return SessionCommandOutput(
                text: "renamed \(session.id) to \(trimmed)", json: Output(renamed: session.id, name: trimmed))
        }
    }
}

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
