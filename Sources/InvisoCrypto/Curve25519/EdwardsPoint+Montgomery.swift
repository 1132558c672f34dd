// The birational map between Curve25519 (Montgomery, coordinate u) and edwards25519
// (RFC 7748 §4.1): (u, v) = ((1 + y)/(1 − y), √−486664 · u/x) and
// (x, y) = (√−486664 · u/v, (u − 1)/(u + 1)). X25519 and XEdDSA use only u and y; the
// sign of x is not determined by u and has to come from elsewhere.

extension FieldElement {
    /// The Edwards y of the Montgomery u: y = (u − 1)/(u + 1) (XEdDSA §2.3 `u_to_y`).
    ///
    /// - Returns: y, and `isValid` false for u = −1, the one u with no Edwards image
    ///   (there y would be (u − 1)·inv(0) = 0, which is not the right point). Constant time.
    package func edwardsY() -> (y: FieldElement, isValid: ConstantTime.Choice) {
        let denominator = self + .one
        return ((self - .one) * denominator.inverted(), !denominator.isZero)
    }
}

extension EdwardsPoint {
    /// The Montgomery u of this point: u = (1 + y)/(1 − y) = (Z + Y)/(Z − Y).
    ///
    /// The identity (y = 1) gives u = 0, matching X25519, which encodes the point at
    /// infinity as 0. Constant time.
    package var montgomeryU: FieldElement {
        (z + y) * (z - y).inverted()
    }

    /// The point whose Montgomery u is `u` and whose x has the given sign (XEdDSA §2.3
    /// `convert_mont` forces sign 0; libsignal's verifier takes it from the signature).
    ///
    /// Returns `nil` when u = −1, or when u is not the coordinate of a curve point (it
    /// lies on the quadratic twist), or when x = 0 is asked for with sign 1 (the
    /// RFC 8032 §5.1.3 rule; that is the point u = 0). Variable time in whether it fails.
    package init?(montgomeryU u: FieldElement, sign: ConstantTime.Choice) {
        let (y, isValid) = u.edwardsY()
        guard isValid.isTrue, let point = EdwardsPoint.decompress(y: y, sign: sign) else { return nil }
        self = point
    }
}
