/// A "random" generator that replays given bytes, so a test can inject a known secret
/// (a vector's scalar) through an API that draws it from a `RandomNumberGenerator`.
///
/// Each `next()` returns the next 8 bytes as a little-endian word, which is the order in
/// which `SecretBytes(randomCount:using:)` unpacks them, so drawing `n` bytes yields the
/// first `n` given bytes. Running out of bytes traps: the test asked for more than it set.
package struct FixedBytesGenerator: RandomNumberGenerator, Sendable {
    private let bytes: [UInt8]
    private var offset = 0

    /// Creates a generator that yields `bytes` (padded with zeros to a multiple of 8).
    package init(_ bytes: [UInt8]) {
        self.bytes = bytes + [UInt8](repeating: 0, count: (8 - bytes.count % 8) % 8)
    }

    /// Whether every given byte has been drawn.
    package var isExhausted: Bool { offset >= bytes.count }

    /// The next 8 bytes, little-endian.
    package mutating func next() -> UInt64 {
        precondition(offset + 8 <= bytes.count, "FixedBytesGenerator ran out of bytes")
        var word: UInt64 = 0
        for index in 0..<8 { word |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return word
    }
}
