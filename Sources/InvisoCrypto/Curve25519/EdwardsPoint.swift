package import Foundation

/// A point of edwards25519, the twisted Edwards curve −x² + y² = 1 + d·x²·y² over
/// GF(2^255 − 19) with d = −121665/121666 (RFC 8032 §5.1), birationally equivalent to
/// Curve25519 (RFC 7748 §4.1).
///
/// Points are kept in extended coordinates (X : Y : Z : T) with x = X/Z, y = Y/Z and
/// x·y = T/Z (Hisil, Wong, Carter and Dawson, "Twisted Edwards Curves Revisited", 2008),
/// and combined with the complete formulas of RFC 8032 §5.1.4, which have no exceptional
/// cases. Group operations are constant time; so are compression, equality and the
/// scalar multiplications unless their name says `vartime`.
package struct EdwardsPoint: Sendable {
    var x: FieldElement
    var y: FieldElement
    var z: FieldElement
    var t: FieldElement

    init(x: FieldElement, y: FieldElement, z: FieldElement, t: FieldElement) {
        self.x = x
        self.y = y
        self.z = z
        self.t = t
    }

    /// The neutral element (0, 1).
    package static let identity = EdwardsPoint(x: .zero, y: .one, z: .one, t: .zero)

    /// The base point B of RFC 8032 §5.1: y = 4/5 and x even; its encoding is
    /// `5866666666666666666666666666666666666666666666666666666666666666`.
    package static let basePoint = EdwardsPoint(
        x: FieldElement(
            0x6_2D60_8F25_D51A, 0x4_12A4_B4F6_592A, 0x7_5B71_71A4_B31D, 0x1_FF60_5271_18FE, 0x2_1693_6D3C_D6E5),
        y: FieldElement(
            0x6_6666_6666_6658, 0x4_CCCC_CCCC_CCCC, 0x1_9999_9999_9999, 0x3_3333_3333_3333, 0x6_6666_6666_6666),
        z: .one,
        t: FieldElement(
            0x6_8AB3_A5B7_DDA3, 0x0_EEA2_A5EA_DBB, 0x2_AF8D_F483_C27E, 0x3_32B3_7527_4732, 0x6_7875_F0FD_78B7)
    )
}

// MARK: - Encoding

extension EdwardsPoint {
    /// The length of a compressed point in bytes.
    package static let encodedByteCount = 32

    /// Decodes a compressed point following RFC 8032 §5.1.3: the low 255 bits are y
    /// (rejected unless below p), the top bit is the sign (low bit) of x; x is recovered
    /// from x² = (y² − 1)/(d·y² + 1), and the encoding is rejected when that has no square
    /// root, or when x = 0 but the sign bit is 1. Returns `nil` for any invalid input,
    /// including a length other than 32. Variable time in whether it fails.
    package init?(compressed bytes: some ContiguousBytes) {
        guard let point = bytes.withUnsafeBytes({ Self.decompress($0) }) else { return nil }
        self = point
    }

    private static func decompress(_ bytes: UnsafeRawBufferPointer) -> EdwardsPoint? {
        guard bytes.count == encodedByteCount, let y = FieldElement(canonicalBytes: bytes) else { return nil }
        let sign = ConstantTime.Choice(bit: UInt64(bytes[31] >> 7))
        return decompress(y: y, sign: sign)
    }

    /// Recovers the point with the given y whose x has the given sign; `nil` when no such
    /// point exists (x² is not a square, or x = 0 with sign 1). RFC 8032 §5.1.3 steps 2–4.
    package static func decompress(y: FieldElement, sign: ConstantTime.Choice) -> EdwardsPoint? {
        let ySquared = y.squared()
        let u = ySquared - .one
        let v = ySquared * .edwardsD + .one
        let (wasSquare, root) = FieldElement.sqrtRatio(u, v)
        guard wasSquare.isTrue else { return nil }
        // root is the non-negative square root; x = 0 has only the non-negative form.
        if root.isZero.isTrue && sign.isTrue { return nil }
        var x = root
        x.conditionalNegate(sign)
        return EdwardsPoint(x: x, y: y, z: .one, t: x * y)
    }

    /// The 32-byte compressed encoding (RFC 8032 §5.1.2): canonical y with the sign of x in
    /// the top bit.
    package var compressed: [UInt8] {
        let zInverse = z.inverted()
        let affineX = x * zInverse
        let affineY = y * zInverse
        var out = affineY.bytes
        out[31] |= UInt8(truncatingIfNeeded: affineX.isNegative.bit << 7)
        return out
    }
}

// MARK: - Group law

extension EdwardsPoint {
    /// Point addition with the complete formulas of RFC 8032 §5.1.4 (a = −1).
    @inline(__always)
    package static func + (p: EdwardsPoint, q: EdwardsPoint) -> EdwardsPoint {
        p + CachedPoint(q)
    }

