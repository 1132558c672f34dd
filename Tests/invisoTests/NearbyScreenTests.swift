import Testing

@testable import inviso

@Suite("Nearby screen")
struct NearbyScreenTests {
    static let people = [
        NearbyScreen.Person(name: "bob", fingerprint: "1a2b3c4d5e6f7a8b", status: "verified", presence: .connected),
        NearbyScreen.Person(name: "carol", fingerprint: "99aa77cc55ee3311", status: "new", presence: .nearby),
        NearbyScreen.Person(name: "team", fingerprint: "", status: "group", presence: .away),
    ]

    /// A 12 × 80 screen with bob's conversation open.
    static func screen() -> NearbyScreen {
        var screen = NearbyScreen(rows: 12, columns: 80)
        screen.people = people
        screen.open("bob")
        screen.title = "bob · verified · messages kept"
        screen.status = "alice 0011223344556677 · port 5000 · 2 nearby · 1 connected · /help"
        return screen
    }

    @Test("people on the left, the open conversation on the right, the status and input lines at the bottom")
    func layout() {
        var screen = Self.screen()
        screen.append("10:02 bob: hi", to: "bob")
        screen.append("10:03 you: hello", to: "bob", counts: false, seq: 1)
        screen.mark(seq: 1, in: "bob", state: "✓ delivered")
        var input = LineEditor()
        _ = input.feed(Array("typing".utf8))
        var terminal = TerminalModel(rows: 12, columns: 80)
        terminal.play(screen.render(input: input))
        let width = screen.peopleWidth
        #expect(width == 20)
        let left = (0..<10).map { String(terminal.line($0).prefix(width)) }
        let right = (0..<10).map { String(terminal.line($0).dropFirst(width + 1)) }
        #expect(left[0].hasPrefix(" People (2)"))
        #expect(left[1].hasPrefix("▸●bob") && left[1].hasSuffix("verified"))
        #expect(left[2].hasPrefix("   1a2b3c4d5e6f7a8b"))
        #expect(left[3].hasPrefix(" ○carol") && left[3].hasSuffix("new"))
        #expect(left[5].hasPrefix(" #team") && left[5].hasSuffix("group"))
        #expect((0..<10).allSatisfy { Array(terminal.grid[$0])[width] == "│" })
        #expect(right[0] == " bob · verified · messages kept")
        #expect(right[8] == " 10:02 bob: hi")
        #expect(right[9] == " 10:03 you: hello  ✓ delivered")
        #expect(terminal.line(10).hasPrefix("alice 0011223344556677 · port 5000"))
        #expect(terminal.line(11) == "> typing")
        #expect(terminal.row == 11 && terminal.column == 8)
    }

    @Test("long messages wrap at word boundaries inside the conversation pane")
    func wrapping() {
        var screen = Self.screen()
        screen.append("10:04 bob: the quick brown fox jumps over the lazy dog and keeps running far away", to: "bob")
        var terminal = TerminalModel(rows: 12, columns: 80)
        terminal.play(screen.render(input: LineEditor()))
        let right = (0..<10).map { String(terminal.line($0).dropFirst(screen.peopleWidth + 1)) }
        #expect(right[8] == " 10:04 bob: the quick brown fox jumps over the lazy dog")
        #expect(right[9] == "   and keeps running far away")
        #expect(TerminalText.wrap("aaaa bbbb", columns: 4) == ["aaaa", "bbbb"])
        #expect(TerminalText.wrap("abcdefghij", columns: 4) == ["abcd", "efgh", "ij"])
        #expect(TerminalText.wrap("a  b", columns: 2) == ["a ", "b"])
        #expect(TerminalText.wrap("日本語テキスト", columns: 5) == ["日本", "語テ", "キス", "ト"])
        #expect(TerminalText.wrap("", columns: 3) == [""])
    }

    @Test("a message to a conversation that is not open counts as unread until it is opened")
    func unread() {
        var screen = Self.screen()
        screen.append("10:05 carol: psst", to: "carol")
        screen.append("10:05 carol: hello?", to: "carol")
        var terminal = TerminalModel(rows: 12, columns: 80)
        terminal.play(screen.render(input: LineEditor()))
        #expect(String(terminal.line(3).prefix(screen.peopleWidth)).hasSuffix("+2"))
        #expect(!terminal.line(9).contains("psst"))
        screen.open("carol")
        screen.title = "carol · new"
        terminal.play(screen.render(input: LineEditor()))
        #expect(String(terminal.line(3).prefix(screen.peopleWidth)).hasPrefix("▸○carol"))
        #expect(String(terminal.line(3).prefix(screen.peopleWidth)).hasSuffix("new"))
        #expect(terminal.line(9).hasSuffix("10:05 carol: hello?"))
    }

    @Test("a resize redraws every row: nothing of the wider frame is left")
    func resize() {
        var screen = Self.screen()
        screen.append(String(repeating: "x", count: 200), to: "bob", wraps: false)
        var terminal = TerminalModel(rows: 12, columns: 100)
        screen.resize(rows: 12, columns: 100)
        terminal.play(screen.render(input: LineEditor()))
        #expect(terminal.line(9).hasSuffix("xx…") && terminal.line(9).count == 100)
        screen.resize(rows: 12, columns: 60)
        terminal.play(screen.render(input: LineEditor()))
        #expect((0..<12).allSatisfy { terminal.line($0).count <= 60 })
        // Narrow: the people pane is left out.
        screen.resize(rows: 12, columns: 40)
        terminal.play(screen.render(input: LineEditor()))
        #expect(screen.peopleWidth == 0 && terminal.line(0) == " bob · verified · messages kept")
        #expect((0..<12).allSatisfy { terminal.line($0).count <= 40 })
    }

    @Test("names and messages from the network cannot move the cursor or clear the screen")
    func hostileText() {
        var screen = Self.screen()
        screen.people.append(NearbyScreen.Person(name: "\u{1B}[2Jeve", fingerprint: "0000000000000000", status: "new", presence: .nearby))
        screen.append("10:06 bob: \u{1B}[1;1Hpwned\u{202E}", to: "bob")
        let frame = screen.render(input: LineEditor())
        #expect(!frame.contains("\u{1B}[2Jeve") && !frame.contains("\u{1B}[1;1Hpwned"))
        var terminal = TerminalModel(rows: 12, columns: 80)
        terminal.play(frame)
        #expect(terminal.line(9).contains("\u{FFFD}[1;1Hpwned"))
        #expect(terminal.line(11) == ">")
    }

    @Test("a QR code's lines are cut, not wrapped; the lobby holds notices while nothing is open")
    func qrAndLobby() {
        var screen = NearbyScreen(rows: 8, columns: 60)
        screen.append("welcome")
        screen.append("▀▀▀▀ ▄▄▄▄\n█  █ ▀▀▀▀", wraps: false)
        var terminal = TerminalModel(rows: 8, columns: 60)
        terminal.play(screen.render(input: LineEditor()))
        let right = (0..<6).map { String(terminal.line($0).dropFirst(screen.peopleWidth + 1)) }
        #expect(right[0].hasPrefix(" no conversation open"))
        #expect(right[3] == " welcome" && right[4] == " ▀▀▀▀ ▄▄▄▄" && right[5] == " █  █ ▀▀▀▀")
        #expect(screen.lines(of: nil).count == 3)
    }
}
