import InvisoMesh
import Testing

@Suite("Mesh frames on the wire")
struct MeshFrameCodecTests {
    let alice = PeerID(rawValue: 0x0102_0304_0506_0708)
    let bob = PeerID(rawValue: 0x1112_1314_1516_1718)

    @Test("each frame kind survives encoding and decoding, addressed to the neighbour")
    func roundTrip() throws {
        let packet = MeshPacket(type: .message, ttl: 5, timestamp: 1_700_000_000_000, senderID: alice, payload: [1, 2, 3])
        let request = SyncRequest(
            senderID: alice, timestamp: 1_700_000_000_001, filter: GolombCodedSet(p: 7, m: 1_000, data: [0xAB, 0xCD]),
            sinceTimestamp: 1_699_999_000_000)
        let acknowledgement = HopAcknowledgement(senderID: alice, packetID: PacketID(packet))
        let frames: [MeshFrame] = [.packet(packet, id: PacketID(packet)), .syncRequest(request), .acknowledgement(acknowledgement)]
        for frame in frames {
            let bytes = try frame.encoded(to: bob, timestamp: 1_700_000_000_002)
            #expect(try MeshFrame(decoding: bytes) == frame)
            let wire = try MeshPacket.decode(bytes)
            if case .packet = frame { #expect(wire.recipientID == nil) } else { #expect(wire.recipientID == bob) }
        }
    }

    @Test("a packet with a hop count goes in the 0xE2 envelope, byte for byte inside; bare to a BitChat neighbour")
    func hopCountEnvelope() throws {
        let packet = MeshPacket(
            type: .noiseEncrypted, ttl: 3, timestamp: 1_700_000_000_000, senderID: alice, recipientID: bob,
            payload: [1, 2, 3], signature: [UInt8](repeating: 7, count: 64))
        let frame = MeshFrame.packet(packet, id: PacketID(packet), hops: 4)
        let bytes = try frame.encoded(to: bob, timestamp: 1)
        #expect(try MeshFrame(decoding: bytes) == frame)
        let wire = try MeshPacket.decode(bytes)
        #expect(wire.type == .invisoHopCounted && wire.ttl == 0 && wire.recipientID == nil && wire.signature == nil)
        #expect(wire.payload == [4] + (try packet.encoded()))
        #expect(bytes.count == (try packet.encoded()).count + 23)
        // To a neighbour that may be a BitChat client, and without a count: the bare packet.
        #expect(try frame.encoded(to: bob, timestamp: 1, hopCounts: false) == (try packet.encoded()))
        #expect(try MeshFrame.packet(packet, id: PacketID(packet)).encoded(to: bob, timestamp: 1) == (try packet.encoded()))
        #expect(try MeshFrame(decoding: try packet.encoded()) == .packet(packet, id: PacketID(packet), hops: 0))
    }

    @Test("a malformed hop-count envelope is rejected: count 0, TTL, version 2, a control frame or bad bytes inside")
    func malformedEnvelope() throws {
        let inner = try MeshPacket(type: .message, ttl: 7, timestamp: 1, senderID: alice, payload: [9]).encoded()
        let sync = try MeshPacket(type: .requestSync, ttl: 0, timestamp: 1, senderID: alice, payload: []).encoded()
        let nested = try MeshPacket(type: .invisoHopCounted, ttl: 0, timestamp: 1, senderID: alice, payload: [1] + inner)
            .encoded()
        let cases: [(ttl: UInt8, payload: [UInt8])] = [
            (0, [0] + inner), (1, [1] + inner), (0, [1] + sync), (0, [1] + nested), (0, [1] + inner.dropLast()), (0, []),
        ]
        for (ttl, payload) in cases {
            let bytes = try MeshPacket(type: .invisoHopCounted, ttl: ttl, timestamp: 1, senderID: alice, payload: payload)
                .encoded()
            #expect(throws: MeshWireError.self) { try MeshFrame(decoding: bytes) }
        }
        let version2 = try MeshPacket(
            version: 2, type: .invisoHopCounted, ttl: 0, timestamp: 1, senderID: alice, payload: [1] + inner
        ).encoded()
        #expect(throws: MeshWireError.self) { try MeshFrame(decoding: version2) }
    }

    @Test("a REQUEST_SYNC or acknowledgement with a malformed payload is rejected")
    func malformed() throws {
        for type in [MessageType.requestSync, .invisoHopAcknowledgement] {
            let bytes = try MeshPacket(type: type, ttl: 0, timestamp: 1, senderID: alice, payload: [0xFF]).encoded()
            #expect(throws: MeshWireError.self) { try MeshFrame(decoding: bytes) }
        }
        #expect(throws: MeshWireError.self) { try MeshFrame(decoding: [0x01, 0x02]) }
    }
}
