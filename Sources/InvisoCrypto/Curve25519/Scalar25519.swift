package import Foundation

/// An integer modulo L = 2^252 + 27742317777372353535851937790883648493, the order of the
/// edwards25519 base point (RFC 8032 §5.1, where it is called L; XEdDSA calls it q).
///
/// Values are always fully reduced (0 ≤ value < L) and held as four little-endian 64-bit
/// words. Arithmetic is constant time: reduction is Barrett's (Menezes, van Oorschot and
/// Vanstone, *Handbook of Applied Cryptography*, algorithm 14.42, with base 2^64 and
/// k = 4), whose correction steps are masked subtractions. Intermediate words live in
/// stack buffers that are zeroed before returning.
package struct Scalar25519: Sendable {
    var w0: UInt64
    var w1: UInt64
    var w2: UInt64
    var w3: UInt64

    private init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        self.w0 = w0
        self.w1 = w1
        self.w2 = w2
        self.w3 = w3
    }

    /// 0.
    package static let zero = Scalar25519(0, 0, 0, 0)
    /// 1.
    package static let one = Scalar25519(1, 0, 0, 0)

    /// L, little-endian 64-bit words.
    static let order: (UInt64, UInt64, UInt64, UInt64) = (
        0x5812_631A_5CF5_D3ED, 0x14DE_F9DE_A2F7_9CD6, 0, 0x1000_0000_0000_0000
    )

    /// L as an array, for the loops of the Barrett reduction.
    private static let orderWords: [UInt64] = [order.0, order.1, order.2, order.3]

    /// μ = ⌊2^512 / L⌋, the Barrett constant (261 bits), little-endian 64-bit words.
    private static let muWords: [UInt64] = [
        0xED9C_E5A3_0A2C_131B, 0x2106_215D_0863_29A7, 0xFFFF_FFFF_FFFF_FFEB, 0xFFFF_FFFF_FFFF_FFFF, 0xF,
    ]

    /// Word `index` (0...3, public) of the value.
    @inline(__always)
    private func word(_ index: Int) -> UInt64 {
        switch index {
        case 0: w0
        case 1: w1
        case 2: w2
        default: w3
        }
    }
}

// MARK: - Encoding

extension Scalar25519 {
    /// Reduces a little-endian integer of at most 64 bytes modulo L (for instance a SHA-512
    /// digest, RFC 8032 §5.1.6 step 2, or a 32-byte secret scalar). Constant time.
    ///
    /// - Precondition: `bytes.count <= 64`.
    package init(reducing bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= 64, "at most 64 bytes can be reduced")
        self = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 8) { wide in
            wide.initialize(repeating: 0)
            for index in 0..<bytes.count {
                wide[index / 8] |= UInt64(bytes[index]) << (8 * UInt64(index % 8))
            }
            let result = Self.barrettReduce(wide)
            SecureWipe.wipe(UnsafeMutableRawBufferPointer(wide))
            return result
        }
    }

    /// Reduces a little-endian integer of at most 64 bytes modulo L.
    package init(reducing bytes: some ContiguousBytes) {
        self = bytes.withUnsafeBytes { Scalar25519(reducing: $0) }
    }

    /// Decodes a 32-byte little-endian integer that must already be below L (RFC 8032
    /// §5.1.7 step 1 rejects signatures whose S is not); `nil` otherwise.
    package init?(canonicalBytes bytes: some ContiguousBytes) {
        guard let scalar = bytes.withUnsafeBytes({ raw -> Scalar25519? in
            guard raw.count == 32 else { return nil }
            var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: raw) }
            let value = Scalar25519(
                UInt64(littleEndian: words.0), UInt64(littleEndian: words.1),
                UInt64(littleEndian: words.2), UInt64(littleEndian: words.3))
            return value.isBelowOrder.isTrue ? value : nil
        }) else { return nil }
        self = scalar
    }

    /// Whether `bytes` (32, little-endian) encode an integer below L.
    package static func isCanonical(_ bytes: some ContiguousBytes) -> Bool {
        Scalar25519(canonicalBytes: bytes) != nil
    }

    /// Calls `body` with the 32-byte little-endian encoding, in stack memory that is zeroed
    /// afterwards.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var words = (w0.littleEndian, w1.littleEndian, w2.littleEndian, w3.littleEndian)
        defer { Swift.withUnsafeMutableBytes(of: &words) { SecureWipe.wipe($0) } }
        return try Swift.withUnsafeBytes(of: &words) { try body($0) }
    }

    /// The 32-byte little-endian encoding. The caller owns (and should wipe) the copy.
    package var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// True when the value is below L: the subtraction value − L borrows.
    private var isBelowOrder: ConstantTime.Choice {
        let (_, borrow) = Self.subtractOrder(w0, w1, w2, w3, 0)
        return ConstantTime.Choice(bit: borrow)
    }
}

