/// The list an invite's secret words come from: the BIP-39 English wordlist (2,048 words,
/// lowercase ASCII, each unambiguous from its first four letters; source and licence in
/// `InviteWordlist+BIP39.swift`). A word carries 11 bits, so an invite's three words carry 33.
public enum InviteWordlist {
    /// The number of words: 2^11.
    public static let count = 2_048

    /// The words in list order; a word's position is its 11-bit value. The list is sorted
    /// (byte order), which ``index(of:)`` relies on.
    public static let words: [String] = text.split(separator: "\n").map(String.init)

    /// The position of `word` in the list, or `nil` when it is not a word of the list.
    /// Lookup is exact: callers lowercase first (``Invite`` parsing accepts any case).
    ///
    /// A binary search over ``words``: a joiner reads three words once, and building a
    /// dictionary of 2,048 entries for that cost more than the whole search.
    public static func index(of word: String) -> Int? {
        let target = Array(word.utf8)
        var low = 0
        var high = words.count
        while low < high {
            let middle = (low + high) / 2
            let candidate = words[middle].utf8
            if candidate.elementsEqual(target) { return middle }
            if candidate.lexicographicallyPrecedes(target) { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}
