public import Crypto
public import Foundation

/// BLAKE2b, the 64-bit flavour of the BLAKE2 hash function (RFC 7693), unkeyed or keyed.
///
/// A `BLAKE2b` value is an incremental hasher: feed it bytes with ``update(_:)`` or
/// ``update(bufferPointer:)`` in any number of pieces, then read the digest with
/// `finalize()`. The hasher is a value type; copying it forks the computation, and
/// `finalize()` does not consume or change it.
///
/// ```swift
/// let digest = try BLAKE2b.hash(message)                       // BLAKE2b-512
/// let tag = try BLAKE2b.hash(message, outputByteCount: 16, key: key)
/// ```
///
/// The default configuration (64-byte output, no key) also conforms to swift-crypto's
/// `HashFunction`, so `HMAC<BLAKE2b>` and `HKDF<BLAKE2b>` work as Noise requires.
///
/// The key, when given, is held in the hasher's inline block buffer until that block is
/// compressed, and is then wiped from the buffer with `SecureWipe`. This is best effort: a
/// struct has no deinitializer, so copies of a hasher (and one dropped before any message
/// byte or `finalize()`) keep the key until their memory is reused. The chaining state of
/// a keyed hasher is itself key-dependent secret material.
public struct BLAKE2b: Sendable {
    /// The longest digest BLAKE2b can produce, in bytes.
    public static let maximumOutputByteCount = 64

    /// The longest key BLAKE2b accepts, in bytes.
    public static let maximumKeyByteCount = 64

    /// The length of the digest this hasher produces, in bytes (1...64).
    public let outputByteCount: Int

