/// The full-screen view of `inviso nearby` on an ANSI terminal.
///
/// ```
///  People (3)          │ bob · verified · messages disappear after 24h      row 1: titles
/// ▸● bob       verified│ 10:02 bob: hi                                      rows 2 … rows-2:
///    1a2b3c4d5e6f7a8b  │ 10:03 you: hello there, this line is long and      people | the open
///  ○ carol          new│   wraps at a word boundary                         conversation,
///    99aa77cc55ee3311  │   ✓ delivered to bob (#1)                          newest at the
///  # team         group│ ? dave asks to talk: /accept dave or /reject dave  bottom
/// alice 1a2b… · port 5000 · 2 nearby · 1 connected · /help                  row rows-1: status
/// > what is being typed                                                     row rows: input
/// ```
///
/// People: `●` connected, `○` on the network, blank when away; `▸` marks the open
/// conversation, `+N` unread messages. Below 50 columns the people pane is left out.
///
/// A value with no I/O: each method returns the bytes to write, and every text from the
/// network passes through ``TerminalText/clean(_:)`` before it is drawn. The whole screen
/// is redrawn row by row (cursor moves and erase-line, no scroll region), so a resize or an
/// update never leaves pieces of an earlier frame behind.
struct NearbyScreen {
    /// One row of the people pane.
    struct Person: Equatable {
        enum Presence: Equatable { case connected, nearby, away }
        var name: String
        /// The short fingerprint (16 hex digits); empty for a group.
        var fingerprint: String
        /// new, known, verified, blocked or group.
        var status: String
        var presence: Presence
    }

    /// A line of a conversation: wrapped at word boundaries, or (a QR code) cut; one of
    /// our messages has its number and its state (sent, queued, delivered).
    struct Line: Equatable {
        var text: String
        var wraps = true
        var seq: UInt64?
        var state: String?
    }

    private(set) var rows: Int
    private(set) var columns: Int
    /// The people and groups, in the order shown.
    var people: [Person] = []
    /// The open conversation (a person or a group), or nil for the lobby.
    private(set) var open: String?
    /// The open conversation's title (name, verification, lifetime).
    var title = ""
    /// The status line.
    var status = ""
    private var logs: [String: [Line]] = [:]
    private var unread: [String: Int] = [:]
    /// Lines kept per conversation.
    static let scrollback = 500
    static let prompt = "> "

    /// A screen of `rows` × `columns` (at least 6 × 20; smaller is treated as that).
    init(rows: Int, columns: Int) {
        self.rows = max(rows, 6)
        self.columns = max(columns, 20)
    }

    /// Width of the people pane (0 when it is left out).
    var peopleWidth: Int { columns < 50 ? 0 : min(28, max(20, columns / 4)) }
    /// Width of the conversation pane.
    var conversationWidth: Int { peopleWidth == 0 ? columns : columns - peopleWidth - 1 }

    /// A new terminal size.
    mutating func resize(rows: Int, columns: Int) {
        self.rows = max(rows, 6)
        self.columns = max(columns, 20)
    }

    /// Opens `name`'s conversation (nil: the lobby) and clears its unread count.
    mutating func open(_ name: String?) {
        open = name
        if let name { unread[name] = nil }
    }

