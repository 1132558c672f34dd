/// Arithmetic in GF(2⁸) as QR codes use it (ISO/IEC 18004 §7.5.2): elements are bytes,
/// addition is XOR, and multiplication is modulo the primitive polynomial
/// x⁸ + x⁴ + x³ + x² + 1 (`0x11D`), whose root α = 2 generates every non-zero element.
struct GaloisField256: Sendable {
    /// The primitive polynomial, `x⁸ + x⁴ + x³ + x² + 1`.
    static let primitivePolynomial = 0x11D

    /// `exp[i] = αⁱ` for `i` in `0..<255`.
    let exp: [UInt8]
    /// `log[x]` = the `i` with `αⁱ = x`, for `x` in `1...255` (`log[0]` is unused).
    let log: [Int]

    /// Builds the exponent and logarithm tables.
    init() {
        var exp = [UInt8](repeating: 0, count: 255)
        var log = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exp[power] = UInt8(value)
            log[value] = power
            value <<= 1
            if value & 0x100 != 0 { value ^= Self.primitivePolynomial }
        }
        self.exp = exp
        self.log = log
    }

    /// `a · b` in the field.
    func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return exp[(log[Int(a)] + log[Int(b)]) % 255]
    }

    /// αⁿ for any `n ≥ 0`.
    func power(_ n: Int) -> UInt8 {
        exp[n % 255]
    }
}
