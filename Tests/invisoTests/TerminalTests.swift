import Synchronization
import Testing

@testable import inviso

/// The terminal building blocks: QR rendering, the spinner, the chat status line and text
/// sanitizing.
@Suite("Terminal building blocks")
struct TerminalTests {
    /// Reads a rendering back into modules (inked = dark when `ink` is `.dark`).
    static func decode(_ text: String, style: QRTerminalRenderer.Style, inkIsDark: Bool, size: Int) -> [[Bool]] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(Array.init)
        var grid: [[Bool]] = []
        switch style {
        case .ascii:
            for line in lines {
                grid.append(stride(from: 0, to: line.count, by: 2).map { line[$0] == "#" })
            }
        case .halfBlocks:
            for line in lines {
                grid.append(line.map { $0 == "█" || $0 == "▀" })
                grid.append(line.map { $0 == "█" || $0 == "▄" })
            }
            grid = Array(grid.prefix(size))
        }
        return grid.map { $0.map { $0 == inkIsDark } }
    }

    @Test(
        "Rendering reads back to the symbol and a light 4-module quiet zone",
        arguments: [
            (QRTerminalRenderer.Style.halfBlocks, false), (.halfBlocks, true), (.ascii, false), (.ascii, true),
        ])
    func renderRoundTrip(style: QRTerminalRenderer.Style, invert: Bool) throws {
        let code = try QRCode.encode(text: "inviso://join/271828#orbit-violin-quantum")
        let renderer = QRTerminalRenderer(style: style, invert: invert)
        let inkIsDark = renderer.ink == .dark
        #expect(inkIsDark == ((style == .ascii) != invert))
        let text = renderer.render(code)
        let full = code.size + 8
        let lines = text.split(separator: "\n")
        #expect(lines.count == (style == .ascii ? full : (full + 1) / 2))
        #expect(lines.allSatisfy { $0.count == (style == .ascii ? 2 * full : full) })
        let modules = Self.decode(text, style: style, inkIsDark: inkIsDark, size: full)
        #expect(modules.count == full)
        for y in 0..<full {
            for x in 0..<full {
                #expect(modules[y][x] == code[x - 4, y - 4], "module (\(x - 4), \(y - 4))")
            }
        }
        // The quiet zone is light all round.
        #expect(modules[0].allSatisfy { !$0 } && modules[full - 1].allSatisfy { !$0 })
        #expect(text.unicodeScalars.allSatisfy { $0.isASCII } == (style == .ascii))
    }

    @Test("ASCII when --no-unicode or TERM=dumb, half blocks otherwise")
    func styleChoice() {
        #expect(QRTerminalRenderer.style(noUnicode: false, environment: ["TERM": "xterm-256color"]) == .halfBlocks)
        #expect(QRTerminalRenderer.style(noUnicode: false, environment: [:]) == .halfBlocks)
        #expect(QRTerminalRenderer.style(noUnicode: false, environment: ["TERM": "dumb"]) == .ascii)
        #expect(QRTerminalRenderer.style(noUnicode: true, environment: ["TERM": "xterm"]) == .ascii)
    }

    // MARK: - Spinner

    final class RecordingOutput: TerminalOutput {
        let isTerminal: Bool
        private let writes = Mutex<[String]>([])
        init(isTerminal: Bool) { self.isTerminal = isTerminal }
        func write(_ text: String) { writes.withLock { $0.append(text) } }
        var recorded: [String] { writes.withLock { $0 } }
    }

    /// The spinner's wait between frames in these tests: short, real, cancellable.
    static let shortSleep: @Sendable (Duration) async throws -> Void = { _ in
        try await Task.sleep(for: .milliseconds(1))
    }
    /// No wait at all.
    static let noSleep: @Sendable (Duration) async throws -> Void = { _ in }

    /// Waits (in small real sleeps, 60 s at most) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    @Test("The spinner writes nothing when the output is not a terminal")
    func spinnerSilentOffTerminal() async throws {
        let output = RecordingOutput(isTerminal: false)
        let spinner = Spinner(message: "waiting for your peer")
        let value = try await spinner.whileRunning(on: output, sleep: Self.noSleep) { 42 }
        #expect(value == 42)
        await spinner.run(on: output, sleep: Self.noSleep)  // returns at once
        #expect(output.recorded.isEmpty)
    }

    @Test("On a terminal the spinner redraws one line, cycles its frames, and erases the line at the end")
    func spinnerOnTerminal() async throws {
        let output = RecordingOutput(isTerminal: true)
        let spinner = Spinner(message: "waiting", ascii: true)
        // Six frames, then the wait is cancelled: no clock, so a loaded host cannot starve it.
        let waits = Mutex(0)
        await spinner.run(on: output) { _ in
            let count = waits.withLock { count in
                count += 1
                return count
            }
            if count >= 6 { throw CancellationError() }
        }
        let writes = output.recorded
        #expect(writes.last == Spinner.clearLine)
        let frames = writes.dropLast()
        #expect(frames.count == 6)
        for (tick, frame) in frames.enumerated() {
            #expect(frame == "\r" + Spinner.asciiFrames[tick % 4] + " waiting\u{1B}[K")
            #expect(!frame.contains("\n"))
        }
    }

    @Test("The spinner erases its line when the body throws")
    func spinnerErasesOnError() async throws {
        struct Failure: Error {}
        let output = RecordingOutput(isTerminal: true)
        await #expect(throws: Failure.self) {
            try await Spinner(message: "x").whileRunning(on: output, sleep: Self.shortSleep) { () async throws -> Int in
                _ = try await Self.eventually { !output.recorded.isEmpty }
                throw Failure()
            }
        }
        #expect(output.recorded.last == Spinner.clearLine)
        #expect(output.recorded.first?.hasPrefix("\r⠋ x") == true)
    }

    // MARK: - Status line

    @Test("Status line texts")
    func statusLine() {
        #expect(ChatStatusLine(state: .secure(verified: true, path: .direct)).text == "encrypted · verified · direct")
        #expect(ChatStatusLine(state: .secure(verified: false, path: .relay)).text == "encrypted · unverified · relay")
        #expect(
            ChatStatusLine(state: .secure(verified: false, path: .relay), ascii: true).text
                == "encrypted | unverified | relay")
        #expect(ChatStatusLine(state: .connecting("waiting for your peer")).text == "waiting for your peer")
        #expect(ChatStatusLine(state: .closed("peer left")).text == "closed · peer left")
    }

    @Test("The status line fills or is cut to the terminal width")
    func statusLineWidth() {
        let line = ChatStatusLine(state: .secure(verified: true, path: .relay))
        #expect(line.fitted(width: 40) == "encrypted · verified · relay" + String(repeating: " ", count: 12))
        #expect(line.fitted(width: 12) == "encrypted ·…")
        #expect(line.fitted(width: 12).count == 12)
        #expect(ChatStatusLine(state: line.state, ascii: true).fitted(width: 5) == "encr.")
        #expect(line.fitted(width: 0) == "")
        #expect(line.rendered(width: 30) == "\u{1B}[7mencrypted · verified · relay  \u{1B}[0m")
    }

    // MARK: - Text

    @Test("Control and bidi characters are neutralised before printing")
    func sanitizing() {
        #expect(TerminalText.sanitized("Alice") == "Alice")
        #expect(TerminalText.sanitized("Zoë 世界") == "Zoë 世界")
        #expect(TerminalText.sanitized("evil\u{1B}[2Jname") == "evil\u{FFFD}[2Jname")
        #expect(TerminalText.sanitized("a\r\nb\tc") == "a\u{FFFD}\u{FFFD}b\u{FFFD}c")
        #expect(TerminalText.sanitized("abc\u{202E}txt.exe") == "abc\u{FFFD}txt.exe")
        #expect(TerminalText.hasUnsafeCharacters("x\u{7}") && !TerminalText.hasUnsafeCharacters("x y"))
    }

    @Test("Safety numbers are grouped by five, four groups a line")
    func safetyNumbers() {
        let number = (0..<60).map { String($0 % 10) }.joined()
        #expect(
            SafetyNumberText.grouped(number) == """
                01234 56789 01234 56789
                01234 56789 01234 56789
                01234 56789 01234 56789
                """)
        #expect(SafetyNumberText.grouped("12345") == "12345")
        #expect(SafetyNumberText.grouped("abc\u{1B}") == "abc\u{FFFD}")
        #expect(SafetyNumberText.grouped("1234") == "1234")
    }
}
