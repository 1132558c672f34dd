// Scalar multiplication with signed radix-16 digits.
//
// A 255-bit integer n = Σ nᵢ·16^i (i = 0...63, nibbles nᵢ ∈ 0...15) is rewritten as
// Σ eᵢ·16^i with digits eᵢ ∈ −8...7 (the last one in 0...8) by carrying 1 into the next
// nibble whenever a nibble is 8 or more. Each digit then selects one of [1]P ... [8]P,
// negated when the digit is negative, so a table of eight points serves all sixteen
// values. Table entries are read by scanning the whole row with masked selects, so the
// memory access pattern does not depend on the digit.

extension EdwardsPoint {
    /// [n]B for the base point B, constant time.
    ///
    /// Uses a table of [j·16^i]B (i = 0...63, j = 1...8), built once per process on first
    /// use (about 4,600 field multiplications, 80 KiB), so the product costs 64 additions
    /// and no doublings.
    package static func multiplyBase(_ scalar: Scalar25519) -> EdwardsPoint {
        scalar.withUnsafeBytes { multiplyBase(integer: $0) }
    }

    /// [n]B where n is any 32-byte little-endian integer below 2^255 (for instance an
    /// RFC 8032 clamped secret scalar, or the group order itself), constant time.
    ///
    /// - Precondition: 32 bytes with the top bit clear.
    package static func multiplyBase(integer bytes: UnsafeRawBufferPointer) -> EdwardsPoint {
        let table = BaseTable.precomputed
        return withSignedRadix16Digits(bytes) { digits in
            var accumulator = EdwardsPoint.identity
            for position in 0..<64 {
                accumulator = accumulator + table.lookup(position: position, digit: digits[position])
            }
            return accumulator
        }
    }

    /// [n]P for this point, constant time (a fixed 4-bit signed window: 252 doublings and
    /// 64 additions).
    package func multiplied(by scalar: Scalar25519) -> EdwardsPoint {
        scalar.withUnsafeBytes { multiplied(byInteger: $0) }
    }

    /// [n]P where n is any 32-byte little-endian integer below 2^255, constant time.
    ///
    /// - Precondition: 32 bytes with the top bit clear.
    package func multiplied(byInteger bytes: UnsafeRawBufferPointer) -> EdwardsPoint {
        var multiples = [CachedPoint](repeating: .identity, count: 8)
        var multiple = self
        multiples[0] = CachedPoint(self)
        for index in 1..<8 {
            multiple = multiple + multiples[0]
            multiples[index] = CachedPoint(multiple)
        }
        return Self.withSignedRadix16Digits(bytes) { digits in
            var accumulator = EdwardsPoint.identity
            for position in stride(from: 63, through: 0, by: -1) {
                accumulator = accumulator.doubled().doubled().doubled().doubled()
                accumulator = accumulator + Self.lookup(multiples, 0, digit: digits[position])
            }
            return accumulator
        }
    }

    /// [a]A + [b]B for public scalars, as Ed25519 verification needs (B is the base point).
    ///
    /// Named `vartime` because callers may only pass public values; the current
    /// implementation happens to be constant time (one fixed-window multiplication plus one
    /// fixed-base table multiplication), which costs little since doublings dominate.
    package static func vartimeDoubleScalarMultiplyBase(
        _ a: Scalar25519, _ point: EdwardsPoint, _ b: Scalar25519
    ) -> EdwardsPoint {
        point.multiplied(by: a) + multiplyBase(b)
    }

    // MARK: Digits and table lookup

    /// Calls `body` with the 64 signed radix-16 digits of a 32-byte little-endian integer
    /// below 2^255, in stack memory that is zeroed afterwards (digits of secret scalars
    /// are secret).
    private static func withSignedRadix16Digits<Result>(
        _ bytes: UnsafeRawBufferPointer, _ body: (UnsafeMutableBufferPointer<Int8>) -> Result
    ) -> Result {
        precondition(bytes.count == 32 && bytes[31] & 0x80 == 0, "scalar must be 32 bytes below 2^255")
        return withUnsafeTemporaryAllocation(of: Int8.self, capacity: 64) { digits in
            for index in 0..<32 {
                digits[2 * index] = Int8(bytes[index] & 0x0f)
                digits[2 * index + 1] = Int8(bytes[index] >> 4)
            }
            // Carry so that every digit but the last lies in −8...7; the last nibble is at
            // most 7 (top bit clear), so with the carry it is at most 8.
            for index in 0..<63 {
                let carry = (digits[index] &+ 8) >> 4
                digits[index] &-= carry << 4
                digits[index + 1] &+= carry
            }
            let result = body(digits)
            SecureWipe.wipe(UnsafeMutableRawBufferPointer(digits))
            return result
        }
    }

    /// The entry for `digit` (−8...8) of the eight multiples [1]P ... [8]P stored at
    /// `table[offset ..< offset + 8]`: every entry is read, the right one kept by mask.
    @inline(__always)
    fileprivate static func lookup(_ table: [CachedPoint], _ offset: Int, digit: Int8) -> CachedPoint {
        let wide = UInt64(bitPattern: Int64(digit))
        let negative = wide >> 63
        let magnitude = (wide ^ (0 &- negative)) &+ negative
        var result = CachedPoint.identity
        for index in 0..<8 {
            result.conditionalAssign(table[offset + index], .equal(magnitude, UInt64(index + 1)))
        }
        result.conditionalNegate(ConstantTime.Choice(bit: negative))
        return result
    }
}

// MARK: - Base point table

/// [j·16^i]B for i = 0...63 and j = 1...8, in cached form, row i at entries 8i ..< 8i + 8.
private struct BaseTable: Sendable {
    let entries: [CachedPoint]

    /// Built on first use; Swift initialises global and static `let`s exactly once, with
    /// the required synchronisation.
    static let precomputed = BaseTable()

    private init() {
        var entries: [CachedPoint] = []
        entries.reserveCapacity(64 * 8)
        var rowBase = EdwardsPoint.basePoint            // 16^i · B
        for _ in 0..<64 {
            let cachedBase = CachedPoint(rowBase)
            var multiple = rowBase
            entries.append(cachedBase)
            for _ in 2...8 {
                multiple = multiple + cachedBase
                entries.append(CachedPoint(multiple))
            }
            rowBase = multiple.doubled()                // 2 · 8 · 16^i · B = 16^(i+1) · B
        }
        self.entries = entries
    }

    @inline(__always)
    func lookup(position: Int, digit: Int8) -> CachedPoint {
        EdwardsPoint.lookup(entries, position * 8, digit: digit)
    }
}
