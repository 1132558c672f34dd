/// A seeded pseudo-random generator (SplitMix64) for deterministic tests. Not for secrets.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 pseudo-random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Whether an event of `probability` (0…1) happens this time (a million steps).
    package mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && Double(next() % 1_000_000) / 1_000_000 < probability
    }

    /// A uniform delay in `[0, bound)` to the nanosecond; zero for a zero bound.
    package mutating func jitter(upTo bound: Duration) -> Duration {
        let nanoseconds = bound / .nanoseconds(1)
        guard nanoseconds >= 1 else { return .zero }
        return .nanoseconds(Int64(next() % UInt64(nanoseconds)))
    }

    /// `count` pseudo-random bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
