/// A raw DEFLATE (RFC 1951) decoder, in Swift, with a hard output limit.
///
/// BitChat compresses payloads as raw DEFLATE with no zlib header or checksum (Apple's
/// `COMPRESSION_ZLIB`; Android's `Deflater(level, nowrap = true)`), so this decodes exactly
/// that: stored, fixed-Huffman and dynamic-Huffman blocks. It only decodes; Inviso never
/// compresses.
///
/// Against decompression bombs the output never grows past `limit`: a stream that would
/// expand further stops with ``MeshWireError/decompressedSizeExceeded`` before the byte
/// that crosses the limit is written. Every malformed stream ends in a ``MeshWireError``:
/// ``MeshWireError/truncated`` when the input ends inside the stream,
/// ``MeshWireError/trailingBytes`` when whole bytes follow the final block, and
/// ``MeshWireError/malformedCompressedData`` for everything else (reserved block type,
/// stored length check, over-subscribed or incomplete codes, invalid symbols, distances
/// reaching before the start of the output). The decoding method follows the structure of
/// RFC 1951 §3.2 with canonical codes decoded bit by bit, as in zlib's `contrib/puff`.
package enum Inflate {
    /// Decodes the raw DEFLATE stream `input`, producing at most `limit` bytes.
    ///
    /// - Throws: ``MeshWireError`` as described on ``Inflate``.
    package static func decompress(_ input: some Collection<UInt8>, limit: Int) throws(MeshWireError) -> [UInt8] {
        var reader = WireReader(input)
        var decoder = Decoder(input: reader.rest(), limit: max(0, limit))
        try decoder.run()
        return decoder.output
    }
}

// MARK: - Decoder

extension Inflate {
    fileprivate static let maxBits = 15
    fileprivate static let maxLiteralLengthCodes = 286
    fileprivate static let maxDistanceCodes = 30
    fileprivate static let fixedLiteralLengthCodes = 288

    fileprivate static let lengthBase: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    fileprivate static let lengthExtra: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    fileprivate static let distanceBase: [Int] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    fileprivate static let distanceExtra: [Int] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    /// The order in which code-length code lengths are sent (RFC 1951 §3.2.7).
    fileprivate static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// The fixed literal/length and distance codes (RFC 1951 §3.2.6).
    fileprivate static let fixedCodes: (literalLength: Huffman, distance: Huffman) = {
        var lengths = [Int](repeating: 8, count: fixedLiteralLengthCodes)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        // Both fixed codes are built from valid tables; the distance code is incomplete
        // by design (30 of 32 five-bit codes), which decoding handles.
        let distanceLengths = [Int](repeating: 5, count: maxDistanceCodes)
        return (Huffman.build(lengths[...]).code, Huffman.build(distanceLengths[...]).code)
    }()

