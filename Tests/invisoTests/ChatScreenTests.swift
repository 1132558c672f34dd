import Testing

@testable import inviso

/// A small model of an ANSI terminal: cursor moves (`CSI r;c H`), erase line (`CSI 2K`),
/// erase screen (`CSI 2J`), scroll region (`CSI t;b r`), SGR (ignored), CR, LF that
/// scrolls inside the region, and autowrap at the right edge.
struct TerminalModel {
    var grid: [[Character]]
    var row = 0
    var column = 0
    var top = 0
    var bottom: Int
    let rows: Int
    let columns: Int

    init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
        grid = Array(repeating: Array(repeating: " ", count: columns), count: rows)
        bottom = rows - 1
    }

    func line(_ index: Int) -> String {
        var text = grid[index]
        while text.last == " " { text.removeLast() }
        return String(text)
    }

    mutating func play(_ text: String) {
        var characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            index += 1
            switch character {
            case "\u{1B}":
                guard index < characters.count, characters[index] == "[" else { continue }
                index += 1
                var parameters = ""
                while index < characters.count, !("@"..."~").contains(characters[index]) {
                    parameters.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { return }
                let final = characters[index]
                index += 1
                control(final, parameters.split(separator: ";").map { Int($0) ?? 0 })
            case "\r":
                column = 0
            case "\n":
                lineFeed()
            default:
                if column >= columns {
                    column = 0
                    lineFeed()
                }
                grid[row][column] = character
                column += 1
            }
        }
        characters = []
    }

    private mutating func lineFeed() {
        if row == bottom {
            grid.remove(at: top)
            grid.insert(Array(repeating: " ", count: columns), at: bottom)
        } else if row < rows - 1 {
            row += 1
        }
    }

    private mutating func control(_ final: Character, _ parameters: [Int]) {
        switch final {
        case "H":
            row = min(max((parameters.first ?? 1) - 1, 0), rows - 1)
            column = min(max((parameters.count > 1 ? parameters[1] : 1) - 1, 0), columns - 1)
        case "K":
            grid[row] = Array(repeating: " ", count: columns)
        case "J":
            grid = Array(repeating: Array(repeating: " ", count: columns), count: rows)
        case "r":
            top = parameters.isEmpty ? 0 : parameters[0] - 1
            bottom = parameters.count > 1 ? parameters[1] - 1 : rows - 1
            row = 0
            column = 0
        default:
            break
        }
    }
}

@Suite("Chat screen")
struct ChatScreenTests {
    @Test("messages scroll above a fixed status line and input line; the cursor ends on the input")
    func layout() {
        var screen = ChatScreen(rows: 6, columns: 30)
        var terminal = TerminalModel(rows: 6, columns: 30)
        var input = LineEditor()
        terminal.play(screen.begin(input: input))
        terminal.play(screen.setStatus("encrypted · verified · relay", input: input))
        for number in 1...6 { terminal.play(screen.message("line \(number)", input: input)) }
        #expect((0..<4).map(terminal.line) == ["line 3", "line 4", "line 5", "line 6"])
        #expect(terminal.line(4) == "encrypted · verified · relay")
        _ = input.feed(Array("hello".utf8))
        terminal.play(screen.edited(input))
        #expect(terminal.line(5) == "> hello")
        #expect(terminal.row == 5 && terminal.column == 7)
        // A message arriving while typing leaves the input line as it was.
        terminal.play(screen.message("peer: hi", input: input))
        #expect(terminal.line(3) == "peer: hi")
        #expect(terminal.line(5) == "> hello")
        #expect(terminal.line(4) == "encrypted · verified · relay")
    }

