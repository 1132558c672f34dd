package import Foundation

/// An element of GF(2^255 − 19), the field under Curve25519 and edwards25519 (RFC 7748 §4.1,
/// RFC 8032 §5.1).
///
/// The value is held in radix 2^51: five unsigned 64-bit limbs, limb *i* weighing 2^(51·i).
/// Every operation returns a *loosely reduced* element, each limb below 2^51 + 2^13, which
/// is what the multiplication needs for its 128-bit column sums not to overflow (the bound
/// is worked out in ``*(_:_:)``). The represented integer may still be ≥ p; only
/// ``bytes`` (and the comparisons built on it) reduce fully.
///
/// All arithmetic is constant time: no branch or memory index depends on a value. The
/// 64×64→128-bit products use `UInt64.multipliedFullWidth(by:)`, not `UInt128`, which
/// is not available on the package's minimum Apple platforms (macOS 14, iOS 17).
package struct FieldElement: Sendable {
    var l0: UInt64
    var l1: UInt64
    var l2: UInt64
    var l3: UInt64
    var l4: UInt64

    static let mask51: UInt64 = (1 << 51) - 1

    /// Creates an element from limbs that already satisfy the loose-reduction bound.
    init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64, _ l4: UInt64) {
        self.l0 = l0
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
        self.l4 = l4
    }

    /// The element equal to a small integer (below 2^51).
    package init(_ small: UInt64) {
        precondition(small <= Self.mask51, "small field constant out of range")
        self.init(small, 0, 0, 0, 0)
    }

    /// 0.
    package static let zero = FieldElement(0, 0, 0, 0, 0)
    /// 1.
    package static let one = FieldElement(1, 0, 0, 0, 0)
}

// MARK: - Encoding

extension FieldElement {
    /// Decodes 32 little-endian bytes, ignoring the top bit (bit 255) as RFC 7748 §5 and
    /// RFC 8032 §5.1.3 require. Values in p ..< 2^255 are accepted and represent their
    /// residue; use ``init(canonicalBytes:)`` to reject them.
    ///
    /// - Precondition: `bytes.count == 32`.
    package init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 32, "field element encoding must be 32 bytes")
        let w0 = Self.loadWord(bytes, 0)
        let w1 = Self.loadWord(bytes, 8)
        let w2 = Self.loadWord(bytes, 16)
        let w3 = Self.loadWord(bytes, 24)
        let m = Self.mask51
        self.init(
            w0 & m,
            ((w0 >> 51) | (w1 << 13)) & m,
            ((w1 >> 38) | (w2 << 26)) & m,
            ((w2 >> 25) | (w3 << 39)) & m,
            (w3 >> 12) & m
        )
    }

    /// Decodes 32 little-endian bytes, ignoring the top bit.
    ///
    /// - Precondition: `bytes` holds 32 bytes.
    package init(bytes: some ContiguousBytes) {
        self = bytes.withUnsafeBytes { FieldElement(bytes: $0) }
    }

    /// Decodes 32 little-endian bytes whose low 255 bits are a canonical value (< p);
    /// `nil` when they encode p ..< 2^255. The top bit is ignored, as in RFC 8032 §5.1.3,
    /// whose point decoding keeps the sign of x there. Variable time: only for public input.
    package init?(canonicalBytes bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        let element = FieldElement(bytes: bytes)
        let reencoded = element.bytes
        for index in 0..<31 where reencoded[index] != bytes[index] { return nil }
        guard reencoded[31] == bytes[31] & 0x7f else { return nil }
        self = element
    }

    /// The canonical 32-byte little-endian encoding: the value fully reduced below p, top
    /// bit zero.
    package var bytes: [UInt8] {
        let (w0, w1, w2, w3) = canonicalWords()
        var out = [UInt8](repeating: 0, count: 32)
        for (index, word) in [w0, w1, w2, w3].enumerated() {
            for byte in 0..<8 {
                out[index * 8 + byte] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(byte)))
            }
        }
        return out
    }

    /// The fully reduced value as four little-endian 64-bit words (value < p).
    @inline(__always)
    func canonicalWords() -> (UInt64, UInt64, UInt64, UInt64) {
        let r = fullyReducedLimbs()
        return (
            r.l0 | (r.l1 << 51),
            (r.l1 >> 13) | (r.l2 << 38),
            (r.l2 >> 26) | (r.l3 << 25),
            (r.l3 >> 39) | (r.l4 << 12)
        )
    }

    /// The same value with every limb below 2^51 and the integer below p.
    @inline(__always)
    func fullyReducedLimbs() -> FieldElement {
        let m = Self.mask51
        // After one carry pass limbs 1...4 are below 2^51 and limb 0 may exceed 2^51 by
        // the folded-in 19·carry. In the second pass a carry out of limb 0 leaves it below
        // 2^51 (and then nothing carries out of limb 4), and without one nothing carries at
        // all, so every limb ends below 2^51.
        var r = self.weaklyReduced().weaklyReduced()
        // Now r < 2^255. r ≥ p exactly when r + 19 ≥ 2^255: compute that top carry q.
        var q = (r.l0 &+ 19) >> 51
        q = (r.l1 &+ q) >> 51
        q = (r.l2 &+ q) >> 51
        q = (r.l3 &+ q) >> 51
        q = (r.l4 &+ q) >> 51
        // r − q·p = r + 19q − q·2^255: add 19q, carry, and drop bit 255.
        r.l0 &+= 19 &* q
        r.l1 &+= r.l0 >> 51
        r.l0 &= m
        r.l2 &+= r.l1 >> 51
        r.l1 &= m
        r.l3 &+= r.l2 >> 51
        r.l2 &= m
        r.l4 &+= r.l3 >> 51
        r.l3 &= m
        r.l4 &= m
        return r
    }

    @inline(__always)
    private static func loadWord(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        var word: UInt64 = 0
        for index in 0..<8 {
            word |= UInt64(bytes[offset + index]) << (8 * UInt64(index))
        }
        return word
    }
}

