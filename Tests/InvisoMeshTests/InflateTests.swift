import InvisoMesh
import InvisoTesting
import Testing

/// Our raw DEFLATE decoder against streams produced by zlib.
///
/// Every stream below was generated with Python 3 zlib.compressobj(wbits=-15) (raw DEFLATE,
/// as BitChat sends), level and strategy as noted; the malformed ones were written bit by
/// bit and each is rejected by Python's zlib.decompress(…, -15) with the error named.
@Suite("Inflate (RFC 1951)")
struct InflateTests {
    struct Stream: Sendable, CustomTestStringConvertible {
        let name: String
        let hex: String
        let expected: [UInt8]
        let blockType: Int
        var testDescription: String { name }
    }

    /// 518 bytes, level 0: one stored block.
    static let storedInput = Array(0..<256).map { UInt8($0) } + Array(0..<256).map { UInt8($0) } + Array("inviso".utf8)
    /// Level 9, strategy Z_FIXED: one fixed-Huffman block with back-references.
    static let fixedInput = Array("hello hello hello mesh".utf8)
    /// Level 9, default strategy: one dynamic-Huffman block.
    static let dynamicInput = Array(
        (0..<12).map { "mesh packet \($0) relays via peer \($0 * 7 % 13); ttl \($0 % 8). " }.joined().utf8)
    /// Level 9 with a Z_FULL_FLUSH after 300 × "A": a fixed block, an empty stored block, a final fixed block.
    static let multiInput = [UInt8](repeating: 0x41, count: 300) + [UInt8](repeating: 0x42, count: 50) + Array("xyz".utf8)

    static let streams: [Stream] = [
        Stream(name: "stored", hex: "010602f9fd" + ([UInt8](0...255) + [UInt8](0...255)).hex + Array("inviso".utf8).hex, expected: storedInput, blockType: 0),
        Stream(name: "fixed", hex: "cb48cdc9c957c8402273538b3300", expected: fixedInput, blockType: 1),
        Stream(
            name: "dynamic",
            hex: "6dd15b0ac2400c85e1ad9c15c8642e9d1657334840b185d20e82bbf721228633ef1f81fc67d3f38ebddd9eda1170e8dade275e"
                + "8f865df540b8a2f715e182edcf09b96a4ebc8be4c45cf42e919bcd25ef32b9682e7b57c82de68a7713b9646ef2aef21fdf30d5"
                + "c399601e065cf8a00c0b0a4f528609853791f88bf801",
            expected: dynamicInput, blockType: 2),
        Stream(name: "multi-block", hex: "72741c05c40200000000ffff737222155454560100", expected: multiInput, blockType: 1),
        Stream(name: "empty", hex: "0300", expected: [], blockType: 1),
    ]

    /// 1,000,000 zero bytes at level 9 (one dynamic block): 985 bytes that expand 1015-fold.
    static let bomb: [UInt8] =
        [UInt8](hex: "edc101010000008220ffaf6e484001")! + [UInt8](repeating: 0, count: 968) + [0xAF, 0x06]

    @Test("zlib streams decode exactly", arguments: streams)
    func decodes(_ stream: Stream) throws {
        let bytes = try #require([UInt8](hex: stream.hex))
        #expect(Int(bytes[0] >> 1 & 3) == stream.blockType, "first block type")
        #expect(try Inflate.decompress(bytes, limit: 1 << 20) == stream.expected)
        // The exact size is enough; one byte less is not.
        #expect(try Inflate.decompress(bytes, limit: stream.expected.count) == stream.expected)
        if !stream.expected.isEmpty {
            #expect(throws: MeshWireError.decompressedSizeExceeded) {
                try Inflate.decompress(bytes, limit: stream.expected.count - 1)
            }
        }
    }

    @Test("every truncation fails, and a trailing byte is refused", arguments: streams)
    func truncations(_ stream: Stream) throws {
        let bytes = try #require([UInt8](hex: stream.hex))
        for length in 0..<bytes.count {
            #expect(throws: MeshWireError.self, "prefix \(length)") { try Inflate.decompress(bytes.prefix(length), limit: 1 << 20) }
        }
        #expect(throws: MeshWireError.trailingBytes) { try Inflate.decompress(bytes + [0], limit: 1 << 20) }
    }

    @Test("a decompression bomb stops at the limit")
    func bomb() throws {
        #expect(Self.bomb.count == 985)
        #expect(Int(Self.bomb[0] >> 1 & 3) == 2)
        #expect(throws: MeshWireError.decompressedSizeExceeded) { try Inflate.decompress(Self.bomb, limit: 65_536) }
        #expect(throws: MeshWireError.decompressedSizeExceeded) { try Inflate.decompress(Self.bomb, limit: 999_999) }
        let full = try Inflate.decompress(Self.bomb, limit: 1_000_000)
        #expect(full.count == 1_000_000 && full.allSatisfy { $0 == 0 })
    }

    @Test(
        "malformed streams are typed errors",
        arguments: [
            ("030200", MeshWireError.malformedCompressedData),  // zlib: invalid distance too far back
            ("731c0300", MeshWireError.malformedCompressedData),  // zlib: invalid literal/length code (286)
            ("05e093244992244992000000", MeshWireError.malformedCompressedData),  // zlib: invalid code lengths set
            ("010300fcf0616263", MeshWireError.malformedCompressedData),  // zlib: invalid stored block lengths
            ("070000", MeshWireError.malformedCompressedData),  // zlib: invalid block type
            ("", MeshWireError.truncated),
        ])
    func malformed(_ hex: String, _ expected: MeshWireError) throws {
        let bytes = try #require([UInt8](hex: hex))
        #expect(throws: expected) { try Inflate.decompress(bytes, limit: 1 << 20) }
    }

    @Test("random input never crashes and never exceeds the limit")
    func randomInput() {
        var generator = SeededGenerator(seed: 0x1F1A7E)
        var accepted = 0
        for round in 0..<5_000 {
            let length = Int(generator.next() % 64)
            var bytes = generator.bytes(length)
            // Bias the first byte towards each block type.
            if !bytes.isEmpty { bytes[0] = bytes[0] & ~0x06 | UInt8(round % 3) << 1 }
            if let output = try? Inflate.decompress(bytes, limit: 4_096) {
                #expect(output.count <= 4_096)
                accepted += 1
            }
        }
        // Valid streams with one byte changed.
        var mutatedAccepted = 0
        for round in 0..<5_000 {
            var bytes = [UInt8](hex: Self.streams[round % Self.streams.count].hex)!
            bytes[Int(generator.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            if let output = try? Inflate.decompress(bytes, limit: 4_096) {
                #expect(output.count <= 4_096)
                mutatedAccepted += 1
            }
        }
        print("Inflate random inputs: \(accepted) of 5000 decoded; mutated streams: \(mutatedAccepted) of 5000 decoded")
    }
}