// MARK: - Arithmetic

extension Scalar25519 {
    /// a·b + c mod L, constant time (RFC 8032 §5.1.6 step 5: S = r + k·s).
    package static func multiplyAdd(_ a: Scalar25519, _ b: Scalar25519, _ c: Scalar25519) -> Scalar25519 {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 8) { product in
            product.initialize(repeating: 0)
            for i in 0..<4 {
                var carry: UInt64 = 0
                for j in 0..<4 {
                    (carry, product[i + j]) = multiplyAccumulate(a.word(i), b.word(j), product[i + j], carry)
                }
                product[i + 4] = carry
            }
            // + c, carrying through all eight words (a·b + c < L² + L < 2^512).
            var carry: UInt64 = 0
            for index in 0..<8 {
                (carry, product[index]) = addWithCarry(product[index], index < 4 ? c.word(index) : 0, carry)
            }
            let result = barrettReduce(product)
            SecureWipe.wipe(UnsafeMutableRawBufferPointer(product))
            return result
        }
    }

    /// a·b mod L.
    package static func * (a: Scalar25519, b: Scalar25519) -> Scalar25519 {
        multiplyAdd(a, b, .zero)
    }

    /// a + b mod L.
    package static func + (a: Scalar25519, b: Scalar25519) -> Scalar25519 {
        var carry: UInt64 = 0
        var sum: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        (carry, sum.0) = addWithCarry(a.w0, b.w0, carry)
        (carry, sum.1) = addWithCarry(a.w1, b.w1, carry)
        (carry, sum.2) = addWithCarry(a.w2, b.w2, carry)
        (carry, sum.3) = addWithCarry(a.w3, b.w3, carry)
        // Both below L < 2^253, so the sum is below 2^254: no carry out, one subtraction.
        return reduceOnce(sum.0, sum.1, sum.2, sum.3, 0)
    }

    /// −a mod L.
    package static prefix func - (a: Scalar25519) -> Scalar25519 {
        // L − a lies in 1...L; it equals L (and must become 0) only for a = 0.
        var borrow: UInt64 = 0
        var difference: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        (borrow, difference.0) = subtractWithBorrow(order.0, a.w0, borrow)
        (borrow, difference.1) = subtractWithBorrow(order.1, a.w1, borrow)
        (borrow, difference.2) = subtractWithBorrow(order.2, a.w2, borrow)
        (borrow, difference.3) = subtractWithBorrow(order.3, a.w3, borrow)
        return reduceOnce(difference.0, difference.1, difference.2, difference.3, 0)
    }

    /// a − b mod L.
    package static func - (a: Scalar25519, b: Scalar25519) -> Scalar25519 {
        a + -b
    }

    /// Selects `b` when `choice` is true and `a` otherwise, without branching.
    package static func select(_ a: Scalar25519, _ b: Scalar25519, _ choice: ConstantTime.Choice) -> Scalar25519 {
        Scalar25519(
            choice.select(a.w0, b.w0), choice.select(a.w1, b.w1),
            choice.select(a.w2, b.w2), choice.select(a.w3, b.w3))
    }
}

// MARK: - Equatable (constant time)

extension Scalar25519: Equatable {
    /// Equality of the (canonical) values, in constant time.
    package static func == (lhs: Scalar25519, rhs: Scalar25519) -> Bool {
        let difference = (lhs.w0 ^ rhs.w0) | (lhs.w1 ^ rhs.w1) | (lhs.w2 ^ rhs.w2) | (lhs.w3 ^ rhs.w3)
        return ConstantTime.Choice.isZero(difference).isTrue
    }
}

// MARK: - Barrett reduction

