import Foundation

/// The text table of `inviso sessions`.
enum SessionTable {
    /// The column headings.
    static let headings = ["ID", "NAME", "STATE", "PROTOCOL", "VERIFIED", "LIFETIME", "CREATED", "MESSAGES"]

    /// One line per session under a heading line, columns padded to their widest cell;
    /// untrusted text is sanitized for the terminal. An empty list gives a sentence instead.
    ///
    /// - Parameters:
    ///   - sessions: The sessions, in the order to show.
    ///   - timeZone: The zone creation times are shown in.
    static func render(_ sessions: [SessionSummary], timeZone: TimeZone = .current) -> String {
        guard !sessions.isEmpty else { return "no sessions" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let rows = sessions.map { session -> [String] in
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: session.created)
            let created = String(
                format: "%04d-%02d-%02d %02d:%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0,
                parts.minute ?? 0)
            let verified = session.verified.map { $0 ? "yes" : "no" } ?? "-"
            return [
                session.id, TerminalText.sanitized(session.name), session.state, session.protocol, verified,
                session.lifetime, created, String(session.messages),
            ]
        }
        let all = [headings] + rows
        let widths = headings.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
