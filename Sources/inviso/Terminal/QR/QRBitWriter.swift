/// Accumulates bits most significant first and packs them into bytes.
struct QRBitWriter: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Bits written so far.
    private(set) var count = 0

    /// Appends the low `count` bits of `value`, most significant first.
    mutating func append(_ value: Int, count bitCount: Int) {
        for shift in stride(from: bitCount - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}
