/// The interactive chat screen on an ANSI terminal.
///
/// ```
/// row 1 … rows-2   the conversation, newest at the bottom; long lines wrap at spaces
///                  (`10:58 you: text  · delivered`)
/// row rows-1       status line, reverse video: "encrypted · verified · direct"
/// row rows         input line: "> " and what is being typed
/// ```
///
/// The screen keeps the conversation as lines (the last ``scrollback``) and redraws the
/// message rows from them, row by row: a message's state can change after it was shown
/// (sent → delivered), a resize rewraps everything, and nothing of an earlier frame is
/// left behind. Each method returns the bytes to write, so the screen is a value with no
/// I/O and tests can replay the output into a terminal model. Every text from the network
/// passes through ``TerminalText/clean(_:)`` before it is kept.
struct ChatScreen {
    /// One line of the conversation; our messages have an id and a state.
    struct Line: Equatable {
        var text: String
        var id: UInt64?
        var state: String?
    }

    private(set) var rows: Int
    private(set) var columns: Int
    private(set) var status = ""
    private(set) var lines: [Line] = []
    static let prompt = "> "
    /// Lines kept.
    static let scrollback = 1_000

    /// A screen of `rows` × `columns` (at least 4 × 10; smaller is treated as that).
    init(rows: Int, columns: Int) {
        self.rows = max(rows, 4)
        self.columns = max(columns, 10)
    }

    private var messageRows: Int { rows - 2 }

    /// Clears the screen and draws everything.
    func begin(input: LineEditor) -> String {
        "\u{1B}[2J" + messageArea() + statusLine() + inputLine(input)
    }

    /// A new screen size: everything is rewrapped and redrawn.
    mutating func resize(rows: Int, columns: Int, input: LineEditor) -> String {
        self.rows = max(rows, 4)
        self.columns = max(columns, 10)
        return "\u{1B}[2J" + messageArea() + statusLine() + inputLine(input)
    }

    /// Adds `text` at the bottom of the conversation (each `\n` starts a new line, every
    /// other control is shown as U+FFFD); `id` and `state` for one of our messages.
    mutating func message(_ text: String, id: UInt64? = nil, state: String? = nil, input: LineEditor) -> String {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lines.append(Line(text: TerminalText.clean(String(line)), id: id, state: state))
        }
        if lines.count > Self.scrollback { lines.removeFirst(lines.count - Self.scrollback) }
        return messageArea() + inputLine(input)
    }

    /// Changes the state shown after our message `id` (nothing when it scrolled away).
    mutating func mark(_ id: UInt64, state: String, input: LineEditor) -> String {
        guard let index = lines.lastIndex(where: { $0.id == id }) else { return "" }
        lines[index].state = TerminalText.clean(state)
        return messageArea() + inputLine(input)
    }

    /// Replaces the status line.
    mutating func setStatus(_ text: String, input: LineEditor) -> String {
        status = TerminalText.clean(text)
        return statusLine() + inputLine(input)
    }

    /// Redraws the input line after an edit.
    func edited(_ input: LineEditor) -> String { inputLine(input) }

    /// Leaves the cursor on a fresh line below everything.
    func end() -> String {
        "\u{1B}[r\u{1B}[\(rows);1H\u{1B}[2K\r\n"
    }

    /// The message rows: the conversation's last lines, wrapped at spaces (continuations
    /// indented by two), the newest at the bottom.
    private func messageArea() -> String {
        var wrapped: [String] = []
        for line in lines.suffix(messageRows) {
            let text = line.text + (line.state.map { "  · " + $0 } ?? "")
            let pieces = TerminalText.wrap(text, columns: columns)
            if pieces.count == 1 {
                wrapped.append(pieces[0])
            } else {
                wrapped.append(pieces[0])
                let rest = pieces.dropFirst().joined(separator: " ")
                wrapped += TerminalText.wrap(rest, columns: columns - 2).map { "  " + $0 }
            }
        }
        let visible = Array(wrapped.suffix(messageRows))
        let padded = Array(repeating: "", count: messageRows - visible.count) + visible
        var out = ""
        for (index, row) in padded.enumerated() {
            out += "\u{1B}[\(index + 1);1H\u{1B}[2K" + row
        }
        return out
    }

    private func statusLine() -> String {
        "\u{1B}[\(rows - 1);1H\u{1B}[2K\u{1B}[7m\(TerminalText.filled(status, columns: columns))\u{1B}[0m"
    }

    private func inputLine(_ input: LineEditor) -> String {
        input.rendered(row: rows, columns: columns, prompt: Self.prompt)
    }
}
