import ArgumentParser
import Foundation
import InvisoStore

/// `inviso verify ID`: shows a session's safety number, to compare with the peer's.
struct VerifyCommand: ParsableCommand {
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

    func run() throws {
        try options.run {
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

/// How a safety number is shown: libsignal-style numbers (all digits, a multiple of 5 long,
/// e.g. 60) in groups of five, four groups a line; anything else sanitized as it is.
enum SafetyNumberText {
    /// `number` laid out for reading aloud and comparing.
    static func grouped(_ number: String) -> String {
        guard !number.isEmpty, number.count % 5 == 0, number.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return TerminalText.sanitized(number)
        }
        let characters = Array(number)
        let groups = stride(from: 0, to: characters.count, by: 5).map { String(characters[$0..<$0 + 5]) }
        return stride(from: 0, to: groups.count, by: 4).map {
            groups[$0..<min($0 + 4, groups.count)].joined(separator: " ")
        }.joined(separator: "\n")
    }
}
