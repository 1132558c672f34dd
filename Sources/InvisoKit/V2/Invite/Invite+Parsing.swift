import InvisoWire

extension Invite {
    /// What a user typed or opened: a v2 invite, or a bare join code, which is all the
    /// shipped iOS app gives (it speaks only v1, whose sessions stay unverified until the
    /// safety numbers are compared).
    public enum Parsed: Sendable {
        /// A full invite: join code and secret words.
        case v2(Invite)
        /// Six digits and nothing else: join with Inviso v1.
        case v1Only(joinCode: String)
    }

    /// Parses an invite in any of its forms:
    ///
    /// - `NNNNNN-word-word-word`;
    /// - `inviso://join/NNNNNN#word-word-word`;
    /// - `NNNNNN` alone, which is ``Parsed/v1Only(joinCode:)``.
    ///
    /// Letters may be in any case and whitespace around the whole text is ignored;
    /// nothing else is: separators are exactly `-`, and each word must be in
    /// ``InviteWordlist``.
    ///
    /// - Throws: ``V2Error/malformedInvite`` for text of no such form,
    ///   ``V2Error/invalidJoinCode`` when the code is not six ASCII digits,
    ///   ``V2Error/missingSecret`` for a link without its words,
    ///   ``V2Error/wrongWordCount`` and ``V2Error/unknownWord``. No error repeats a word.
    public static func parse(_ text: String) throws(V2Error) -> Parsed {
        var slice = Substring(text)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        let trimmed = asciiLowercased(slice)
        if trimmed.hasPrefix(linkPrefix) {
            let rest = trimmed.dropFirst(linkPrefix.count)
            let parts = rest.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let code = String(parts[0])
            guard JoinCode.isValid(code) else { throw .invalidJoinCode }
            guard parts.count == 2, !parts[1].isEmpty else { throw .missingSecret }
            return .v2(try Invite(joinCode: code, words: words(in: parts[1])))
        }
        let parts = trimmed.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let code = String(parts[0])
        guard JoinCode.isValid(code) else {
            guard !code.isEmpty, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { throw .malformedInvite }
            throw .invalidJoinCode
        }
        guard parts.count == 2 else { return .v1Only(joinCode: code) }
        return .v2(try Invite(joinCode: code, words: words(in: parts[1])))
    }

    /// The `-`-separated words of `secret`, empty ones included (they then fail lookup).
    private static func words(in secret: Substring) throws(V2Error) -> [String] {
        let words = secret.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard words.count == wordCount else { throw .wrongWordCount }
        return words
    }
}
