/// The Golomb-coded set a REQUEST_SYNC carries: a compact, probabilistic list of the
/// packets a node already has.
///
/// The construction is BitChat's (permissionlesstech/bitchat-android
/// `app/src/main/java/com/bitchat/android/sync/GCSFilter.kt`@01723250 and
/// permissionlesstech/bitchat `bitchat/Sync/GCSFilter.swift`@7994d1e5):
/// - each packet's ``PacketID/syncHash`` is mapped to a bucket `hash % M`, with 0 mapped
///   to 1 (as the Android client does; a bucket of 0 would encode a zero delta);
/// - `M = N << P` for `N` packets, so the false-positive rate is about `2^-P`;
///   `P = ceil(log2(1 / rate))`, 7 for BitChat's 1 % target;
/// - the sorted, de-duplicated buckets are written as deltas `x ≥ 1`, each as a
///   Golomb–Rice code: `(x - 1) >> P` one-bits, a zero bit, then the low `P` bits of
///   `x - 1`, most significant bit first in each byte.
///
/// This type is the filter's value (`P`, `M` and the bit string); the REQUEST_SYNC TLVs
/// that carry those three fields on the wire belong to the packet codec.
public struct GolombCodedSet: Hashable, Sendable {
    /// The Golomb–Rice parameter: remainder bits per entry.
    public var p: UInt8
    /// The hash range: buckets are in `1..<m`.
    public var m: UInt32
    /// The Golomb–Rice bit string.
    public var data: [UInt8]

    /// Wraps received filter fields.
    public init(p: UInt8, m: UInt32, data: [UInt8]) {
        self.p = p
        self.m = m
        self.data = data
    }

    /// The filter of no packets (`M = 1`, no data), as BitChat sends when it has nothing.
    public static func empty(p: UInt8) -> GolombCodedSet { GolombCodedSet(p: p, m: 1, data: []) }

    /// `ceil(log2(1 / rate))`, with `rate` clamped to [10^-6, 0.25] as BitChat does.
    public static func parameter(falsePositiveRate rate: Double) -> UInt8 {
        let clamped = min(0.25, max(0.000_001, rate))
        var p: UInt8 = 1
        while Double(UInt64(1) << UInt64(p)) < 1 / clamped - 1e-9 { p += 1 }
        return p
    }

    /// The bucket a sync hash falls in for a filter of range `m`.
    @inline(__always)
    public static func bucket(_ syncHash: UInt64, m: UInt32) -> UInt64 {
        let value = syncHash % UInt64(max(1, m))
        return value == 0 ? 1 : value
    }

    /// Builds the filter over `hashes`, newest first, within `maxBytes`.
    ///
    /// Like BitChat it first takes as many hashes as `maxBytes` should hold at `P + 2`
    /// bits each, then drops 10 % of the oldest at a time until the bit string fits.
    /// - Returns: the filter and how many of the newest hashes it covers (the rest are
    ///   older than everything in it).
    public static func build(
        newestFirst hashes: some Collection<UInt64>, maxBytes: Int, falsePositiveRate: Double
    ) -> (filter: GolombCodedSet, includedCount: Int) {
        let p = parameter(falsePositiveRate: falsePositiveRate)
        let capacity = max(1, max(8, maxBytes * 8) / max(3, Int(p) + 2))
        var count = min(hashes.count, capacity)
        while true {
            guard count > 0 else { return (.empty(p: p), 0) }
            let m = UInt32(truncatingIfNeeded: min(UInt64(UInt32.max), UInt64(count) << UInt64(p)))
            var set = BucketSet(m: m)
            for hash in hashes.prefix(count) { set.insert(bucket(hash, m: m)) }
            let data = encode(p: p, maxBytes: maxBytes, expectedCount: count, set.forEachAscending)
            if let data { return (GolombCodedSet(p: p, m: m, data: data), count) }
            count = count * 9 / 10
        }
    }

    /// Golomb–Rice codes sorted buckets; `nil` as soon as the output exceeds `maxBytes`.
    static func encode(sortedBuckets: [UInt64], p: UInt8, maxBytes: Int) -> [UInt8]? {
        encode(p: p, maxBytes: maxBytes, expectedCount: sortedBuckets.count) { body in
            for value in sortedBuckets { guard body(value) else { return } }
        }
    }

