import InvisoMesh
internal import InvisoFuzzSupport

/// Up to 64 operations on a `Reassembler` with small limits (4 sets, 1 s, 2,048 bytes):
/// genuine fragments of a fixture packet, forged fragment payloads, raw bytes decoded as
/// packets, clock steps and expiry.
///
/// Invariants: a rejected fragment leaves the state as it was after expiry; the limits hold
/// after every step; when the fixture's set completes and nothing forged was accepted into
/// it, the output is exactly the fixture's encoding.
enum ReassemblyScenario {
    static let genuineSender = PeerID(rawValue: 0xA11CE)
    static let forgedSender = PeerID(rawValue: 0xB0B)
    static let fixtureID: UInt64 = 0x0F0F_0F0F_0F0F_0F0F
    static let limits = Reassembler.Limits(maxConcurrentReassemblies: 4, timeoutMilliseconds: 1_000, maxBufferedBytes: 2_048)

    /// The fixture: a 1,200-byte packet in 6 fragments of 200 bytes.
    static let fixture: (encoded: [UInt8], fragments: [MeshPacket]) = {
        let packet = MeshPacket(
            type: .message, ttl: 3, timestamp: 1, senderID: genuineSender,
            payload: (0..<1_178).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let encoded = mustSucceed("fixture encoding") { try packet.encoded() }
        let fragments = mustSucceed("fixture fragments") {
            try Fragmenter(chunkSize: 200).fragments(of: packet, encoded: encoded, fragmentID: fixtureID)
        }
        return (encoded, fragments)
    }()

    static func run(_ input: inout FuzzInput) {
        var reassembler = Reassembler(limits: limits)
        var now: UInt64 = 0
        var tainted = false
        for _ in 0..<64 where !input.isEmpty {
            switch input.byte() % 6 {
            case 0:
                let index = Int(input.byte()) % fixture.fragments.count
                deliver(fixture.fragments[index], to: &reassembler, now: now, tainted: &tainted, forged: false)
            case 1:
                let sender = input.byte() & 1 == 0 ? genuineSender : forgedSender
                let id = input.byte() & 1 == 0 ? fixtureID : UInt64(input.byte())
                let header = FragmentHeader(
                    fragmentID: id, index: input.uint16() % 8, total: input.uint16() % 8,
                    originalType: MessageType(rawValue: input.byte()))
                let payload = FragmentPayload(header: header, chunk: input.chunk())
                let packet = MeshPacket(type: .fragment, ttl: 1, timestamp: now, senderID: sender, payload: payload.encoded())
                deliver(packet, to: &reassembler, now: now, tainted: &tainted, forged: sender == genuineSender && id == fixtureID)
            case 2:
                guard let packet = try? MeshPacket.decode(input.chunk()) else { continue }
                deliver(packet, to: &reassembler, now: now, tainted: &tainted, forged: packet.senderID == genuineSender)
            case 3:
                now &+= UInt64(input.byte()) * 20
            case 4:
                reassembler.removeExpired(now: now)
            default:
                for fragment in fixture.fragments {
                    deliver(fragment, to: &reassembler, now: now, tainted: &tainted, forged: false)
                }
            }
            invariant(reassembler.activeReassemblies <= limits.maxConcurrentReassemblies, "too many sets")
            invariant(reassembler.bufferedBytes >= 0 && reassembler.bufferedBytes <= limits.maxBufferedBytes, "byte budget")
            if reassembler.activeReassemblies == 0 { invariant(reassembler.bufferedBytes == 0, "bytes held by no set") }
        }
    }

    static func deliver(_ packet: MeshPacket, to reassembler: inout Reassembler, now: UInt64, tainted: inout Bool, forged: Bool) {
        var expired = reassembler
        expired.removeExpired(now: now)
        if expired.activeReassemblies == 0 { tainted = false }
        do {
            guard let output = try reassembler.receive(packet, now: now) else {
                if forged { tainted = true }
                return
            }
            invariant(output.count <= limits.maxBufferedBytes, "reassembled more than the budget")
            let fragment = try? FragmentPayload(decoding: packet.payload)
            if packet.senderID == genuineSender, fragment?.header.fragmentID == fixtureID {
                if !tainted && !forged { invariant(output == fixture.encoded, "genuine fragments reassembled wrongly") }
                tainted = false
            }
        } catch {
            invariant(reassembler == expired, "a rejected fragment changed the state")
        }
    }
}
