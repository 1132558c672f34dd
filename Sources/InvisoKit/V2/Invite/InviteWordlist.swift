/// The list an invite's secret words come from: the BIP-39 English wordlist (2,048 words,
/// lowercase ASCII, each unambiguous from its first four letters; source and licence in
/// `InviteWordlist+BIP39.swift`). A word carries 11 bits, so an invite's three words carry 33.
public enum InviteWordlist {
    /// The number of words: 2^11.
    public static let count = 2_048

    /// The words in list order; a word's position is its 11-bit value.
    public static let words: [String] = text.split(separator: "\n").map(String.init)

    private static let positions: [String: Int] = Dictionary(
        uniqueKeysWithValues: words.enumerated().map { ($0.element, $0.offset) })

    /// The position of `word` in the list, or `nil` when it is not a word of the list.
    /// Lookup is exact: callers lowercase first (``Invite`` parsing accepts any case).
    public static func index(of word: String) -> Int? {
        positions[word]
    }
}
