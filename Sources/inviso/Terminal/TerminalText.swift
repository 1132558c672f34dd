/// Makes untrusted text (a peer's display name, a session name) safe to print on a
/// terminal: control characters (escape sequences, carriage returns, newlines) and invisible
/// format characters (bidirectional overrides) become U+FFFD, so stored text can neither
/// move the cursor nor disguise itself.
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
}
