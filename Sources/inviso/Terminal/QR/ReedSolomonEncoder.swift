/// Reed–Solomon error-correction codewords for one QR block (ISO/IEC 18004 §7.5.2).
///
/// The generator polynomial for `n` codewords is g(x) = (x − α⁰)(x − α¹)…(x − αⁿ⁻¹); the
/// error-correction codewords are the remainder of data(x) · xⁿ divided by g(x).
struct ReedSolomonEncoder: Sendable {
    /// The field the code works in.
    let field: GaloisField256
    /// The generator's coefficients, highest degree first, without the leading 1
    /// (so `generator.count` is the number of error-correction codewords).
    let generator: [UInt8]

    /// An encoder producing `degree` error-correction codewords per block.
    ///
    /// - Parameters:
    ///   - degree: The number of error-correction codewords, 1…255.
    ///   - field: The field (built once and shared).
    init(degree: Int, field: GaloisField256 = GaloisField256()) {
        precondition((1...255).contains(degree), "Reed–Solomon degree out of range")
        self.field = field
        // Start from g(x) = 1 and multiply by (x + αⁱ) for i = 0…degree−1, coefficients
        // kept highest degree first, including the leading 1.
        var polynomial: [UInt8] = [1]
        for i in 0..<degree {
            let root = field.power(i)
            var next = [UInt8](repeating: 0, count: polynomial.count + 1)
            for (index, coefficient) in polynomial.enumerated() {
                next[index] ^= coefficient  // · x
                next[index + 1] ^= field.multiply(coefficient, root)  // · αⁱ
            }
            polynomial = next
        }
        self.generator = Array(polynomial.dropFirst())
    }

    /// The full generator polynomial, highest degree first, leading 1 included.
    var generatorPolynomial: [UInt8] { [1] + generator }

    /// The error-correction codewords for `data` (one block).
    func remainder(of data: some Sequence<UInt8>) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            // Synthetic division: shift in the next data byte, subtract factor · g(x).
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            if factor != 0 {
                for index in generator.indices {
                    remainder[index] ^= field.multiply(generator[index], factor)
                }
            }
        }
        return remainder
    }
}
