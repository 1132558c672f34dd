/// Text from the network made safe and measurable for a terminal.
///
/// Two strengths: ``sanitized(_:)`` for short labels (a peer's display name, a session
/// name) replaces every control and format character; ``clean(_:)`` for message bodies
/// keeps the joiners and variation selectors that emoji need and replaces controls, line
/// separators and the bidirectional controls. Neither lets text move the cursor or
/// disguise itself.
enum TerminalText {
    /// `text` with every control or format character replaced by `�`.
    static func sanitized(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                result.append("\u{FFFD}")
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// Whether `text` has a character ``sanitized(_:)`` would replace.
    static func hasUnsafeCharacters(_ text: String) -> Bool {
        sanitized(text) != text
    }

    /// `text` with every character that could drive the terminal replaced by U+FFFD:
    /// C0/C1 controls (ESC starts escape sequences, CR and BS overwrite what is shown) and
    /// the bidirectional overrides and isolates, which can make a line read differently
    /// from what it contains. Joiners and variation selectors stay (emoji need them).
    static func clean(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
        }
        return String(scalars)
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: break
        }
        switch scalar.value {
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }

    /// Terminal columns `character` takes: 2 for wide East Asian and emoji presentation
    /// characters, 0 for a lone combining mark, otherwise 1. An estimate (terminals
    /// disagree about some emoji), good enough to keep a line within the screen.
    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.generalCategory == .nonspacingMark || first.properties.generalCategory == .enclosingMark {
            return 0
        }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// Columns `text` takes.
    static func width(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// The longest prefix of `text` that fits in `columns`, with `ellipsis` when cut.
    static func fit(_ text: String, columns: Int, ellipsis: String = "…") -> String {
        guard columns > 0 else { return "" }
        guard width(of: text) > columns else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = width(of: character)
            if used + next > columns - width(of: ellipsis) { break }
            result.append(character)
            used += next
        }
        return result + ellipsis
    }

    /// ``fit(_:columns:ellipsis:)`` padded with spaces to exactly `columns` columns (a line
    /// that fills the terminal, such as the status line).
    static func filled(_ text: String, columns: Int, ellipsis: String = "…") -> String {
        let fitted = fit(text, columns: columns, ellipsis: ellipsis)
        return fitted + String(repeating: " ", count: max(0, columns - width(of: fitted)))
    }

    /// The last characters of `text` that fit in `columns` (what an input line shows
    /// while the user types past the screen's edge).
    static func tail(_ text: String, columns: Int) -> String {
        guard columns > 0 else { return "" }
        var result: [Character] = []
        var used = 0
        for character in text.reversed() {
            let next = width(of: character)
            if used + next > columns { break }
            result.append(character)
            used += next
        }
        return String(result.reversed())
    }

    /// `text` cut into lines of at most `columns` columns, at spaces where it can (the
    /// space where a line breaks is dropped) and inside a word only when the word alone is
    /// wider than a line. An empty text is one empty line.
    static func wrap(_ text: String, columns: Int) -> [String] {
        guard columns > 0 else { return [] }
        var lines: [String] = []
        var line: [Character] = []
        var used = 0
        var lastSpace: Int?
        for character in text {
            let next = width(of: character)
            if used + next > columns {
                if character == " " {
                    lines.append(String(line))
                    (line, used, lastSpace) = ([], 0, nil)
                    continue
                }
                if let space = lastSpace, space > 0 {
                    lines.append(String(line[..<space]))
                    line = Array(line[(space + 1)...])
                    used = width(of: String(line))
                } else {
                    lines.append(String(line))
                    (line, used) = ([], 0)
                }
                lastSpace = nil
            }
            if character == " " { lastSpace = line.count }
            line.append(character)
            used += next
        }
        lines.append(String(line))
        return lines
    }
}