    // Eight 64-bit words of chaining state.
    private typealias Words = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    // One 128-byte block, stored inline (no heap allocation).
    private typealias Block = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    )
    // The 16 message words of one block, or the 16 working words of the compression function.
    private typealias Sixteen = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    )

    private static let bytesPerBlock = 128
    private static let iv: Words = (
        0x6A09_E667_F3BC_C908, 0xBB67_AE85_84CA_A73B, 0x3C6E_F372_FE94_F82B, 0xA54F_F53A_5F1D_36F1,
        0x510E_527F_ADE6_82D1, 0x9B05_688C_2B3E_6C1F, 0x1F83_D9AB_FB41_BD6B, 0x5BE0_CD19_137E_2179
    )
    private static let zeroBlock: Block = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    private var h: Words
    private var buffer: Block
    // Bytes held in `buffer` (0...128). A full buffer is kept until more input arrives,
    // because the last block must be compressed with the finalization flag.
    private var bufferCount: Int
    // Bytes compressed so far (RFC 7693's 128-bit t, as low and high halves).
    private var compressedByteCount: UInt64
    private var compressedByteCountHigh: UInt64
    // Length of the key (0 when unkeyed); the key block is the first block when it is not 0.
    private let keyByteCount: Int

    /// Creates a hasher producing `outputByteCount` bytes, keyed with `key` (empty for the
    /// plain hash).
    ///
    /// - Parameters:
    ///   - outputByteCount: The digest length in bytes, 1...64. Different lengths give
    ///     unrelated digests (the length is part of the parameter block), not truncations.
    ///   - key: The MAC key, 0...64 bytes. An empty key means unkeyed hashing.
    /// - Throws: ``BLAKE2Error/invalidOutputByteCount`` or ``BLAKE2Error/invalidKeyByteCount``.
    public init(outputByteCount: Int = 64, key: some ContiguousBytes = [UInt8]()) throws(BLAKE2Error) {
        guard (1...Self.maximumOutputByteCount).contains(outputByteCount) else {
            throw .invalidOutputByteCount
        }
        let keyByteCount = key.withUnsafeBytes { $0.count }
        guard keyByteCount <= Self.maximumKeyByteCount else {
            throw .invalidKeyByteCount
        }
        self = key.withUnsafeBytes { Self(checkedOutputByteCount: outputByteCount, key: $0) }
    }

    private init(checkedOutputByteCount outputByteCount: Int, key: UnsafeRawBufferPointer) {
        self.outputByteCount = outputByteCount
        var state = Self.iv
        // Parameter block word 0: digest length, key length, fanout 1, depth 1.
        state.0 ^= 0x0101_0000 ^ (UInt64(key.count) << 8) ^ UInt64(outputByteCount)
        self.h = state
        self.buffer = Self.zeroBlock
        self.bufferCount = 0
        self.compressedByteCount = 0
        self.compressedByteCountHigh = 0
        self.keyByteCount = key.count
        if keyByteCount > 0 {
            // The key, zero-padded to a full block, is the first block of input.
            withUnsafeMutableBytes(of: &buffer) { $0.copyMemory(from: key) }
            bufferCount = Self.bytesPerBlock
        }
    }

    /// Computes the BLAKE2b digest of `data` in one call.
    ///
    /// - Parameters:
    ///   - data: The bytes to hash.
    ///   - outputByteCount: The digest length in bytes, 1...64.
    ///   - key: The MAC key, 0...64 bytes; empty for the plain hash.
    /// - Returns: `outputByteCount` digest bytes.
    /// - Throws: ``BLAKE2Error`` when the length or key is out of range.
    public static func hash(
        _ data: some ContiguousBytes,
        outputByteCount: Int = 64,
        key: some ContiguousBytes = [UInt8]()
    ) throws(BLAKE2Error) -> [UInt8] {
        var hasher = try BLAKE2b(outputByteCount: outputByteCount, key: key)
        hasher.update(data)
        return hasher.finalize()
    }

    /// Adds `bytes` to the message being hashed.
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// Adds the bytes in `bufferPointer` to the message being hashed. The pointer is not
    /// retained.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let base = bufferPointer.baseAddress, !bufferPointer.isEmpty else { return }
        var offset = 0
        var remaining = bufferPointer.count
        if bufferCount + remaining > Self.bytesPerBlock {
            // More input follows the buffered bytes, so the buffered block is not the last.
            if bufferCount > 0 {
                let fill = Self.bytesPerBlock - bufferCount
                appendToBuffer(base, count: fill)
                offset += fill
                remaining -= fill
                compressBuffer(isLast: false)
            }
            // Whole blocks straight from the input, always keeping at least one byte back.
            while remaining > Self.bytesPerBlock {
                addToCounter(Self.bytesPerBlock)
                Self.compress(
                    &h, base + offset,
                    counterLow: compressedByteCount, counterHigh: compressedByteCountHigh, isLast: false
                )
                offset += Self.bytesPerBlock
                remaining -= Self.bytesPerBlock
            }
        }
        appendToBuffer(base + offset, count: remaining)
    }

    /// Returns the digest of everything added so far: `outputByteCount` bytes.
    ///
    /// The hasher is left unchanged, so more bytes may be added and `finalize()` called again
    /// for the digest of the longer message.
    public func finalize() -> [UInt8] {
        var copy = self
        var words = copy.finish()
        words = (
            words.0.littleEndian, words.1.littleEndian, words.2.littleEndian, words.3.littleEndian,
            words.4.littleEndian, words.5.littleEndian, words.6.littleEndian, words.7.littleEndian
        )
        let count = outputByteCount
        return withUnsafeBytes(of: &words) { Array($0.prefix(count)) }
    }

    // MARK: - Internals

    @inline(__always)
    private mutating func appendToBuffer(_ source: UnsafeRawPointer, count: Int) {
        guard count > 0 else { return }
        let start = bufferCount
        withUnsafeMutableBytes(of: &buffer) { raw in
            (raw.baseAddress! + start).copyMemory(from: source, byteCount: count)
        }
        bufferCount += count
    }

    /// Compresses the (full or, when last, zero-padded) buffer and empties it. The key block
    /// (always the first block of a keyed hash) is wiped with `SecureWipe` right after.
    private mutating func compressBuffer(isLast: Bool) {
        addToCounter(bufferCount)
        let counterLow = compressedByteCount
        let counterHigh = compressedByteCountHigh
        var state = h
        withUnsafeBytes(of: &buffer) { raw in
            Self.compress(&state, raw.baseAddress!, counterLow: counterLow, counterHigh: counterHigh, isLast: isLast)
        }
        h = state
        bufferCount = 0
        if keyByteCount > 0 && counterHigh == 0 && counterLow == UInt64(Self.bytesPerBlock) {
            // That was the key block: do not leave the key lying in the buffer. SecureWipe is
            // deliberately unoptimised (slow), so it runs once per keyed hasher, never per
            // block, and only over the key bytes (the rest of the block is zero padding).
            let keyBytes = keyByteCount
            withUnsafeMutableBytes(of: &buffer) { raw in
                SecureWipe.wipe(UnsafeMutableRawBufferPointer(rebasing: raw[..<keyBytes]))
            }
        }
    }

    /// Pads and compresses the final block and returns the chaining state.
    private mutating func finish() -> Words {
        let used = bufferCount
        withUnsafeMutableBytes(of: &buffer) { raw in
            let tail = UnsafeMutableRawBufferPointer(rebasing: raw[used...])
            tail.initializeMemory(as: UInt8.self, repeating: 0)
        }
        // When nothing followed the key, the final block was the key block: compressBuffer
        // wipes it in that case too.
        compressBuffer(isLast: true)
        return h
    }

    @inline(__always)
    private mutating func addToCounter(_ byteCount: Int) {
        let (sum, overflow) = compressedByteCount.addingReportingOverflow(UInt64(byteCount))
        compressedByteCount = sum
        if overflow { compressedByteCountHigh &+= 1 }
    }

    @inline(__always)
    private static func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 {
        (x &>> n) | (x &<< (64 &- n))
    }

    /// The mixing function G of RFC 7693 section 3.1, with BLAKE2b's rotations (32, 24, 16, 63).
    @inline(__always)
    private static func g(
        _ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64,
        _ x: UInt64, _ y: UInt64
    ) {
        a = a &+ b &+ x
        d = rotr(d ^ a, 32)
        c = c &+ d
        b = rotr(b ^ c, 24)
        a = a &+ b &+ y
        d = rotr(d ^ a, 16)
        c = c &+ d
        b = rotr(b ^ c, 63)
    }

    /// One round: the message words arrive already permuted by the round's SIGMA row.
    @inline(__always)
    private static func round(
        _ v: inout Sixteen,
        _ x0: UInt64, _ x1: UInt64, _ x2: UInt64, _ x3: UInt64,
        _ x4: UInt64, _ x5: UInt64, _ x6: UInt64, _ x7: UInt64,
        _ x8: UInt64, _ x9: UInt64, _ x10: UInt64, _ x11: UInt64,
        _ x12: UInt64, _ x13: UInt64, _ x14: UInt64, _ x15: UInt64
    ) {
        g(&v.0, &v.4, &v.8, &v.12, x0, x1)
        g(&v.1, &v.5, &v.9, &v.13, x2, x3)
        g(&v.2, &v.6, &v.10, &v.14, x4, x5)
        g(&v.3, &v.7, &v.11, &v.15, x6, x7)
        g(&v.0, &v.5, &v.10, &v.15, x8, x9)
        g(&v.1, &v.6, &v.11, &v.12, x10, x11)
        g(&v.2, &v.7, &v.8, &v.13, x12, x13)
        g(&v.3, &v.4, &v.9, &v.14, x14, x15)
    }

    @inline(__always)
    private static func word(_ block: UnsafeRawPointer, _ index: Int) -> UInt64 {
        UInt64(littleEndian: block.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self))
    }

    /// The compression function F of RFC 7693 section 3.2 (12 rounds).
    private static func compress(
        _ h: inout Words, _ block: UnsafeRawPointer, counterLow: UInt64, counterHigh: UInt64, isLast: Bool
    ) {
        let m: Sixteen = (
            word(block, 0), word(block, 1), word(block, 2), word(block, 3),
            word(block, 4), word(block, 5), word(block, 6), word(block, 7),
            word(block, 8), word(block, 9), word(block, 10), word(block, 11),
            word(block, 12), word(block, 13), word(block, 14), word(block, 15)
        )
        var v: Sixteen = (
            h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7,
            iv.0, iv.1, iv.2, iv.3,
            iv.4 ^ counterLow,
            iv.5 ^ counterHigh,
            isLast ? ~iv.6 : iv.6,
            iv.7
        )
        round(&v, m.0, m.1, m.2, m.3, m.4, m.5, m.6, m.7, m.8, m.9, m.10, m.11, m.12, m.13, m.14, m.15)
        round(&v, m.14, m.10, m.4, m.8, m.9, m.15, m.13, m.6, m.1, m.12, m.0, m.2, m.11, m.7, m.5, m.3)
        round(&v, m.11, m.8, m.12, m.0, m.5, m.2, m.15, m.13, m.10, m.14, m.3, m.6, m.7, m.1, m.9, m.4)
        round(&v, m.7, m.9, m.3, m.1, m.13, m.12, m.11, m.14, m.2, m.6, m.5, m.10, m.4, m.0, m.15, m.8)
        round(&v, m.9, m.0, m.5, m.7, m.2, m.4, m.10, m.15, m.14, m.1, m.11, m.12, m.6, m.8, m.3, m.13)
        round(&v, m.2, m.12, m.6, m.10, m.0, m.11, m.8, m.3, m.4, m.13, m.7, m.5, m.15, m.14, m.1, m.9)
        round(&v, m.12, m.5, m.1, m.15, m.14, m.13, m.4, m.10, m.0, m.7, m.6, m.3, m.9, m.2, m.8, m.11)
        round(&v, m.13, m.11, m.7, m.14, m.12, m.1, m.3, m.9, m.5, m.0, m.15, m.4, m.8, m.6, m.2, m.10)
        round(&v, m.6, m.15, m.14, m.9, m.11, m.3, m.0, m.8, m.12, m.2, m.13, m.7, m.1, m.4, m.10, m.5)
        round(&v, m.10, m.2, m.8, m.4, m.7, m.6, m.1, m.5, m.15, m.11, m.9, m.14, m.3, m.12, m.13, m.0)
        round(&v, m.0, m.1, m.2, m.3, m.4, m.5, m.6, m.7, m.8, m.9, m.10, m.11, m.12, m.13, m.14, m.15)
        round(&v, m.14, m.10, m.4, m.8, m.9, m.15, m.13, m.6, m.1, m.12, m.0, m.2, m.11, m.7, m.5, m.3)
        h.0 ^= v.0 ^ v.8
        h.1 ^= v.1 ^ v.9
        h.2 ^= v.2 ^ v.10
        h.3 ^= v.3 ^ v.11
        h.4 ^= v.4 ^ v.12
        h.5 ^= v.5 ^ v.13
        h.6 ^= v.6 ^ v.14
        h.7 ^= v.7 ^ v.15
    }
}