    /// Adds `text` (one or more lines) to `conversation`, or to the open one when nil
    /// (notices: requests, errors, changes). A message to a conversation that is not open
    /// counts as unread.
    mutating func append(
        _ text: String, to conversation: String? = nil, wraps: Bool = true, counts: Bool = true, seq: UInt64? = nil
    ) {
        let key = conversation ?? open ?? ""
        var log = logs[key] ?? []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            log.append(Line(text: TerminalText.clean(String(line)), wraps: wraps, seq: seq))
        }
        if log.count > Self.scrollback { log.removeFirst(log.count - Self.scrollback) }
        logs[key] = log
        if counts, let conversation, conversation != open { unread[conversation, default: 0] += 1 }
    }

    /// Sets the state shown after our message `seq` in `conversation`.
    mutating func mark(seq: UInt64, in conversation: String, state: String) {
        guard let index = logs[conversation]?.lastIndex(where: { $0.seq == seq }) else { return }
        logs[conversation]?[index].state = TerminalText.clean(state)
    }

    /// The lines of `conversation` (nil: the lobby) as stored.
    func lines(of conversation: String?) -> [Line] { logs[conversation ?? ""] ?? [] }

    /// Unread lines of `name`.
    func unreadCount(_ name: String) -> Int { unread[name] ?? 0 }

    /// The whole screen, the cursor left on the input line.
    func render(input: LineEditor) -> String {
        var out = "\u{1B}[?25l"  // hide the cursor while drawing
        let body = rows - 2
        let peopleRows = self.peopleRows(count: body)
        let conversation = conversationRows(count: body)
        for row in 0..<body {
            out += "\u{1B}[\(row + 1);1H\u{1B}[2K"
            if peopleWidth > 0 {
                out += TerminalText.filled(peopleRows[row], columns: peopleWidth) + "│"
            }
            out += TerminalText.fit(conversation[row], columns: conversationWidth)
        }
        out += statusLine()
        return out + inputLine(input) + "\u{1B}[?25h"
    }

    /// Redraws only the input line after an edit.
    func edited(_ input: LineEditor) -> String { inputLine(input) }

    /// Leaves the cursor on a fresh line below everything, the screen cleared.
    func end() -> String { "\u{1B}[2J\u{1B}[1;1H" }

    // MARK: - Panes

    private func peopleRows(count: Int) -> [String] {
        var lines = [" People (\(people.filter { $0.status != "group" }.count))"]
        for person in people {
            let marker = person.name == open ? "▸" : " "
            let presence = switch person.presence {
            case .connected: "●"
            case .nearby: "○"
            case .away: " "
            }
            let unread = unreadCount(person.name)
            let tag = unread > 0 ? "+\(unread)" : person.status
            let room = peopleWidth - 3 - TerminalText.width(of: tag) - 1
            let name = TerminalText.fit(TerminalText.clean(person.name), columns: room)
            let gap = String(repeating: " ", count: max(1, peopleWidth - 2 - TerminalText.width(of: name) - TerminalText.width(of: tag)))
            lines.append(marker + (person.status == "group" ? "#" : presence) + name + gap + tag)
            if !person.fingerprint.isEmpty { lines.append("   " + person.fingerprint) }
        }
        if people.isEmpty { lines.append("  nobody yet") }
        if lines.count > count { lines = Array(lines.prefix(count - 1)) + ["  … \(people.count) in all"] }
        return lines + Array(repeating: "", count: max(0, count - lines.count))
    }

    private func conversationRows(count: Int) -> [String] {
        let width = conversationWidth - 1
        let heading = " " + TerminalText.clean(title.isEmpty ? (open ?? "no conversation open: /connect NAME or /open NAME") : title)
        var wrapped: [String] = []
        for line in lines(of: open) {
            if line.wraps {
                let text = line.text + (line.state.map { "  " + $0 } ?? "")
                let pieces = TerminalText.wrap(text, columns: width - 2)
                wrapped.append(" " + pieces[0])
                for piece in pieces.dropFirst() { wrapped.append("   " + piece) }
            } else {
                wrapped.append(" " + line.text)
            }
        }
        let visible = Array(wrapped.suffix(count - 1))
        return [heading] + Array(repeating: "", count: count - 1 - visible.count) + visible
    }

    private func statusLine() -> String {
        "\u{1B}[\(rows - 1);1H\u{1B}[2K\u{1B}[7m\(TerminalText.filled(TerminalText.clean(status), columns: columns))\u{1B}[0m"
    }

    private func inputLine(_ input: LineEditor) -> String {
        input.rendered(row: rows, columns: columns, prompt: Self.prompt)
    }
}
