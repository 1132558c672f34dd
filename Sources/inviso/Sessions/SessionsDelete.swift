import ArgumentParser
import Foundation
import InvisoKit
import InvisoStore

/// `inviso sessions delete ID`.
struct SessionsDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a stored session with its messages, pinned identity and keys.",
        discussion: """
            The rows are removed in one transaction and overwritten in the database file. Then \
            the session's server is asked to forget it, as the app does: DELETE of its room and \
            a purge of its device ID (best effort; --local skips it, and an unreachable server \
            is reported, not an error).
            """
    )

    @OptionGroup var options: SessionStoreOptions

    @Flag(help: "Delete the local copy only; do not contact the server.")
    var local = false

    @Flag(name: [.short, .long], help: "Do not ask for confirmation.")
    var yes = false

    @Argument(help: "The session's ID (or a unique prefix).")
    var id: String

    struct Output: Encodable {
        let deleted: String
        /// `purged`, `unreachable`, `skipped` (--local) or `none` (no device on record).
        let server: String
    }

    func run() async throws {
        try await options.run {
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            guard yes || Self.confirm(session) else { throw CLIError("not deleted (confirm with y, or pass --yes)") }
            try store.deleteSession(id: session.id)
            let server = local ? "skipped" : await Self.forget(session)
            return SessionCommandOutput(
                text: "deleted \(session.id) (server: \(server))", json: Output(deleted: session.id, server: server))
        }
    }

    /// Asks on standard error and reads the answer from standard input (y or yes).
    static func confirm(_ session: StoredSession) -> Bool {
        let label = session.name.isEmpty ? "" : " (\(TerminalText.sanitized(session.name)))"
        FileHandle.standardError.write(Data("Delete session \(session.id)\(label) with its messages and keys? [y/N] ".utf8))
        guard let answer = readLine(strippingNewline: true) else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// Asks the session's server to delete its room and purge its device ID.
    static func forget(_ session: StoredSession) async -> String {
        guard let device = session.deviceID, let endpoint = try? ServerAddress.parse(session.serverURL) else { return "none" }
        let api = RoomAPI(transport: NIOHTTPTransport(endpoint: endpoint))
        if let room = session.roomID { try? await api.deleteRoom(roomID: room, deviceID: device) }
        do {
            _ = try await api.purge(deviceIDs: [device])
            return "purged"
        } catch {
            return "unreachable"
        }
    }
}