// MARK: - Redacted descriptions

extension BLAKE2b: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `BLAKE2b(outputByteCount: N, keyed: true|false)`: never the key, the buffered input or
    /// the chaining state, so printing or logging a hasher leaks nothing.
    public var description: String {
        "BLAKE2b(outputByteCount: \(outputByteCount), keyed: \(keyByteCount > 0))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and reflection show no key or state.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

// MARK: - HashFunction

extension BLAKE2b: HashFunction {
    /// The BLAKE2b block size, 128 bytes (what HMAC pads its key to).
    public static var blockByteCount: Int { 128 }

    /// The digest type of the `HashFunction` conformance: a 64-byte BLAKE2b-512 digest.
    public typealias Digest = BLAKE2bDigest

    /// Creates an unkeyed BLAKE2b-512 hasher (64-byte output), as `HashFunction` requires.
    public init() {
        self.init(checkedOutputByteCount: 64, key: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Returns the 64-byte digest of everything added so far, as a ``BLAKE2bDigest``.
    ///
    /// This is the `HashFunction` requirement. It is meant for hashers with the default
    /// 64-byte output: calling it on a hasher created with another `outputByteCount` is a
    /// programming error and traps. A keyed 64-byte hasher is allowed. Without a type
    /// context, `finalize()` picks the `[UInt8]` overload.
    @_disfavoredOverload
    public func finalize() -> BLAKE2bDigest {
        precondition(
            outputByteCount == BLAKE2bDigest.byteCount,
            "BLAKE2b.finalize() -> BLAKE2bDigest needs a hasher with outputByteCount 64"
        )
        var copy = self
        let words = copy.finish()
        return BLAKE2bDigest(littleEndianWords: words)
    }
}

// MARK: - Digest

/// A 64-byte BLAKE2b-512 digest, the output of `BLAKE2b`'s `HashFunction` conformance.
///
/// Equality is checked in constant time. The bytes are stored inline.
public struct BLAKE2bDigest: Crypto.Digest {
    fileprivate typealias Storage = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    // The digest bytes, in order, in memory.
    private var storage: Storage

    /// The length of a BLAKE2b-512 digest: 64 bytes.
    public static var byteCount: Int { 64 }

    /// Builds a digest from eight 64-bit values whose little-endian bytes are the digest.
    fileprivate init(littleEndianWords words: Storage) {
        storage = (
            words.0.littleEndian, words.1.littleEndian, words.2.littleEndian, words.3.littleEndian,
            words.4.littleEndian, words.5.littleEndian, words.6.littleEndian, words.7.littleEndian
        )
    }

    /// Calls `body` with the 64 digest bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var copy = storage
        return try Swift.withUnsafeBytes(of: &copy) { try body($0) }
    }

    /// Iterates over the 64 digest bytes.
    public func makeIterator() -> Array<UInt8>.Iterator {
        withUnsafeBytes { Array($0) }.makeIterator()
    }

    /// The digest in lowercase hexadecimal, prefixed with the type name.
    public var description: String {
        "BLAKE2bDigest: \(withUnsafeBytes { Hex.encode($0) })"
    }

    /// Compares two digests in constant time.
    public static func == (lhs: BLAKE2bDigest, rhs: BLAKE2bDigest) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
    }

    /// Feeds the digest bytes to `hasher`.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

