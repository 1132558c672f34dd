import InvisoMesh
import Testing

@Suite("Peer IDs")
struct PeerIDTests {
    @Test("bytes, hex and the integer form agree")
    func forms() throws {
        let bytes: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77]
        let id = try #require(PeerID(bytes: bytes))
        #expect(id.bytes == bytes)
        #expect(id.description == "0011223344556677")
        #expect(PeerID(hex: "0011223344556677") == id)
        #expect(PeerID(bytes: bytes.dropLast()) == nil)
        #expect(PeerID(hex: "001122334455667") == nil)
        #expect(PeerID(hex: "00112233445566zz") == nil)
        #expect(PeerID.broadcast.bytes == [UInt8](repeating: 0xFF, count: 8))
    }
}
