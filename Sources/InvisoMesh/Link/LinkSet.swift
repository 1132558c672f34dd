/// A small set of links, as a bitmask for link numbers below 64 (a simulator's, or any
/// node's first 64 links) and an array for the rest, so that recording which links sent
/// a packet allocates nothing in the common case.
struct LinkSet: Sendable {
    private var low: UInt64 = 0
    private var others: [LinkID] = []

    /// The empty set.
    init() {}

    /// `link`, or the empty set.
    init(_ link: LinkID?) {
        if let link { insert(link) }
    }

    func contains(_ link: LinkID) -> Bool {
        link.rawValue < 64 ? low & (1 << UInt64(link.rawValue)) != 0 : others.contains(link)
    }

    mutating func insert(_ link: LinkID) {
        if link.rawValue < 64 {
            low |= 1 << UInt64(link.rawValue)
        } else if !others.contains(link) {
            others.append(link)
        }
    }
}
