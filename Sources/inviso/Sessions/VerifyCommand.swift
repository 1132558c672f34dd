import ArgumentParser
import Foundation
import InvisoStore

/// `inviso verify ID`: shows a session's safety number, to compare with the peer's.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Show the safety number of a stored session.",
        discussion: """
            Compare the number with the one your peer sees (in person or over a channel you \
            trust). Equal numbers mean no one sits between you. Sessions paired with the full \
            invite (protocol v2) are verified by the pairing itself; sessions joined with the \
            6 digits only (v1) are unverified until you compare.
            """
    )

    @OptionGroup var options: SessionStoreOptions

    @Argument(help: "The session's ID (or a unique prefix).")
    var id: String

    struct Output: Encodable {
        let id: String
        let safety_number: String
        let verified: Bool
        let `protocol`: String
    }

    func run() async throws {
        try await options.run {
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            guard let identity = try store.pinnedIdentity(sessionID: session.id),
                let number = identity.safetyNumber, !number.isEmpty
            else {
                throw CLIError("session \(session.id) has no safety number yet (its peer never connected)")
            }
            let text = """
                \(TerminalText.sanitized(session.name)) (\(session.id), v\(session.protocolVersion), \
                \(identity.isVerified ? "verified" : "unverified"))
                \(SafetyNumberText.grouped(number))
                """
            return SessionCommandOutput(
                text: text,
                json: Output(
                    id: session.id, safety_number: number, verified: identity.isVerified,
                    protocol: "v\(session.protocolVersion)"))
        }
    }
}
