/// Draws a ``QRCode`` as text for a terminal, with a quiet zone around it.
///
/// Two styles:
/// - ``Style/halfBlocks``: Unicode half blocks (`▀ ▄ █`), two module rows per text line, so
///   the code is about square in a terminal whose cells are twice as tall as wide.
/// - ``Style/ascii``: `##` and two spaces per module, one module row per line, for terminals
///   without Unicode (`TERM=dumb`, `--no-unicode`).
///
/// A glyph is drawn in the terminal's text colour, so what it should stand for depends on
/// the background. ``ink`` says which modules get glyphs: by default the light ones for half
/// blocks (light text on a dark background, the usual terminal) and the dark ones for ASCII
/// (meant for copying into light documents); `--invert-qr` swaps them.
struct QRTerminalRenderer: Sendable, Hashable {
    /// How modules become characters.
    enum Style: Sendable, Hashable {
        /// Unicode half blocks, two module rows per line.
        case halfBlocks
        /// `##` per module, one module row per line.
        case ascii
    }

    /// Which modules are drawn with glyphs (the rest stay background).
    enum Ink: Sendable, Hashable {
        /// Dark modules are glyphs: right for dark text on a light background.
        case dark
        /// Light modules (and the quiet zone) are glyphs: right for light text on a dark background.
        case light
    }

    /// The character style.
    var style: Style
    /// Which modules get glyphs.
    var ink: Ink
    /// Light modules around the symbol; the standard asks for at least 4.
    var quietZone = 4

    /// A renderer with the default ink for `style`, swapped when `invert` is set.
    init(style: Style, invert: Bool = false) {
        self.style = style
        let natural: Ink = style == .halfBlocks ? .light : .dark
        self.ink = invert ? (natural == .dark ? .light : .dark) : natural
    }

    /// The style for this terminal: ASCII when `noUnicode` is set or `TERM` is `dumb`.
    static func style(noUnicode: Bool, environment: [String: String]) -> Style {
        noUnicode || environment["TERM"] == "dumb" ? .ascii : .halfBlocks
    }

    /// The code as lines joined by `\n`, with a final newline.
    func render(_ code: QRCode) -> String {
        let range = -quietZone..<(code.size + quietZone)
        func inked(_ x: Int, _ y: Int) -> Bool {
            guard range.contains(y) else { return false }  // below the quiet zone: background
            return code[x, y] == (ink == .dark)
        }
        var lines: [String] = []
        switch style {
        case .halfBlocks:
            for y in stride(from: range.lowerBound, to: range.upperBound, by: 2) {
                var line = ""
                for x in range {
                    switch (inked(x, y), inked(x, y + 1)) {
                    case (true, true): line += "█"
                    case (true, false): line += "▀"
                    case (false, true): line += "▄"
                    case (false, false): line += " "
                    }
                }
                lines.append(line)
            }
        case .ascii:
            for y in range {
                lines.append(range.map { inked($0, y) ? "##" : "  " }.joined())
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