extension Scalar25519 {
    /// x mod L for a 512-bit x in eight little-endian words (HAC 14.42, b = 2^64, k = 4):
    /// q₁ = ⌊x / b^3⌋, q₃ = ⌊q₁·μ / b^5⌋, r = (x − q₃·L) mod b^5, which lies in 0 ..< 3L,
    /// then two masked subtractions of L.
    private static func barrettReduce(_ x: UnsafeMutableBufferPointer<UInt64>) -> Scalar25519 {
        precondition(x.count == 8)
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 20) { scratch in
            scratch.initialize(repeating: 0)
            // q₂ = q₁·μ in scratch[0 ..< 10]; q₁ = x[3 ..< 8].
            for i in 0..<5 {
                var carry: UInt64 = 0
                for j in 0..<5 {
                    (carry, scratch[i + j]) = multiplyAccumulate(x[3 + i], muWords[j], scratch[i + j], carry)
                }
                scratch[i + 5] = carry
            }
            // q₃ = q₂[5 ..< 10]; r₂ = q₃·L mod b^5 in scratch[10 ..< 15].
            for i in 0..<5 {
                var carry: UInt64 = 0
                for j in 0..<4 where i + j < 5 {
                    (carry, scratch[10 + i + j]) = multiplyAccumulate(scratch[5 + i], orderWords[j], scratch[10 + i + j], carry)
                }
                if i + 4 < 5 { scratch[10 + i + 4] &+= carry }
            }
            // r = r₁ − r₂ mod b^5, r₁ = x[0 ..< 5].
            var borrow: UInt64 = 0
            for index in 0..<5 {
                (borrow, scratch[15 + index]) = subtractWithBorrow(x[index], scratch[10 + index], borrow)
            }
            var r = reduceOnceWide(scratch[15], scratch[16], scratch[17], scratch[18], scratch[19])
            r = reduceOnceWide(r.0, r.1, r.2, r.3, r.4)
            let result = Scalar25519(r.0, r.1, r.2, r.3)
            SecureWipe.wipe(UnsafeMutableRawBufferPointer(scratch))
            return result
        }
    }

    /// Subtracts L from a value below 2L, held in five words, when the value is at least L.
    private static func reduceOnce(_ v0: UInt64, _ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64) -> Scalar25519 {
        let r = reduceOnceWide(v0, v1, v2, v3, v4)
        return Scalar25519(r.0, r.1, r.2, r.3)
    }

    /// value − L when value ≥ L, else value; five words in and out, no branches.
    private static func reduceOnceWide(
        _ v0: UInt64, _ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64
    ) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        let (difference, borrow) = subtractOrder(v0, v1, v2, v3, v4)
        let keep = ConstantTime.Choice(bit: borrow)      // value < L: keep it
        return (
            keep.select(difference.0, v0), keep.select(difference.1, v1), keep.select(difference.2, v2),
            keep.select(difference.3, v3), keep.select(difference.4, v4)
        )
    }

    /// (value − L) mod 2^320 and the final borrow (1 when value < L).
    @inline(__always)
    private static func subtractOrder(
        _ v0: UInt64, _ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64
    ) -> ((UInt64, UInt64, UInt64, UInt64, UInt64), borrow: UInt64) {
        var borrow: UInt64 = 0
        var d: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        (borrow, d.0) = subtractWithBorrow(v0, order.0, borrow)
        (borrow, d.1) = subtractWithBorrow(v1, order.1, borrow)
        (borrow, d.2) = subtractWithBorrow(v2, order.2, borrow)
        (borrow, d.3) = subtractWithBorrow(v3, order.3, borrow)
        (borrow, d.4) = subtractWithBorrow(v4, 0, borrow)
        return (d, borrow)
    }

    /// a·b + c + d as (high, low); never overflows since (2^64 − 1)² + 2(2^64 − 1) < 2^128.
    @inline(__always)
    private static func multiplyAccumulate(_ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        let product = a.multipliedFullWidth(by: b)
        let (sum1, overflow1) = product.low.addingReportingOverflow(c)
        let (sum2, overflow2) = sum1.addingReportingOverflow(d)
        return (product.high &+ (overflow1 ? 1 : 0) &+ (overflow2 ? 1 : 0), sum2)
    }

    /// a + b + carry as (carry out, sum).
    @inline(__always)
    private static func addWithCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (sum1, overflow1) = a.addingReportingOverflow(b)
        let (sum2, overflow2) = sum1.addingReportingOverflow(carry)
        return ((overflow1 ? 1 : 0) | (overflow2 ? 1 : 0), sum2)
    }

    /// a − b − borrow as (borrow out, difference).
    @inline(__always)
    private static func subtractWithBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        let (difference1, overflow1) = a.subtractingReportingOverflow(b)
        let (difference2, overflow2) = difference1.subtractingReportingOverflow(borrow)
        return ((overflow1 ? 1 : 0) | (overflow2 ? 1 : 0), difference2)
    }
}
