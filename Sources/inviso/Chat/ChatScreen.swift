/// The interactive chat screen on an ANSI terminal.
///
/// ```
/// row 1 … rows-2   messages, scrolling (the terminal's scroll region)
/// row rows-1       status line, reverse video: "encrypted · verified · direct"
/// row rows         input line: "> " and what is being typed
/// ```
///
/// Each method returns the bytes to write, so the screen is a value with no I/O and
/// tests can replay the output into a terminal model. Every text from the network must
/// pass through ``TerminalText/clean(_:)`` first (``message(_:)`` and ``setStatus(_:)``
/// do it).
struct ChatScreen {
    private(set) var rows: Int
    private(set) var columns: Int
    private(set) var status = ""
    static let prompt = "> "

    /// A screen of `rows` × `columns` (at least 4 × 10; smaller is treated as that).
    init(rows: Int, columns: Int) {
        self.rows = max(rows, 4)
        self.columns = max(columns, 10)
    }

    private var messageRows: Int { rows - 2 }

    /// Clears the screen, sets the scroll region and draws the status and input lines.
    func begin(input: LineEditor) -> String {
        "\u{1B}[2J\u{1B}[1;\(messageRows)r" + statusLine() + inputLine(input)
    }

    /// A new screen size: the scroll region and the two bottom lines are redrawn.
    mutating func resize(rows: Int, columns: Int, input: LineEditor) -> String {
        self.rows = max(rows, 4)
        self.columns = max(columns, 10)
        return "\u{1B}[1;\(messageRows)r" + statusLine() + inputLine(input)
    }

    /// Appends `text` at the bottom of the message region (long lines wrap, the region
    /// scrolls; each `\n` starts a new line, every other control is shown as U+FFFD), then
    /// puts the cursor back on the input line.
    func message(_ text: String, input: LineEditor) -> String {
        var out = "\u{1B}[\(messageRows);1H"
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            out += "\n\r" + TerminalText.clean(String(line))
        }
        return out + inputLine(input)
    }

    /// Replaces the status line.
    mutating func setStatus(_ text: String, input: LineEditor) -> String {
        status = TerminalText.clean(text)
        return statusLine() + inputLine(input)
    }

    /// Redraws the input line after an edit.
    func edited(_ input: LineEditor) -> String { inputLine(input) }

    /// Resets the scroll region and leaves the cursor on a fresh line below everything.
    func end() -> String {
        "\u{1B}[r\u{1B}[\(rows);1H\u{1B}[2K\r\n"
    }

    private func statusLine() -> String {
        "\u{1B}[\(rows - 1);1H\u{1B}[2K\u{1B}[7m\(TerminalText.filled(status, columns: columns))\u{1B}[0m"
    }

    private func inputLine(_ input: LineEditor) -> String {
        input.rendered(row: rows, columns: columns, prompt: Self.prompt)
    }
}
