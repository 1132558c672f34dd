/// The BCH-protected format and version information words (ISO/IEC 18004 §7.9, §7.10,
/// Annex C and D).
enum QRFormatInformation {
    /// Generator of the (15, 5) BCH code for format information:
    /// x¹⁰ + x⁸ + x⁵ + x⁴ + x² + x + 1.
    static let formatGenerator = 0b101_0011_0111
    /// XOR mask applied to the format word so it is never all zero.
    static let formatMask = 0b101_0100_0001_0010
    /// Generator of the (18, 6) BCH code for version information:
    /// x¹² + x¹¹ + x¹⁰ + x⁹ + x⁸ + x⁵ + x² + 1.
    static let versionGenerator = 0b1_1111_0010_0101

    /// The 15-bit format word for `level` and `mask`: 2 level bits, 3 mask bits, 10 BCH bits,
    /// XORed with ``formatMask``.
    static func formatWord(level: QRErrorCorrectionLevel, mask: QRMask) -> Int {
        let data = level.formatBits << 3 | mask.reference
        return (data << 10 | bchRemainder(data, dataBits: 5, generator: formatGenerator, degree: 10)) ^ formatMask
    }

    /// The 18-bit version word (versions 7…40): 6 version bits and 12 BCH bits.
    static func versionWord(_ version: QRVersion) -> Int {
        version.number << 12 | bchRemainder(version.number, dataBits: 6, generator: versionGenerator, degree: 12)
    }

    /// The remainder of `data · x^degree` divided by `generator` over GF(2).
    static func bchRemainder(_ data: Int, dataBits: Int, generator: Int, degree: Int) -> Int {
        var value = data << degree
        for bit in stride(from: dataBits + degree - 1, through: degree, by: -1) where value & (1 << bit) != 0 {
            value ^= generator << (bit - degree)
        }
        return value
    }
}