    /// Golomb–Rice codes the buckets `forEach` yields in ascending order (repeats are
    /// skipped; `forEach` stops when its body returns `false`); `nil` as soon as the output
    /// exceeds `maxBytes`.
    static func encode(
        p: UInt8, maxBytes: Int, expectedCount: Int, _ forEach: ((UInt64) -> Bool) -> Void
    ) -> [UInt8]? {
        var writer = BitWriter()
        writer.bytes.reserveCapacity(min(maxBytes, expectedCount * (Int(p) + 2) / 8 + 8))
        let mask = (UInt64(1) << UInt64(p)) &- 1
        var previous: UInt64 = 0
        var fits = true
        forEach { value in
            guard value != previous else { return true }
            let x = value - previous - 1
            previous = value
            let quotient = x >> UInt64(p)
            if quotient + UInt64(p) < 56 {
                // The unary quotient, the zero terminator and P bits in one write.
                let ones = (UInt64(1) << quotient) - 1
                writer.write(bits: ones << (UInt64(p) + 1) | (x & mask), count: Int(quotient) + Int(p) + 1)
            } else {
                writer.writeOnes(Int(quotient))
                writer.write(bits: (x & mask), count: Int(p) + 1)  // the zero terminator, then P bits
            }
            fits = writer.byteCount <= maxBytes
            return fits
        }
        guard fits else { return nil }
        let bytes = writer.finish()
        return bytes.count > maxBytes ? nil : bytes
    }

    /// The filter's buckets, ascending. Decoding stops at the end of the data or at the
    /// first value that is not below `m`, as BitChat's decoders do.
    public func decodedBuckets() -> [UInt64] {
        var values = [UInt64]()
        forEachDecodedBucket { values.append($0) }
        return values
    }

    /// Calls `body` with each of ``decodedBuckets()`` (strictly ascending), without
    /// collecting them.
    func forEachDecodedBucket(_ body: (UInt64) -> Void) {
        var reader = BitReader(data)
        var accumulator: UInt64 = 0
        while true {
            guard let quotient = reader.readUnary(), let remainder = reader.readBits(Int(p)) else { break }
            let (shifted, overflow) = UInt64(quotient).multipliedReportingOverflow(by: UInt64(1) << UInt64(p))
            guard !overflow else { break }
            accumulator &+= shifted &+ remainder &+ 1
            if accumulator >= UInt64(m) { break }
            body(accumulator)
        }
    }

    /// A decoded filter, ready for membership questions.
    public func membership() -> Membership { Membership(self) }

    /// A decoded filter: answers "might the sender have this packet?".
    public struct Membership: Sendable {
        /// The filter's range.
        public let m: UInt32
        let bucketSet: BucketSet
        /// Whether the filter lists no packet.
        public let isEmpty: Bool

        init(_ filter: GolombCodedSet) {
            m = filter.m
            var set = BucketSet(m: filter.m)
            var isEmpty = true
            filter.forEachDecodedBucket { bucket in
                set.insert(bucket)
                isEmpty = false
            }
            bucketSet = set
            self.isEmpty = isEmpty
        }

        /// The decoded buckets, ascending.
        public var buckets: [UInt64] { bucketSet.ascending() }

        /// Whether the packet with this sync hash may be in the set (false positives at
        /// about `2^-P`; never a false negative for a packet the sender included).
        public func mightContain(_ syncHash: UInt64) -> Bool {
            guard !isEmpty else { return false }
            return bucketSet.contains(GolombCodedSet.bucket(syncHash, m: m))
        }
    }

    /// A set of buckets of a filter of range `m`: a bitmap when the range is small (every
    /// filter within BitChat's 400 bytes at P = 7 has `m` < 46,000), a hash set otherwise
    /// (`m` comes from the wire).
    struct BucketSet {
        private static let bitmapLimit: UInt32 = 1 << 20
        private var bits: [UInt64]
        private var large: Set<UInt64> = []
        private let usesBitmap: Bool

        /// An empty set for buckets of a filter of range `m` (bucket values are below `m`,
        /// or 1 when `m` ≤ 1).
        init(m: UInt32) {
            usesBitmap = m <= Self.bitmapLimit
            bits = usesBitmap ? [UInt64](repeating: 0, count: Int(m) / 64 + 1) : []
        }

