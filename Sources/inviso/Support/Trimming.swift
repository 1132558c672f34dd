/// Trimming spaces without Foundation.
///
/// `trimmingCharacters(in: .whitespaces)` goes through `NSString` and `CharacterSet` on
/// Linux; the first call in a process costs the runtime a scan of every protocol-conformance
/// record of the binary (~0.1 ms each), and the chat commands call it on their way to the
/// first message (`docs/cli.md`, "Where the two-process time goes").
extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (any Unicode white space other
    /// than a line break), as `.whitespaces` trims.
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace && !$0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
