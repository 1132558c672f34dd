/// The interactive chat's status line: `encrypted · verified · direct` and its variants.
struct ChatStatusLine: Sendable, Hashable {
    /// How messages currently travel.
    enum Path: String, Sendable, Hashable, CaseIterable {
        /// Through the server's relay.
        case relay
        /// Over a direct TCP connection between the peers.
        case direct
    }

    /// Where the conversation is.
    enum State: Sendable, Hashable {
        /// No secure channel yet; the text says what is happening ("waiting for your peer").
        case connecting(String)
        /// The secure channel is up.
        case secure(verified: Bool, path: Path)
        /// The session ended; the text says why.
        case closed(String)
    }

    /// The current state.
    var state: State
    /// Separate the parts with ` | ` instead of ` · ` (for `--no-unicode` and `TERM=dumb`).
    var ascii = false

    /// The line's text: `encrypted · verified|unverified · direct|relay` when secure.
    var text: String {
        switch state {
        case .connecting(let what): return what
        case .closed(let why): return "closed · " + why
        case .secure(let verified, let path):
            let separator = ascii ? " | " : " · "
            return ["encrypted", verified ? "verified" : "unverified", path.rawValue].joined(separator: separator)
        }
    }

    /// ``text`` cut or padded with spaces to exactly `width` columns (a cut ends in `…`, or
    /// `.` in ASCII mode), for a line that fills the terminal.
    func fitted(width: Int) -> String {
        TerminalText.filled(text, columns: width, ellipsis: ascii ? "." : "…")
    }

    /// ``fitted(width:)`` in reverse video (ANSI `SGR 7`), for drawing on a terminal.
    func rendered(width: Int) -> String {
        "\u{1B}[7m" + fitted(width: width) + "\u{1B}[0m"
    }
}
