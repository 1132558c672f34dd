/// Turns bytes into the final codeword sequence of a symbol: byte-mode bit stream, padding,
/// blocks with Reed–Solomon error correction, and interleaving (ISO/IEC 18004 §7.4–§7.6).
enum QRCodewords {
    /// The data codewords for `data` in byte mode: mode indicator `0100`, the character
    /// count, the bytes, a terminator of up to four zero bits, zero bits to the byte
    /// boundary, then the pad codewords `0xEC`, `0x11` alternately.
    ///
    /// - Precondition: `data` fits (`data.count ≤ version.byteCapacity(level)`).
    static func dataCodewords(_ data: [UInt8], version: QRVersion, level: QRErrorCorrectionLevel) -> [UInt8] {
        let capacity = version.dataCodewords(level)
        precondition(data.count <= version.byteCapacity(level), "data does not fit this version")
        var bits = QRBitWriter()
        bits.append(0b0100, count: 4)
        bits.append(data.count, count: version.byteModeCountBits)
        for byte in data { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// The data codewords split into blocks (§7.5.2, Table 9): the short blocks first, then
    /// the blocks one data codeword longer, each followed by its error-correction codewords
    /// in the result's second array.
    static func blocks(
        _ dataCodewords: [UInt8], version: QRVersion, level: QRErrorCorrectionLevel,
        field: GaloisField256 = GaloisField256()
    ) -> [(data: [UInt8], ec: [UInt8])] {
        let blockCount = version.blockCount(level)
        let ecLength = version.ecCodewordsPerBlock(level)
        let total = version.totalCodewords
        let shortBlocks = blockCount - total % blockCount
        let shortDataLength = total / blockCount - ecLength
        let encoder = ReedSolomonEncoder(degree: ecLength, field: field)
        var result: [(data: [UInt8], ec: [UInt8])] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlocks ? 0 : 1)
            let data = Array(dataCodewords[offset..<offset + length])
            offset += length
            result.append((data, encoder.remainder(of: data)))
        }
        return result
    }

    /// The symbol's codeword sequence (§7.6): the data codewords interleaved across blocks,
    /// one from each block in turn, then the error-correction codewords the same way.
    static func interleaved(_ data: [UInt8], version: QRVersion, level: QRErrorCorrectionLevel) -> [UInt8] {
        let blocks = blocks(dataCodewords(data, version: version, level: level), version: version, level: level)
        var result: [UInt8] = []
        result.reserveCapacity(version.totalCodewords)
        let longest = blocks.map(\.data.count).max() ?? 0
        for index in 0..<longest {
            for block in blocks where index < block.data.count { result.append(block.data[index]) }
        }
        for index in 0..<version.ecCodewordsPerBlock(level) {
            for block in blocks { result.append(block.ec[index]) }
        }
        return result
    }
}