    @Test("long messages wrap at spaces with an indent; a sent message turns delivered in place; a resize rewraps")
    func wrapStateAndResize() {
        var screen = ChatScreen(rows: 8, columns: 30)
        var terminal = TerminalModel(rows: 8, columns: 30)
        let input = LineEditor()
        terminal.play(screen.begin(input: input))
        terminal.play(screen.message("10:58 peer: the quick brown fox jumps over the lazy dog", input: input))
        terminal.play(screen.message("10:59 you: short one", id: 7, state: "sent", input: input))
        #expect((0..<6).map(terminal.line).suffix(3) == [
            "10:58 peer: the quick brown", "  fox jumps over the lazy dog", "10:59 you: short one  · sent",
        ])
        terminal.play(screen.mark(7, state: "delivered", input: input))
        #expect((0..<6).map(terminal.line) == [
            "", "", "10:58 peer: the quick brown", "  fox jumps over the lazy dog", "10:59 you: short one  ·", "  delivered",
        ])
        #expect(screen.mark(99, state: "x", input: input).isEmpty)
        // Wider: the first message fits one row again, and nothing of the old rows is left.
        terminal = TerminalModel(rows: 8, columns: 80)
        terminal.play(screen.resize(rows: 8, columns: 80, input: input))
        #expect((0..<6).map(terminal.line).suffix(2) == [
            "10:58 peer: the quick brown fox jumps over the lazy dog", "10:59 you: short one  · delivered",
        ])
        #expect((0..<4).allSatisfy { terminal.line($0).isEmpty })
    }

    @Test("escape sequences and bidi overrides from a peer are shown, not obeyed")
    func hostileText() {
        var screen = ChatScreen(rows: 6, columns: 40)
        var terminal = TerminalModel(rows: 6, columns: 40)
        let input = LineEditor()
        terminal.play(screen.begin(input: input))
        terminal.play(screen.message("peer: \u{1B}[2J\u{1B}[1;1Hpwned\r\u{202E}txt.exe", input: input))
        let shown = terminal.line(3)
        #expect(shown.hasPrefix("peer: \u{FFFD}[2J\u{FFFD}[1;1Hpwned\u{FFFD}\u{FFFD}txt.exe"))
        #expect(terminal.line(0).isEmpty)
        #expect(!TerminalText.clean("a\u{7}b\u{9B}c").unicodeScalars.contains { $0.value < 0x20 || (0x80..<0xA0).contains($0.value) })
    }

    @Test("a long input line shows its end around the cursor; wide characters count two columns")
    func longInput() {
        let screen = ChatScreen(rows: 5, columns: 12)
        var terminal = TerminalModel(rows: 5, columns: 12)
        var input = LineEditor()
        _ = input.feed(Array("abcdefghijklmnop".utf8))
        terminal.play(screen.begin(input: input))
        #expect(terminal.line(4) == "> hijklmnop")
        #expect(TerminalText.width(of: "日本") == 4)
        #expect(TerminalText.fit("日本語テキスト", columns: 7) == "日本語…")
        #expect(TerminalText.tail("日本語", columns: 5) == "本語")
    }

    @Test("status text wider than the screen is cut with an ellipsis")
    func statusFits() {
        var screen = ChatScreen(rows: 5, columns: 12)
        var terminal = TerminalModel(rows: 5, columns: 12)
        let input = LineEditor()
        terminal.play(screen.setStatus("encrypted · unverified · relay", input: input))
        #expect(terminal.line(3) == "encrypted ·…")
    }
}

@Suite("Line editor")
struct LineEditorTests {
    @Test("typing, UTF-8 split across reads, backspace, enter")
    func typing() {
        var editor = LineEditor()
        #expect(editor.feed(Array("hé".utf8).dropLast()) == [.edited])
        #expect(editor.feed([Array("é".utf8).last!]) == [.edited])
        #expect(editor.text == "hé")
        #expect(editor.feed([0x7F]) == [.edited])
        #expect(editor.feed(Array("llo 👋".utf8)) == Array(repeating: .edited, count: 5))
        #expect(editor.feed([0x0D]) == [.submitted("hllo 👋")])
        #expect(editor.text.isEmpty && editor.cursor == 0)
    }

    @Test("cursor keys, home/end, delete, Ctrl-U, Ctrl-W")
    func editing() {
        var editor = LineEditor()
        _ = editor.feed(Array("one two three".utf8))
        _ = editor.feed(Array("\u{1B}[D\u{1B}[D".utf8))
        #expect(editor.cursor == 11)
        _ = editor.feed([0x17])  // Ctrl-W: "thr" goes
        #expect(editor.text == "one two ee")
        _ = editor.feed(Array("\u{1B}[H".utf8))
        _ = editor.feed(Array("\u{1B}[3~".utf8))
        #expect(editor.text == "ne two ee" && editor.cursor == 0)
        _ = editor.feed([0x05])  // Ctrl-E
        #expect(editor.cursor == editor.characters.count)
        _ = editor.feed([0x15])  // Ctrl-U
        #expect(editor.text.isEmpty)
    }

    @Test("Ctrl-C interrupts, Ctrl-D ends input only on an empty line; junk is ignored")
    func controls() {
        var editor = LineEditor(limit: 3)
        #expect(editor.feed([0x03]) == [.interrupted])
        _ = editor.feed(Array("ab".utf8))
        #expect(editor.feed([0x04]) == [])  // nothing under the cursor at the end
        _ = editor.feed([0x01])
        #expect(editor.feed([0x04]) == [.edited])
        #expect(editor.text == "b")
        _ = editor.feed([0x05, 0x15])  // Ctrl-E, Ctrl-U: empty
        #expect(editor.feed([0x04]) == [.endOfInput])
        // Invalid UTF-8, an unknown escape, controls, and typing past the limit.
        #expect(editor.feed([0xFF, 0xC3, 0x41, 0x07, 0x1B, 0x5B, 0x35, 0x7E]) == [])
        _ = editor.feed(Array("wxyz".utf8))
        #expect(editor.text == "wxy")
    }
}