    /// A canonical Huffman code as symbol counts per length plus symbols in code order.
    fileprivate struct Huffman {
        var counts = [Int](repeating: 0, count: Inflate.maxBits + 1)
        var symbols: [Int]

        /// Builds the code for `lengths` (one entry per symbol, 0 = unused). `left` is 0 for
        /// a complete code, negative if over-subscribed, positive if incomplete.
        static func build(_ lengths: ArraySlice<Int>) -> (code: Huffman, left: Int) {
            var code = Huffman(symbols: [Int](repeating: 0, count: lengths.count))
            for length in lengths { code.counts[length] += 1 }
            if code.counts[0] == lengths.count { return (code, 0) }
            var left = 1
            for length in 1...Inflate.maxBits {
                left <<= 1
                left -= code.counts[length]
                if left < 0 { return (code, left) }
            }
            var offsets = [Int](repeating: 0, count: Inflate.maxBits + 1)
            for length in 1..<Inflate.maxBits { offsets[length + 1] = offsets[length] + code.counts[length] }
            for (symbol, length) in lengths.enumerated() where length != 0 {
                code.symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
            return (code, left)
        }
    }

    fileprivate struct Decoder {
        let input: ArraySlice<UInt8>
        let limit: Int
        var position: Int
        var bitBuffer: UInt32 = 0
        var bitCount = 0
        var output: [UInt8] = []

        init(input: ArraySlice<UInt8>, limit: Int) {
            self.input = input
            self.limit = limit
            position = input.startIndex
            output.reserveCapacity(min(limit, input.count &* 4 &+ 64))
        }

        mutating func run() throws(MeshWireError) {
            var isFinal = false
            while !isFinal {
                isFinal = try bits(1) == 1
                switch try bits(2) {
                case 0: try storedBlock()
                case 1: try huffmanBlock(Inflate.fixedCodes.literalLength, Inflate.fixedCodes.distance)
                case 2: try dynamicBlock()
                default: throw MeshWireError(.malformedCompressedData, "reserved block type")
                }
            }
            // Bits left in the final byte are padding; whole bytes after it are not.
            guard position == input.endIndex else { throw MeshWireError(.trailingBytes, "after the final DEFLATE block") }
        }

        /// The next `count` (0…16) bits, least significant first.
        mutating func bits(_ count: Int) throws(MeshWireError) -> Int {
            while bitCount < count {
                guard position < input.endIndex else { throw MeshWireError(.truncated, "DEFLATE stream") }
                bitBuffer |= UInt32(input[position]) << UInt32(bitCount)
                position += 1
                bitCount += 8
            }
            let value = Int(bitBuffer & ((1 << UInt32(count)) - 1))
            bitBuffer >>= UInt32(count)
            bitCount -= count
            return value
        }

        mutating func storedBlock() throws(MeshWireError) {
            // Fewer than 8 bits are ever buffered, so this drops the rest of the current byte.
            bitBuffer = 0
            bitCount = 0
            guard input.endIndex - position >= 4 else { throw MeshWireError(.truncated, "stored block header") }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
            position += 4
            guard length == ~complement & 0xFFFF else {
                throw MeshWireError(.malformedCompressedData, "stored block length check")
            }
            guard input.endIndex - position >= length else { throw MeshWireError(.truncated, "stored block") }
            guard length <= limit - output.count else { throw MeshWireError(.decompressedSizeExceeded) }
            output.append(contentsOf: input[position..<(position + length)])
            position += length
        }

        mutating func decode(_ code: Huffman) throws(MeshWireError) -> Int {
            var value = 0
            var first = 0
            var index = 0
            for length in 1...Inflate.maxBits {
                value |= try bits(1)
                let count = code.counts[length]
                if value - count < first { return code.symbols[index + (value - first)] }
                index += count
                first += count
                first <<= 1
                value <<= 1
            }
            throw MeshWireError(.malformedCompressedData, "invalid Huffman code")
        }

        mutating func huffmanBlock(_ literalLength: Huffman, _ distance: Huffman) throws(MeshWireError) {
            while true {
                var symbol = try decode(literalLength)
                if symbol < 256 {
                    guard output.count < limit else { throw MeshWireError(.decompressedSizeExceeded) }
                    output.append(UInt8(truncatingIfNeeded: symbol))
                    continue
                }
                if symbol == 256 { return }
                symbol -= 257
                guard symbol < 29 else { throw MeshWireError(.malformedCompressedData, "invalid length symbol") }
                let length = Inflate.lengthBase[symbol] + (try bits(Inflate.lengthExtra[symbol]))
                let distanceSymbol = try decode(distance)
                guard distanceSymbol < 30 else {
                    throw MeshWireError(.malformedCompressedData, "invalid distance symbol")
                }
                let back = Inflate.distanceBase[distanceSymbol] + (try bits(Inflate.distanceExtra[distanceSymbol]))
                guard back <= output.count else {
                    throw MeshWireError(.malformedCompressedData, "distance before the start of the output")
                }
                guard length <= limit - output.count else { throw MeshWireError(.decompressedSizeExceeded) }
                var from = output.count - back
                for _ in 0..<length {
                    output.append(output[from])
                    from += 1
                }
            }
        }

        mutating func dynamicBlock() throws(MeshWireError) {
            let literalLengthCount = try bits(5) + 257
            let distanceCount = try bits(5) + 1
            let codeLengthCount = try bits(4) + 4
            guard literalLengthCount <= Inflate.maxLiteralLengthCodes, distanceCount <= Inflate.maxDistanceCodes else {
                throw MeshWireError(.malformedCompressedData, "too many codes")
            }
            var lengths = [Int](repeating: 0, count: 19)
            for index in 0..<codeLengthCount { lengths[Inflate.codeLengthOrder[index]] = try bits(3) }
            let (codeLengthCode, codeLengthLeft) = Huffman.build(lengths[...])
            guard codeLengthLeft == 0 else { throw MeshWireError(.malformedCompressedData, "incomplete code-length code") }

            let total = literalLengthCount + distanceCount
            lengths = [Int](repeating: 0, count: total)
            var index = 0
            while index < total {
                let symbol = try decode(codeLengthCode)
                if symbol < 16 {
                    lengths[index] = symbol
                    index += 1
                    continue
                }
                var value = 0
                let repeatCount: Int
                switch symbol {
                case 16:
                    guard index > 0 else { throw MeshWireError(.malformedCompressedData, "repeat with no previous length") }
                    value = lengths[index - 1]
                    repeatCount = 3 + (try bits(2))
                case 17: repeatCount = 3 + (try bits(3))
                default: repeatCount = 11 + (try bits(7))
                }
                guard index + repeatCount <= total else {
                    throw MeshWireError(.malformedCompressedData, "code lengths overflow")
                }
                for _ in 0..<repeatCount {
                    lengths[index] = value
                    index += 1
                }
            }
            guard lengths[256] != 0 else { throw MeshWireError(.malformedCompressedData, "no end-of-block code") }

            let literalLength = Huffman.build(lengths[0..<literalLengthCount])
            // An incomplete code is allowed only when it is a single code of one bit.
            guard literalLength.left == 0
                || (literalLength.left > 0 && literalLengthCount == literalLength.code.counts[0] + literalLength.code.counts[1])
            else { throw MeshWireError(.malformedCompressedData, "bad literal/length code") }
            let distance = Huffman.build(lengths[literalLengthCount..<total])
            guard distance.left == 0
                || (distance.left > 0 && distanceCount == distance.code.counts[0] + distance.code.counts[1])
            else { throw MeshWireError(.malformedCompressedData, "bad distance code") }
            try huffmanBlock(literalLength.code, distance.code)
        }
    }
}
