import ArgumentParser
import Foundation
import InvisoStore

/// `inviso sessions rename ID NAME`.
struct SessionsRename: AsyncParsableCommand {
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

    func run() async throws {
        try await options.run {
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw CLIError("the new name is empty") }
            guard !TerminalText.hasUnsafeCharacters(trimmed) else {
                throw CLIError("the new name has control characters")
            }
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            try store.renameSession(id: session.id, to: trimmed)
            return SessionCommandOutput(
                text: "renamed \(session.id) to \(trimmed)", json: Output(renamed: session.id, name: trimmed))
        }
    }
}