        mutating func insert(_ bucket: UInt64) {
            guard usesBitmap else {
                large.insert(bucket)
                return
            }
            let word = Int(truncatingIfNeeded: bucket >> 6)
            if word >= bits.count { bits.append(contentsOf: repeatElement(0, count: word - bits.count + 1)) }
            bits[word] |= 1 << (bucket & 63)
        }

        func contains(_ bucket: UInt64) -> Bool {
            guard usesBitmap else { return large.contains(bucket) }
            let word = bucket >> 6
            return word < UInt64(bits.count) && bits[Int(word)] & (1 << (bucket & 63)) != 0
        }

        /// Whether every bucket in this set is in `other`.
        func isSubset(of other: BucketSet) -> Bool {
            guard usesBitmap, other.usesBitmap else { return ascending().allSatisfy { other.contains($0) } }
            for (index, word) in bits.enumerated() where word != 0 {
                let theirs = index < other.bits.count ? other.bits[index] : 0
                if word & ~theirs != 0 { return false }
            }
            return true
        }

        /// The buckets, ascending.
        func ascending() -> [UInt64] {
            var values: [UInt64] = []
            forEachAscending { bucket in
                values.append(bucket)
                return true
            }
            return values
        }

        /// Calls `body` with the buckets in ascending order until it returns `false`.
        func forEachAscending(_ body: (UInt64) -> Bool) {
            guard usesBitmap else {
                for bucket in large.sorted() { guard body(bucket) else { return } }
                return
            }
            for (index, word) in bits.enumerated() where word != 0 {
                var rest = word
                while rest != 0 {
                    guard body(UInt64(index) << 6 | UInt64(rest.trailingZeroBitCount)) else { return }
                    rest &= rest - 1
                }
            }
        }
    }
}

// MARK: - Bit I/O

/// Writes bits most significant first.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var pending = 0

    var byteCount: Int { bytes.count + (pending + 7) / 8 }

    mutating func writeOnes(_ count: Int) {
        var left = count
        while left > 0 {
            let chunk = min(left, 32)
            write(bits: (UInt64(1) << UInt64(chunk)) - 1, count: chunk)
            left -= chunk
        }
    }

    /// Appends the low `count` bits of `value` (`count` ≤ 56).
    mutating func write(bits value: UInt64, count: Int) {
        guard count > 0 else { return }
        accumulator = accumulator << UInt64(count) | (value & ((UInt64(1) << UInt64(count)) - 1))
        pending += count
        while pending >= 8 {
            pending -= 8
            bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
        }
        accumulator &= (UInt64(1) << UInt64(pending)) &- 1
    }

    mutating func finish() -> [UInt8] {
        if pending > 0 {
            bytes.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)))
            pending = 0
            accumulator = 0
        }
        return bytes
    }
}

/// Reads bits most significant first.
private struct BitReader {
    private let bytes: [UInt8]
    private var bitIndex = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Counts one-bits up to a zero; `nil` if the data ends first.
    mutating func readUnary() -> Int? {
        var count = 0
        while true {
            let byteIndex = bitIndex >> 3
            guard byteIndex < bytes.count else { return nil }
            let offset = bitIndex & 7
            // The unread bits of this byte, at the top; ones before the first zero.
            let ones = (~(bytes[byteIndex] << UInt8(offset))).leadingZeroBitCount
            if ones < 8 - offset {
                bitIndex += ones + 1
                return count + ones
            }
            count += 8 - offset
            bitIndex += 8 - offset
        }
    }

    /// The next `count` bits (at most 64) as a number; `nil` if the data ends first.
    mutating func readBits(_ count: Int) -> UInt64? {
        guard count > 0 else { return 0 }
        guard bitIndex + count <= bytes.count * 8 else { return nil }
        var value: UInt64 = 0
        var left = count
        while left > 0 {
            let offset = bitIndex & 7
            let take = min(left, 8 - offset)
            let byte = UInt64(bytes[bitIndex >> 3])
            value = value << UInt64(take) | (byte >> UInt64(8 - offset - take)) & ((1 << UInt64(take)) - 1)
            bitIndex += take
            left -= take
        }
        return value
    }
}
