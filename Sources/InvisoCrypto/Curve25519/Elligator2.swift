/// The Elligator 2 map from a field element to a point of Curve25519, as RFC 9380 §6.7.1
/// defines it (`map_to_curve_elligator2` with J = 486662, K = 1 and Z = 2, the suite's
/// non-square), with the RFC's sign rule for v.
///
/// The map is what CPace's `calculate_generator` uses to turn a hash into a generator (see
/// ``CPace``). It is not a full `hash_to_curve`: there is no `expand_message`, no
/// `hash_to_field` and no cofactor clearing, so the point may have small order for rare
/// inputs (r = 0, for one).
public enum Elligator2 {
    /// A point of Curve25519 v² = u³ + 486662·u² + u in affine Montgomery coordinates.
    public struct Point: Sendable, Hashable {
        /// The u-coordinate, 32 bytes little-endian and fully reduced: the form X25519 uses.
        public let u: [UInt8]
        /// The v-coordinate, 32 bytes little-endian and fully reduced.
        public let v: [UInt8]

        /// Wraps two encoded coordinates.
        package init(u: [UInt8], v: [UInt8]) {
            self.u = u
            self.v = v
        }
    }

    /// Maps a field element to a point of Curve25519 (RFC 9380 §6.7.1).
    ///
    /// - Parameter fieldElement: 32 bytes, read as RFC 7748's `decodeUCoordinate(_, 255)`
    ///   does: little-endian, bit 255 ignored, values from p up reduced mod p.
    /// - Returns: the point (u, v), or `nil` when `fieldElement` is not 32 bytes. The
    ///   arithmetic runs in constant time; the returned arrays are ordinary (unwiped) memory.
    public static func mapToCurve25519(_ fieldElement: [UInt8]) -> Point? {
        guard fieldElement.count == FieldElement.encodedByteCount else { return nil }
        let (u, v) = map(FieldElement(bytes: fieldElement))
        return Point(u: u.bytes, v: v.bytes)
    }

    /// The map on field elements: returns (u, v) with v² = u³ + A·u² + u. Constant time.
    package static func map(_ r: FieldElement) -> (u: FieldElement, v: FieldElement) {
        let a = FieldElement.montgomeryA
        let minusA = -a
        // 1. x1 = −A · inv0(1 + Z·r²). 2. If x1 = 0 then x1 = −A. (1 + 2r² is never 0 here,
        // as −1/2 is not a square mod p, but the step is kept as the RFC writes it.)
        var x1 = minusA * (FieldElement.ellipticZ * r.squared() + .one).inverted()
        x1 = FieldElement.select(x1, minusA, x1.isZero)
        // 3–5. g(x) = x³ + A·x² + x for x1 and x2 = −x1 − A.
        let gx1 = ((x1 + a) * x1 + .one) * x1
        let x2 = minusA - x1
        let gx2 = ((x2 + a) * x2 + .one) * x2
        // 6–7. If g(x1) is square: x1 with the odd root (sgn0 = 1); else x2 with the even
        // one. sqrtRatio returns the even (non-negative) root.
        let (gx1IsSquare, root1) = FieldElement.sqrtRatio(gx1, .one)
        let (_, root2) = FieldElement.sqrtRatio(gx2, .one)
        let u = FieldElement.select(x2, x1, gx1IsSquare)
        let v = FieldElement.select(root2, -root1, gx1IsSquare)
        // 8–9. K = 1: s = x, t = y.
        return (u, v)
    }
}

// MARK: - Curve25519 constants

extension FieldElement {
    /// The length of an encoded field element in bytes.
    package static let encodedByteCount = 32
    /// A = 486662, the Montgomery coefficient of Curve25519 (RFC 7748 §4.1).
    package static let montgomeryA = FieldElement(486_662)
    /// Z = 2, the Elligator 2 non-square of the curve25519 suites (RFC 9380 §8.5).
    package static let ellipticZ = FieldElement(2)
}
