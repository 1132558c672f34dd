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
            let bytes = try #require(try frame.datagrams(to: bob, timestamp: 1_700_000_000_002).first)
            #expect(try frame.datagrams(to: bob, timestamp: 1_700_000_000_002).count == 1)
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
        let bytes = try #require(try frame.datagrams(to: bob, timestamp: 1).first)
        #expect(try MeshFrame(decoding: bytes) == frame)
        let wire = try MeshPacket.decode(bytes)
        #expect(wire.type == MessageType.invisoHopCounted && wire.ttl == 0 && wire.recipientID == nil && wire.signature == nil)
        #expect(wire.payload == [4] + (try packet.encoded()))
        #expect(bytes.count == (try packet.encoded()).count + 23)
        // To a neighbour that may be a BitChat client, and without a count: the bare packet.
        #expect(try frame.datagrams(to: bob, timestamp: 1, hopCounts: false) == [try packet.encoded()])
        #expect(try MeshFrame.packet(packet, id: PacketID(packet)).datagrams(to: bob, timestamp: 1) == [try packet.encoded()])
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

    @Test("acknowledgements riding on a packet go in the 0xE3 envelope; to a BitChat neighbour as 0xE1 packets after it")
    func acknowledgingEnvelope() throws {
        let packet = MeshPacket(type: .message, ttl: 6, timestamp: 1_700_000_000_000, senderID: alice, payload: [5, 6])
        let acknowledged = (1...3).map { PacketID(high: $0, low: $0 * 7, syncHash: 0) }.map {
            PacketID(bytes: $0.bytes)!
        }
        let acknowledgements = acknowledged.map { HopAcknowledgement(senderID: bob, packetID: $0) }
        for hops: UInt8 in [0, 2] {
            let frame = MeshFrame.packet(packet, id: PacketID(packet), hops: hops, acknowledgements: acknowledgements)
            let datagrams = try frame.datagrams(to: alice, timestamp: 9)
            #expect(datagrams.count == 1)
            #expect(try MeshFrame(decoding: datagrams[0]) == frame)
            let wire = try MeshPacket.decode(datagrams[0])
            #expect(wire.type == MessageType.invisoAcknowledging && wire.senderID == bob && wire.ttl == 0)
            #expect(wire.recipientID == nil && wire.signature == nil)
            #expect(wire.payload == [hops, 3] + acknowledged.flatMap(\.bytes) + (try packet.encoded()))
            #expect(datagrams[0].count == (try packet.encoded()).count + 24 + 3 * 16)
            // A BitChat neighbour gets the bare packet, then each acknowledgement on its own.
            let bare = try frame.datagrams(to: alice, timestamp: 9, hopCounts: false)
            let encoded = try packet.encoded()
            #expect(bare.count == 4 && bare[0] == encoded)
            #expect(try bare.dropFirst().map { try MeshFrame(decoding: $0) } == acknowledgements.map { .acknowledgement($0) })
        }
    }

    @Test("a malformed 0xE3 envelope is rejected: no or too many acknowledgements, short IDs, TTL, a control frame inside")
    func malformedAcknowledgingEnvelope() throws {
        let inner = try MeshPacket(type: .message, ttl: 7, timestamp: 1, senderID: alice, payload: [9]).encoded()
        let acknowledgement = try MeshPacket(
            type: .invisoHopAcknowledgement, ttl: 0, timestamp: 1, senderID: alice, payload: [UInt8](repeating: 1, count: 16)
        ).encoded()
        let id = [UInt8](repeating: 0xAA, count: 16)
        let cases: [(ttl: UInt8, payload: [UInt8])] = [
            (0, [1, 0] + inner), (0, [1, 17] + Array([[UInt8]](repeating: id, count: 17).joined()) + inner),
            (0, [1, 2] + id + inner), (0, [1, 1] + id), (0, [1, 1] + id.dropLast()), (1, [1, 1] + id + inner),
            (0, [1, 1] + id + acknowledgement), (0, [1]), (0, []),
        ]
        for (ttl, payload) in cases {
            let bytes = try MeshPacket(type: .invisoAcknowledging, ttl: ttl, timestamp: 1, senderID: alice, payload: payload)
                .encoded()
            #expect(throws: MeshWireError.self) { try MeshFrame(decoding: bytes) }
        }
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
