import InvisoMesh
import InvisoTesting
import Testing

@Suite("Packet codec")
struct PacketCodecTests {
    static let v1 = [UInt8](hex: "01020701020304050607080000031011121314151617aabbcc")!
    static let v2 = [UInt8](
        hex: "021105000000000000002a0b00000002010203040506070811121314151617180221222324252627283132333435363738dead"
            + String(repeating: "5a", count: 64))!

    @Test("seeded random packets round-trip, padded and unpadded")
    func randomRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x3E5A)
        for _ in 0..<1_000 {
            let packet = generator.packet()
            let plain = try packet.encoded()
            #expect(try MeshPacket.decode(plain) == packet)
            let padded = try packet.encoded(padded: true)
            #expect(padded.starts(with: plain))
            #expect(try MeshPacket.decode(padded) == packet)
            if padded.count != plain.count { #expect([256, 512, 1024, 2048].contains(padded.count)) }
        }
    }

    @Test("every truncation of the golden packets is rejected; so are lying lengths and garbage")
    func truncationAndGarbage() throws {
        for bytes in [Self.v1, Self.v2] {
            for length in 0..<bytes.count {
                #expect(throws: MeshWireError.self, "prefix \(length)") { try MeshPacket.decode(bytes.prefix(length)) }
            }
            // Garbage that is not a PKCS#7 pad.
            for tail: [UInt8] in [[0], [2], [1, 1], [3, 3], [0xFF], [0x5A, 1, 2]] {
                #expect(throws: MeshWireError.trailingBytes) { try MeshPacket.decode(bytes + tail) }
            }
            // Valid pads of every length are accepted.
            for count in 1...255 {
                #expect(try MeshPacket.decode(bytes + [UInt8](repeating: UInt8(count), count: count)) == MeshPacket.decode(bytes))
            }
        }
        // The v1 payload length raised and lowered by one.
        var longer = Self.v1
        longer[13] = 4
        #expect(throws: MeshWireError.truncated) { try MeshPacket.decode(longer) }
        var shorter = Self.v1
        shorter[13] = 2
        #expect(throws: MeshWireError.trailingBytes) { try MeshPacket.decode(shorter) }
        // The v2 u32 length set huge: refused without allocating.
        var huge = Self.v2
        huge.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: MeshWireError.truncated) { try MeshPacket.decode(huge) }
    }

    @Test("header checks: version, flags, v1 route flag, zero-hop route, short compressed payload, size limit")
    func headerChecks() throws {
        var version3 = Self.v1
        version3[0] = 3
        #expect(throws: MeshWireError.unsupportedVersion) { try MeshPacket.decode(version3) }
        var unknownFlag = Self.v1
        unknownFlag[11] = 0x20
        #expect(throws: MeshWireError.invalidField) { try MeshPacket.decode(unknownFlag) }
        var v1Route = Self.v1
        v1Route[11] = 0x08
        #expect(throws: MeshWireError.invalidField) { try MeshPacket.decode(v1Route) }
        var zeroHops = Self.v2
        zeroHops[32] = 0
        #expect(throws: MeshWireError.invalidField) { try MeshPacket.decode(zeroHops) }
        var shortCompressed = Self.v1
        shortCompressed[11] = 0x04
        shortCompressed[13] = 2
        shortCompressed.removeLast()
        #expect(throws: MeshWireError.invalidField) { try MeshPacket.decode(shortCompressed) }
        #expect(throws: MeshWireError.tooLarge) { try MeshPacket.decode(Self.v1, maximumSize: Self.v1.count - 1) }
        #expect(throws: MeshWireError.tooLarge) {
            try MeshPacket.decode([UInt8](repeating: 1, count: MeshPacket.maximumEncodedSize + 1))
        }
    }

    @Test("encoder refuses what the wire cannot carry")
    func encoderChecks() {
        let sender = PeerID(rawValue: 1)
        let route = [PeerID(rawValue: 2)]
        #expect(throws: MeshWireError.unsupportedVersion) {
            try MeshPacket(version: 3, type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: []).encoded()
        }
        #expect(throws: MeshWireError.invalidField) {
            try MeshPacket(version: 1, type: .message, ttl: 1, timestamp: 0, senderID: sender, route: route, payload: [])
                .encoded()
        }
        #expect(throws: MeshWireError.invalidField) {
            try MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: [], signature: [1]).encoded()
        }
        #expect(throws: MeshWireError.invalidField) {
            try MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: [0, 1], isCompressed: true)
                .encoded()
        }
        #expect(throws: MeshWireError.tooLarge) {
            try MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: [UInt8](repeating: 0, count: 65_536))
                .encoded()
        }
        #expect(throws: MeshWireError.tooLarge) {
            try MeshPacket(
                version: 2, type: .message, ttl: 1, timestamp: 0, senderID: sender,
                payload: [UInt8](repeating: 0, count: MeshPacket.maximumEncodedSize)
            ).encoded()
        }
    }

    @Test("padding matches BitChat's MessagePadding: smallest block with 16 bytes spare, pad ≤ 255")
    func padding() throws {
        let golden = try MeshPacket.decode(Self.v1)
        let padded = try golden.encoded(padded: true)
        #expect(padded.count == 256)
        #expect(padded.suffix(231).allSatisfy { $0 == 231 })
        func paddedSize(payload: Int) throws -> Int {
            try MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: PeerID(rawValue: 1), payload: [UInt8](repeating: 7, count: payload))
                .encoded(padded: true).count
        }
        // Frame = 22 + payload bytes (v1, no recipient, unsigned).
        #expect(try paddedSize(payload: 218) == 256)  // 240 + 16 = 256: pad 16
        #expect(try paddedSize(payload: 219) == 241)  // next block 512 needs 271 > 255 bytes: unpadded
        #expect(try paddedSize(payload: 250) == 512)  // pad 240
        #expect(try paddedSize(payload: 475) == 497)  // 513 > 512, 1024 needs 527: unpadded
        #expect(try paddedSize(payload: 800) == 1024)  // pad 202
        #expect(try paddedSize(payload: 2100) == 2122)  // above every block
    }

    @Test("compressed payloads: v1 u16 and v2 u32 size prefixes, raw DEFLATE")
    func compressedPayload() throws {
        // "hello hello hello mesh", generated with Python 3 zlib.compressobj(wbits=-15), Z_FIXED.
        let stream = [UInt8](hex: "cb48cdc9c957c8402273538b3300")!
        let text = Array("hello hello hello mesh".utf8)
        let v1 = MeshPacket(
            type: .message, ttl: 3, timestamp: 9, senderID: PeerID(rawValue: 1), payload: [0, 22] + stream,
            isCompressed: true)
        #expect(try v1.decompressedPayload(limit: 100) == text)
        let decoded = try MeshPacket.decode(try v1.encoded())
        #expect(decoded == v1 && decoded.payload == [0, 22] + stream)
        var v2 = v1
        v2.version = 2
        v2.payload = [0, 0, 0, 22] + stream
        #expect(try v2.decompressedPayload(limit: 22) == text)
        #expect(throws: MeshWireError.decompressedSizeExceeded) { try v2.decompressedPayload(limit: 21) }
        var wrongSize = v1
        wrongSize.payload = [0, 23] + stream
        #expect(throws: MeshWireError.malformedCompressedData) { try wrongSize.decompressedPayload(limit: 100) }
        wrongSize.payload = [0, 21] + stream
        #expect(throws: MeshWireError.decompressedSizeExceeded) { try wrongSize.decompressedPayload(limit: 100) }
        wrongSize.payload = [0, 0] + stream
        #expect(throws: MeshWireError.invalidField) { try wrongSize.decompressedPayload(limit: 100) }
        wrongSize.payload = [0xFF, 0xFF] + stream.prefix(1)
        #expect(throws: MeshWireError.invalidField) { try wrongSize.decompressedPayload(limit: 1 << 20) }
        let plain = MeshPacket(type: .message, ttl: 3, timestamp: 9, senderID: PeerID(rawValue: 1), payload: text)
        #expect(try plain.decompressedPayload(limit: 22) == text)
        #expect(throws: MeshWireError.tooLarge) { try plain.decompressedPayload(limit: 21) }
    }
}
