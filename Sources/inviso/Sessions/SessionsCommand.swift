import ArgumentParser

/// `inviso sessions`: the chat sessions kept in the encrypted store — list, rename, delete.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List, rename, delete or prune stored chat sessions.",
        discussion: """
            Reads the encrypted store in the data directory, with the master key from \
            INVISO_PASSPHRASE or the store's key file. A session is named by its ID or by a \
            unique prefix of it (at least 4 characters, in either case).
            """,
        subcommands: [SessionsList.self, SessionsRename.self, SessionsDelete.self, SessionsPrune.self],
        defaultSubcommand: SessionsList.self
    )
}