    /// Point subtraction.
    @inline(__always)
    package static func - (p: EdwardsPoint, q: EdwardsPoint) -> EdwardsPoint {
        p + -CachedPoint(q)
    }

    /// The inverse point (−x, y).
    @inline(__always)
    package static prefix func - (p: EdwardsPoint) -> EdwardsPoint {
        EdwardsPoint(x: -p.x, y: p.y, z: p.z, t: -p.t)
    }

    /// Addition of a point in cached form (see ``CachedPoint``): RFC 8032 §5.1.4 with the
    /// sums, differences and 2·d·T of the second operand precomputed.
    @inline(__always)
    static func + (p: EdwardsPoint, q: CachedPoint) -> EdwardsPoint {
        let a = (p.y - p.x) * q.yMinusX
        let b = (p.y + p.x) * q.yPlusX
        let c = p.t * q.t2d
        let zz = p.z * q.z
        let d = zz + zz
        let e = b - a
        let f = d - c
        let g = d + c
        let h = b + a
        return EdwardsPoint(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// The point added to itself, with the dedicated doubling formulas of RFC 8032 §5.1.4.
    @inline(__always)
    package func doubled() -> EdwardsPoint {
        let a = x.squared()
        let b = y.squared()
        let zSquared = z.squared()
        let c = zSquared + zSquared
        let h = a + b
        let e = h - (x + y).squared()
        let g = a - b
        let f = c + g
        return EdwardsPoint(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// [8]P: multiplication by the cofactor.
    package func multipliedByCofactor() -> EdwardsPoint {
        doubled().doubled().doubled()
    }

    /// True when the point is the neutral element.
    package var isIdentity: ConstantTime.Choice {
        // x = 0 and y = 1, i.e. X = 0 and Y = Z.
        x.isZero & FieldElement.equal(y, z)
    }

    /// Returns `b` when `choice` is true and `a` otherwise, without branching.
    @inline(__always)
    package static func select(_ a: EdwardsPoint, _ b: EdwardsPoint, _ choice: ConstantTime.Choice) -> EdwardsPoint {
        EdwardsPoint(
            x: .select(a.x, b.x, choice), y: .select(a.y, b.y, choice),
            z: .select(a.z, b.z, choice), t: .select(a.t, b.t, choice))
    }
}

// MARK: - Equatable (constant time)

extension EdwardsPoint: Equatable {
    /// Whether two points are the same group element (X₁Z₂ = X₂Z₁ and Y₁Z₂ = Y₂Z₁, as in
    /// RFC 8032's reference `point_equal`), in constant time.
    package static func == (lhs: EdwardsPoint, rhs: EdwardsPoint) -> Bool {
        let sameX = FieldElement.equal(lhs.x * rhs.z, rhs.x * lhs.z)
        let sameY = FieldElement.equal(lhs.y * rhs.z, rhs.y * lhs.z)
        return (sameX & sameY).isTrue
    }
}

// MARK: - Cached form

/// A point prepared as the second operand of an addition: (Y + X, Y − X, Z, 2·d·T).
/// Negation just swaps the first two and negates the last.
struct CachedPoint: Sendable {
    var yPlusX: FieldElement
    var yMinusX: FieldElement
    var z: FieldElement
    var t2d: FieldElement

    @inline(__always)
    init(yPlusX: FieldElement, yMinusX: FieldElement, z: FieldElement, t2d: FieldElement) {
        self.yPlusX = yPlusX
        self.yMinusX = yMinusX
        self.z = z
        self.t2d = t2d
    }

    @inline(__always)
    init(_ p: EdwardsPoint) {
        self.init(yPlusX: p.y + p.x, yMinusX: p.y - p.x, z: p.z, t2d: p.t * .edwardsD2)
    }

    /// The neutral element in cached form.
    static let identity = CachedPoint(yPlusX: .one, yMinusX: .one, z: .one, t2d: .zero)

    @inline(__always)
    static prefix func - (q: CachedPoint) -> CachedPoint {
        CachedPoint(yPlusX: q.yMinusX, yMinusX: q.yPlusX, z: q.z, t2d: -q.t2d)
    }

    /// Replaces `self` with `other` when `choice` is true, without branching.
    @inline(__always)
    mutating func conditionalAssign(_ other: CachedPoint, _ choice: ConstantTime.Choice) {
        yPlusX = .select(yPlusX, other.yPlusX, choice)
        yMinusX = .select(yMinusX, other.yMinusX, choice)
        z = .select(z, other.z, choice)
        t2d = .select(t2d, other.t2d, choice)
    }

    /// Negates in place when `choice` is true, without branching.
    @inline(__always)
    mutating func conditionalNegate(_ choice: ConstantTime.Choice) {
        FieldElement.conditionalSwap(&yPlusX, &yMinusX, choice)
        t2d.conditionalNegate(choice)
    }
}
