/// A sliding window of accepted nonces for transports that carry nonces explicitly.
///
/// A nonce is fresh when it is above the highest one accepted so far, or within
/// ``size`` below it and not yet seen. ``check(_:)`` only inspects; ``accept(_:)`` records,
/// so a caller can authenticate the message between the two and record only genuine ones.
public struct ReplayWindow: Sendable, Hashable {
    /// How many nonces below the highest accepted one are still tracked.
    public let size: Int
    private var highest: UInt64?
    private var bits: [UInt64]

    /// Creates an empty window of `size` nonces (a positive multiple of 64).
    public init(size: Int = 1024) {
        precondition(size > 0 && size % 64 == 0, "window size must be a positive multiple of 64")
        self.size = size
        self.bits = [UInt64](repeating: 0, count: size / 64)
    }

    /// Restores a window from ``highestAccepted`` and ``words`` (for storage).
    ///
    /// - Returns: `nil` unless `size` is a positive multiple of 64 and `words` has
    ///   `size / 64` entries, all zero when `highest` is `nil`.
    public init?(size: Int, highest: UInt64?, words: [UInt64]) {
        guard size > 0, size % 64 == 0, words.count == size / 64 else { return nil }
        guard highest != nil || words.allSatisfy({ $0 == 0 }) else { return nil }
        self.size = size
        self.highest = highest
        self.bits = words
    }

    /// The highest nonce accepted so far (`nil` before the first).
    public var highestAccepted: UInt64? { highest }

    /// The window's bitmap, `size / 64` words (for storage with ``init(size:highest:words:)``).
    public var words: [UInt64] { bits }

    /// Whether `nonce` would be accepted.
    public func check(_ nonce: UInt64) -> Bool {
        guard let highest else { return true }
        if nonce > highest { return true }
        if highest - nonce >= UInt64(size) { return false }
        return !isSet(nonce)
    }

    /// Records `nonce`; returns `false` (and records nothing) if it is a replay or too old.
    @discardableResult
    public mutating func accept(_ nonce: UInt64) -> Bool {
        guard check(nonce) else { return false }
        if let highest, nonce > highest {
            let distance = nonce - highest
            if distance >= UInt64(size) {
                for index in bits.indices { bits[index] = 0 }
            } else {
                var value = highest &+ 1
                while value <= nonce {
                    clear(value)
                    value &+= 1
                }
            }
            self.highest = nonce
        } else if highest == nil {
            self.highest = nonce
        }
        set(nonce)
        return true
    }

    private func position(_ nonce: UInt64) -> (word: Int, mask: UInt64) {
        let slot = Int(nonce % UInt64(size))
        return (slot / 64, 1 << UInt64(slot % 64))
    }

    private func isSet(_ nonce: UInt64) -> Bool {
        let (word, mask) = position(nonce)
        return bits[word] & mask != 0
    }

    private mutating func set(_ nonce: UInt64) {
        let (word, mask) = position(nonce)
        bits[word] |= mask
    }

    private mutating func clear(_ nonce: UInt64) {
        let (word, mask) = position(nonce)
        bits[word] &= ~mask
    }
}
