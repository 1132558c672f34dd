import ArgumentParser
import Foundation
import InvisoKit
import InvisoStore

/// `inviso history ID`: a stored session's messages.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the messages kept of a stored chat session.",
        discussion: """
            ID is the session's ID from `inviso sessions` (or a unique prefix of at least 4 \
            characters, in either case). Messages that expired under the session's lifetime \
            are gone; an ephemeral session keeps none.
            """
    )

    @OptionGroup var options: SessionStoreOptions

    @Argument(help: "The session's ID (or a unique prefix).")
    var id: String

    @Option(help: "Only the last N messages.")
    var last: Int?

    struct Entry: Encodable {
        let id: String
        /// `sent` or `received`.
        let direction: String
        let kind: String
        let text: String
        /// Milliseconds since 1970.
        let at: Int64
        let delivered: Bool
    }

    struct Output: Encodable {
        let session: String
        let messages: [Entry]
    }

    func validate() throws {
        if let last, last < 1 { throw ValidationError("--last takes a number above 0") }
    }

    func run() async throws {
        try await options.run {
            let store = try options.openExistingStore()
            defer { store.close() }
            let session = try store.resolveSession(id)
            var messages = try store.messages(sessionID: session.id, now: Date())
            if let last { messages = Array(messages.suffix(last)) }
            let entries = messages.map { message in
                Entry(
                    id: message.id, direction: message.direction == .sent ? "sent" : "received", kind: message.kind,
                    text: StoredMessageText.body(message), at: Int64((message.createdAt.timeIntervalSince1970 * 1000).rounded()),
                    delivered: message.isDelivered)
            }
            let peer = session.peerDisplayName ?? "peer"
            let text = messages.isEmpty
                ? "no messages kept for \(session.id)"
                : messages.map { StoredMessageText.line($0, peer: peer) }.joined(separator: "\n")
            return SessionCommandOutput(text: text, json: Output(session: session.id, messages: entries))
        }
    }
}

/// How a stored message reads on a terminal: `2026-11-27 10:58  you: text ✓`.
enum StoredMessageText {
    /// Local date and time, minutes.
    static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter
    }()

    /// The message's content as text (a location or voice message described).
    static func body(_ message: StoredMessage) -> String {
        let bytes = [UInt8](message.body)
        if message.kind == "text" { return String(decoding: bytes, as: UTF8.self) }
        return ChatLoop.describe(ChatPayload(plaintext: bytes))
    }

    /// One line: local date and time, who, the content (cleaned of control characters),
    /// and ✓ for a sent message the peer acknowledged.
    static func line(_ message: StoredMessage, peer: String) -> String {
        let when = formatter.string(from: message.createdAt)
        let who = message.direction == .sent ? "you" : TerminalText.sanitized(peer)
        let mark = message.direction == .sent && message.isDelivered ? " ✓" : ""
        return "\(when)  \(who): \(TerminalText.sanitized(body(message)))\(mark)"
    }
}