// MARK: - Constant-time predicates and selection

extension FieldElement {
    /// True when the canonical value is odd: the "negative" elements of RFC 8032 §5.1.2
    /// (the sign of x in a compressed point) and RFC 9496 §4.1 (`IS_NEGATIVE`).
    @inline(__always)
    package var isNegative: ConstantTime.Choice {
        ConstantTime.Choice(bit: fullyReducedLimbs().l0 & 1)
    }

    /// True when the value is 0 mod p.
    @inline(__always)
    package var isZero: ConstantTime.Choice {
        let r = fullyReducedLimbs()
        return ConstantTime.Choice.isZero(r.l0 | r.l1 | r.l2 | r.l3 | r.l4)
    }

    /// True when `a` and `b` are equal mod p, in constant time.
    @inline(__always)
    package static func equal(_ a: FieldElement, _ b: FieldElement) -> ConstantTime.Choice {
        let x = a.fullyReducedLimbs()
        let y = b.fullyReducedLimbs()
        let difference = (x.l0 ^ y.l0) | (x.l1 ^ y.l1) | (x.l2 ^ y.l2) | (x.l3 ^ y.l3) | (x.l4 ^ y.l4)
        return ConstantTime.Choice.isZero(difference)
    }

    /// Returns `b` when `choice` is true and `a` otherwise, without branching.
    @inline(__always)
    package static func select(_ a: FieldElement, _ b: FieldElement, _ choice: ConstantTime.Choice) -> FieldElement {
        FieldElement(
            choice.select(a.l0, b.l0),
            choice.select(a.l1, b.l1),
            choice.select(a.l2, b.l2),
            choice.select(a.l3, b.l3),
            choice.select(a.l4, b.l4)
        )
    }

    /// Swaps `a` and `b` when `choice` is true, without branching.
    @inline(__always)
    package static func conditionalSwap(_ a: inout FieldElement, _ b: inout FieldElement, _ choice: ConstantTime.Choice) {
        let m = choice.mask
        var t = m & (a.l0 ^ b.l0)
        a.l0 ^= t
        b.l0 ^= t
        t = m & (a.l1 ^ b.l1)
        a.l1 ^= t
        b.l1 ^= t
        t = m & (a.l2 ^ b.l2)
        a.l2 ^= t
        b.l2 ^= t
        t = m & (a.l3 ^ b.l3)
        a.l3 ^= t
        b.l3 ^= t
        t = m & (a.l4 ^ b.l4)
        a.l4 ^= t
        b.l4 ^= t
    }

    /// Negates in place when `choice` is true.
    @inline(__always)
    package mutating func conditionalNegate(_ choice: ConstantTime.Choice) {
        self = Self.select(self, -self, choice)
    }

    /// The non-negative (even) one of ±self (RFC 9496 `CT_ABS`).
    @inline(__always)
    package var absolute: FieldElement {
        var result = self
        result.conditionalNegate(isNegative)
        return result
    }
}

// MARK: - Equatable (constant time)

extension FieldElement: Equatable {
    /// Equality mod p, computed in constant time.
    package static func == (lhs: FieldElement, rhs: FieldElement) -> Bool {
        equal(lhs, rhs).isTrue
    }
}
