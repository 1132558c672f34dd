/// The seeded pseudo-random generator the router and the simulator draw from
/// (xoshiro256**, seeded through SplitMix64).
///
/// Relay jitter, fan-out choice and sync timing need cheap, reproducible randomness, not
/// secrecy: a node seeds its router from the system generator once, and tests and the
/// simulator seed it with a fixed number so every run is the same. Never use it for keys
/// or nonces.
public struct MeshRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        var splitMix = seed
        func next() -> UInt64 {
            splitMix &+= 0x9E37_79B9_7F4A_7C15
            var z = splitMix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = next()
        s1 = next()
        s2 = next()
        s3 = next()
    }

    /// Creates a generator seeded from `source` (for example `SystemRandomNumberGenerator`).
    public init(from source: inout some RandomNumberGenerator) {
        self.init(seed: source.next())
    }

    /// The next 64 pseudo-random bits.
    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A uniform integer in `range` (tiny modulo bias is irrelevant for jitter).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// A uniform double in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Derives an independent generator (for a node, a link, …) from this one and `salt`.
    public func derived(_ salt: UInt64) -> MeshRandom {
        MeshRandom(seed: s0 ^ (salt &* 0x9E37_79B9_7F4A_7C15) ^ s3.rotatedLeft(13))
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
