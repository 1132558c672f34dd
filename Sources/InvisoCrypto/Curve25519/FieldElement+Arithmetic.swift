extension FieldElement {
    /// One carry pass: moves everything above bit 51 of each limb into the next limb and the
    /// overflow of limb 4 (weight 2^255 ≡ 19) back into limb 0. Accepts limbs up to 2^63;
    /// returns limbs 1...4 below 2^51 and limb 0 below 2^51 + 19·2^12.
    @inline(__always)
    func weaklyReduced() -> FieldElement {
        let m = Self.mask51
        var r = self
        r.l1 &+= r.l0 >> 51
        r.l0 &= m
        r.l2 &+= r.l1 >> 51
        r.l1 &= m
        r.l3 &+= r.l2 >> 51
        r.l2 &= m
        r.l4 &+= r.l3 >> 51
        r.l3 &= m
        r.l0 &+= 19 &* (r.l4 >> 51)
        r.l4 &= m
        return r
    }

    /// Sum mod p.
    @inline(__always)
    package static func + (a: FieldElement, b: FieldElement) -> FieldElement {
        // Limbs below 2^52 + 2^14 before the carry pass.
        FieldElement(a.l0 &+ b.l0, a.l1 &+ b.l1, a.l2 &+ b.l2, a.l3 &+ b.l3, a.l4 &+ b.l4).weaklyReduced()
    }

    /// Difference mod p.
    @inline(__always)
    package static func - (a: FieldElement, b: FieldElement) -> FieldElement {
        // a + 4p − b: 4p in radix 2^51 has limbs 2^53 − 76 and 2^53 − 4, each above any
        // loosely reduced limb of b, so no limb goes negative.
        FieldElement(
            (a.l0 &+ 0x1F_FFFF_FFFF_FFB4) &- b.l0,
            (a.l1 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l1,
            (a.l2 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l2,
            (a.l3 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l3,
            (a.l4 &+ 0x1F_FFFF_FFFF_FFFC) &- b.l4
        ).weaklyReduced()
    }

    /// Negation mod p.
    @inline(__always)
    package static prefix func - (a: FieldElement) -> FieldElement {
        zero - a
    }

    /// Product mod p.
    ///
    /// Schoolbook on 51-bit limbs, folding the columns of weight 2^255 and up back in
    /// with the factor 19. With both inputs loosely reduced (limbs < 2^51 + 2^13), each
    /// column is at most 1 + 4·19 = 77 products below 2^102.01 each, so below 2^108.3:
    /// the 128-bit accumulators cannot overflow, and the final carry out of limb 4 is
    /// below 2^58, so 19 times it still fits in 64 bits.
    @inline(__always)
    package static func * (a: FieldElement, b: FieldElement) -> FieldElement {
        let b1x19 = b.l1 &* 19
        let b2x19 = b.l2 &* 19
        let b3x19 = b.l3 &* 19
        let b4x19 = b.l4 &* 19

        var c0 = Wide(a.l0, b.l0)
        c0.add(a.l1, b4x19)
        c0.add(a.l2, b3x19)
        c0.add(a.l3, b2x19)
        c0.add(a.l4, b1x19)

        var c1 = Wide(a.l0, b.l1)
        c1.add(a.l1, b.l0)
        c1.add(a.l2, b4x19)
        c1.add(a.l3, b3x19)
        c1.add(a.l4, b2x19)

        var c2 = Wide(a.l0, b.l2)
        c2.add(a.l1, b.l1)
        c2.add(a.l2, b.l0)
        c2.add(a.l3, b4x19)
        c2.add(a.l4, b3x19)

        var c3 = Wide(a.l0, b.l3)
        c3.add(a.l1, b.l2)
        c3.add(a.l2, b.l1)
        c3.add(a.l3, b.l0)
        c3.add(a.l4, b4x19)

        var c4 = Wide(a.l0, b.l4)
        c4.add(a.l1, b.l3)
        c4.add(a.l2, b.l2)
        c4.add(a.l3, b.l1)
        c4.add(a.l4, b.l0)

        return carry(c0, c1, c2, c3, c4)
    }

    /// The square mod p (cheaper than `self * self`: 15 products instead of 25).
    @inline(__always)
    package func squared() -> FieldElement {
        let a0x2 = l0 &* 2
        let a1x2 = l1 &* 2
        let a3x19 = l3 &* 19
        let a4x19 = l4 &* 19
        let a3x38 = l3 &* 38
        let a4x38 = l4 &* 38

        var c0 = Wide(l0, l0)
        c0.add(l1, a4x38)
        c0.add(l2, a3x38)

        var c1 = Wide(a0x2, l1)
        c1.add(l2, a4x38)
        c1.add(l3, a3x19)

        var c2 = Wide(a0x2, l2)
        c2.add(l1, l1)
        c2.add(l3, a4x38)

        var c3 = Wide(a0x2, l3)
        c3.add(a1x2, l2)
        c3.add(l4, a4x19)

        var c4 = Wide(a0x2, l4)
        c4.add(a1x2, l3)
        c4.add(l2, l2)

        return Self.carry(c0, c1, c2, c3, c4)
    }

    /// `self` squared `count` times: self^(2^count).
    @inline(__always)
    package func squared(times count: Int) -> FieldElement {
        var result = self
        for _ in 0..<count { result = result.squared() }
        return result
    }

    /// Carries five 128-bit column sums into a loosely reduced element.
    @inline(__always)
    private static func carry(_ c0: Wide, _ c1: Wide, _ c2: Wide, _ c3: Wide, _ c4: Wide) -> FieldElement {
        let m = mask51
        var c1 = c1, c2 = c2, c3 = c3, c4 = c4
        let r0 = c0.lo & m
        c1.add(c0.shiftedRight51)
        let r1 = c1.lo & m
        c2.add(c1.shiftedRight51)
        let r2 = c2.lo & m
        c3.add(c2.shiftedRight51)
        let r3 = c3.lo & m
        c4.add(c3.shiftedRight51)
        let r4 = c4.lo & m
        var l0 = r0 &+ 19 &* c4.shiftedRight51
        let l1 = r1 &+ (l0 >> 51)
        l0 &= m
        return FieldElement(l0, l1, r2, r3, r4)
    }
}

// MARK: - Powers, inversion and square roots

extension FieldElement {
    /// self^(2^250 − 1) and self^11, the common part of ``inverted()`` and ``pow22523()``.
    @inline(__always)
    private func pow2to250minus1() -> (power: FieldElement, eleventh: FieldElement) {
        let z2 = squared()                                  // z^2
        let z9 = z2.squared(times: 2) * self                // z^9
        let z11 = z9 * z2                                   // z^11
        let z2to5minus1 = z11.squared() * z9                // z^(2^5 − 1) = z^31
        let z2to10minus1 = z2to5minus1.squared(times: 5) * z2to5minus1
        let z2to20minus1 = z2to10minus1.squared(times: 10) * z2to10minus1
        let z2to40minus1 = z2to20minus1.squared(times: 20) * z2to20minus1
        let z2to50minus1 = z2to40minus1.squared(times: 10) * z2to10minus1
        let z2to100minus1 = z2to50minus1.squared(times: 50) * z2to50minus1
        let z2to200minus1 = z2to100minus1.squared(times: 100) * z2to100minus1
        let z2to250minus1 = z2to200minus1.squared(times: 50) * z2to50minus1
        return (z2to250minus1, z11)
    }

    /// The inverse, self^(p − 2) (Fermat); 0 for 0, as XEdDSA's `inv` (§2.1) defines it.
    package func inverted() -> FieldElement {
        // p − 2 = 2^255 − 21 = (2^250 − 1)·2^5 + 11.
        let (power, eleventh) = pow2to250minus1()
        return power.squared(times: 5) * eleventh
    }

    /// self^((p − 5)/8) = self^(2^252 − 3), the exponent of the square-root formulas in
    /// RFC 8032 §5.1.3 and RFC 9496 §4.2.
    package func pow22523() -> FieldElement {
        // 2^252 − 3 = (2^250 − 1)·4 + 1.
        let (power, _) = pow2to250minus1()
        return power.squared(times: 2) * self
    }

    /// The square root of a ratio, `SQRT_RATIO_M1(u, v)` of RFC 9496 §4.2.
    ///
    /// - Returns: `wasSquare` true and `root` = the non-negative √(u/v) when u/v is a
    ///   square (including u = 0, root 0); otherwise `wasSquare` false and `root` =
    ///   the non-negative √(√−1 · u/v). With v = 0 and u ≠ 0 the result is (false, 0).
    ///   Constant time in `u` and `v`.
    package static func sqrtRatio(_ u: FieldElement, _ v: FieldElement) -> (wasSquare: ConstantTime.Choice, root: FieldElement) {
        let v3 = v.squared() * v
        let v7 = v3.squared() * v
        var r = (u * v3) * (u * v7).pow22523()
        let check = v * r.squared()
        let minusU = -u
        let correctSign = equal(check, u)
        let flippedSign = equal(check, minusU)
        let flippedSignTimesI = equal(check, minusU * sqrtMinusOne)
        r = select(r, r * sqrtMinusOne, flippedSign | flippedSignTimesI)
        return (correctSign | flippedSign, r.absolute)
    }
}

// MARK: - Constants

extension FieldElement {
    /// d = −121665/121666, the edwards25519 curve constant (RFC 8032 §5.1).
    package static let edwardsD = FieldElement(
        0x3_4DCA_1359_78A3, 0x1_A828_3B15_6EBD, 0x5_E7A2_6001_C029, 0x7_39C6_63A0_3CBB, 0x5_2036_CEE2_B6FF)
    /// 2·d.
    package static let edwardsD2 = FieldElement(
        0x6_9B94_26B2_F159, 0x3_5050_762A_DD7A, 0x3_CF44_C003_8052, 0x6_738C_C740_7977, 0x2_406D_9DC5_6DFF)
    /// √−1 = 2^((p − 1)/4), the root RFC 8032 §5.1.3 and RFC 9496 use.
    package static let sqrtMinusOne = FieldElement(
        0x6_1B27_4A0E_A0B0, 0x0_D5A5_FC8F_189D, 0x7_EF5E_9CBD_0C60, 0x7_8595_A680_4C9E, 0x2_B832_4804_FC1D)
}

// MARK: - 128-bit accumulator

/// An unsigned 128-bit accumulator built from two words, for the column sums of the field
/// multiplication (Swift's `UInt128` needs macOS 15 / iOS 18).
struct Wide {
    var lo: UInt64
    var hi: UInt64

    /// The product a·b.
    @inline(__always)
    init(_ a: UInt64, _ b: UInt64) {
        let product = a.multipliedFullWidth(by: b)
        lo = product.low
        hi = product.high
    }

    /// Adds the product a·b. The caller guarantees the sum stays below 2^128.
    @inline(__always)
    mutating func add(_ a: UInt64, _ b: UInt64) {
        let product = a.multipliedFullWidth(by: b)
        let (sum, overflow) = lo.addingReportingOverflow(product.low)
        lo = sum
        hi = hi &+ product.high &+ (overflow ? 1 : 0)
    }

    /// Adds a word. The caller guarantees the sum stays below 2^128.
    @inline(__always)
    mutating func add(_ value: UInt64) {
        let (sum, overflow) = lo.addingReportingOverflow(value)
        lo = sum
        hi = hi &+ (overflow ? 1 : 0)
    }

    /// The value shifted right by 51 bits; the caller guarantees it fits in 64 bits.
    @inline(__always)
    var shiftedRight51: UInt64 { (lo >> 51) | (hi << 13) }
}
