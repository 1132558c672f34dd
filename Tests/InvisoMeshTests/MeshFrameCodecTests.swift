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

    @Test("a REQUEST_SYNC or acknowledgement with a malformed payload is rejected")
    func malformed() throws {
        for type in [MessageType.requestSync, .invisoHopAcknowledgement] {
            let bytes = try MeshPacket(type: type, ttl: 0, timestamp: 1, senderID: alice, payload: [0xFF]).encoded()
            #expect(throws: MeshWireError.self) { try MeshFrame(decoding: bytes) }
        }
        #expect(throws: MeshWireError.self) { try MeshFrame(decoding: [0x01, 0x02]) }
    }
}
