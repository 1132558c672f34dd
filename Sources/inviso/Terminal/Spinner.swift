/// A one-line progress spinner for a terminal: each frame returns the cursor to the start of
/// the line (`\r`), draws a glyph and a message, and erases the rest of the line; when it
/// stops it erases the line. On anything that is not a terminal (a pipe, a file, `--json`)
/// it writes nothing at all.
struct Spinner: Sendable {
    /// Braille dots, for terminals with Unicode.
    static let unicodeFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    /// `| / - \`, for `TERM=dumb` and `--no-unicode`.
    static let asciiFrames = ["|", "/", "-", "\\"]
    /// Return to column 0 and erase the line (ANSI `EL`).
    static let clearLine = "\r\u{1B}[K"

    /// The glyphs drawn in turn (never empty).
    let frames: [String]
    /// The text after the glyph.
    let message: String
    /// Time between frames.
    let interval: Duration

    /// A spinner showing `message`.
    ///
    /// - Parameters:
    ///   - message: The text after the glyph, e.g. "waiting for your peer".
    ///   - ascii: Use ``asciiFrames`` instead of ``unicodeFrames``.
    ///   - interval: Time between frames.
    init(message: String, ascii: Bool = false, interval: Duration = .milliseconds(100)) {
        self.frames = ascii ? Self.asciiFrames : Self.unicodeFrames
        self.message = message
        self.interval = interval
    }

    /// The text that draws frame number `tick` (cycling through ``frames``).
    func frame(_ tick: Int) -> String {
        "\r" + frames[tick % frames.count] + " " + message + "\u{1B}[K"
    }

    /// Draws frames on `output` until the current task is cancelled, then erases the line.
    /// Returns at once, writing nothing, when `output` is not a terminal.
    ///
    /// - Parameters:
    ///   - output: Where to draw.
    ///   - sleep: Waits between frames (`Task.sleep` by default; tests inject their own).
    func run(
        on output: some TerminalOutput,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) async {
        guard output.isTerminal else { return }
        var tick = 0
        while !Task.isCancelled {
            output.write(frame(tick))
            tick += 1
            do { try await sleep(interval) } catch { break }
        }
        output.write(Self.clearLine)
    }

    /// Runs `body` while the spinner spins on `output`; the line is erased before this
    /// returns or throws.
    ///
    /// - Throws: What `body` throws.
    func whileRunning<Value: Sendable>(
        on output: some TerminalOutput,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        _ body: () async throws -> Value
    ) async throws -> Value {
        guard output.isTerminal else { return try await body() }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await run(on: output, sleep: sleep) }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
