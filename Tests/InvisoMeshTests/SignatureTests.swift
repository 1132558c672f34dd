import Crypto
import InvisoMesh
import InvisoTesting
import Testing

@Suite("Packet signatures")
struct SignatureTests {
    static func key(_ seed: UInt8) throws -> Curve25519.Signing.PrivateKey {
        try Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: seed, count: 32))
    }

    static func samplePacket() -> MeshPacket {
        MeshPacket(
            version: 2, type: .noiseEncrypted, ttl: 7, timestamp: 1_750_000_000_123, senderID: PeerID(rawValue: 0x0102),
            recipientID: PeerID(rawValue: 0x0304), route: [PeerID(rawValue: 5), PeerID(rawValue: 6)],
            payload: Array("ciphertext".utf8), isRSR: true)
    }

    @Test("the signing encoding is the padded encoding with TTL 0, RSR clear and no signature")
    func signingEncoding() throws {
        var packet = Self.samplePacket()
        packet.signature = [UInt8](repeating: 9, count: 64)
        var expected = packet
        expected.ttl = 0
        expected.isRSR = false
        expected.signature = nil
        #expect(try packet.signingBytes() == expected.encoded(padded: true))
        let bytes = try packet.signingBytes()
        #expect(bytes[2] == 0 && bytes[11] & 0x12 == 0 && bytes.count == 256)
    }

    @Test("sign, verify, relay changes keep it valid, tampering breaks it")
    func signAndVerify() throws {
        let key = try Self.key(1)
        var packet = Self.samplePacket()
        #expect(!packet.isSignatureValid(publicKey: key.publicKey))
        try packet.sign(using: key)
        #expect(packet.signature?.count == 64)
        #expect(packet.isSignatureValid(publicKey: key.publicKey))
        #expect(!packet.isSignatureValid(publicKey: try Self.key(2).publicKey))

        // Through the wire, padded or not.
        #expect(try MeshPacket.decode(packet.encoded()).isSignatureValid(publicKey: key.publicKey))
        #expect(try MeshPacket.decode(packet.encoded(padded: true)).isSignatureValid(publicKey: key.publicKey))

        // What relays change is not signed.
        var relayed = packet
        relayed.ttl = 1
        relayed.isRSR = false
        #expect(relayed.isSignatureValid(publicKey: key.publicKey))

        // Everything else is.
        var mutations: [(String, (inout MeshPacket) -> Void)] = [
            ("timestamp", { $0.timestamp += 1 }),
            ("type", { $0.type = .message }),
            ("sender", { $0.senderID = PeerID(rawValue: 0x0103) }),
            ("recipient", { $0.recipientID = nil }),
            ("route", { $0.route = [PeerID(rawValue: 6), PeerID(rawValue: 5)] }),
            ("payload", { $0.payload[0] ^= 1 }),
            ("version", { $0.version = 1; $0.route = nil }),
            ("signature", { $0.signature![10] ^= 0x80 }),
        ]
        mutations.append(("compression flag", { $0.isCompressed = true }))
        for (name, mutate) in mutations {
            var tampered = packet
            mutate(&tampered)
            #expect(!tampered.isSignatureValid(publicKey: key.publicKey), "\(name) is not covered")
        }
    }

    @Test("flipping any bit of a signed packet on the wire breaks decoding or the signature, except TTL, RSR and padding")
    func bitFlips() throws {
        let key = try Self.key(3)
        var packet = Self.samplePacket()
        try packet.sign(using: key)
        let wire = try packet.encoded()
        var survivors: Set<String> = []
        for index in wire.indices {
            for bit in 0..<8 {
                var bytes = wire
                bytes[index] ^= 1 << bit
                guard let decoded = try? MeshPacket.decode(bytes), decoded.isSignatureValid(publicKey: key.publicKey)
                else { continue }
                survivors.insert(index == 2 ? "ttl" : index == 11 && bit == 4 ? "rsr" : "byte \(index) bit \(bit)")
            }
        }
        #expect(survivors == ["ttl", "rsr"])
    }
}
