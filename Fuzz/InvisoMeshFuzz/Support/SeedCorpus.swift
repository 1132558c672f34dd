internal import Foundation
import InvisoMesh
internal import InvisoFuzzSupport

/// The seed corpus: genuine encodings for every scenario, so the fuzzer starts from inputs
/// that get through every check.
enum SeedCorpus {
    static func inputs() -> [(name: String, bytes: [UInt8])] {
        let scenario = MeshFuzzTarget.Scenario.self
        var seeds: [(String, [UInt8])] = []
        let sender = PeerID(rawValue: 0x0102_0304_0506_0708)
        var packets: [(String, MeshPacket)] = [
            ("v1", MeshPacket(type: .message, ttl: 7, timestamp: 0x0102_0304_0506_0708, senderID: sender, payload: [0xAA, 0xBB, 0xCC])),
            (
                "v2-routed-signed",
                MeshPacket(
                    version: 2, type: .noiseEncrypted, ttl: 5, timestamp: 42, senderID: sender, recipientID: PeerID(rawValue: 9),
                    route: [PeerID(rawValue: 1), PeerID(rawValue: 2)], payload: [0xDE, 0xAD], isRSR: true,
                    signature: [UInt8](repeating: 0x5A, count: 64))
            ),
            (
                "v1-compressed",
                MeshPacket(
                    type: .message, ttl: 1, timestamp: 1, senderID: sender,
                    payload: [0, 22] + [0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0x57, 0xC8, 0x40, 0x22, 0x73, 0x53, 0x8B, 0x33, 0x00],
                    isCompressed: true)
            ),
        ]
        packets.append(("fragment", ReassemblyScenario.fixture.fragments[0]))
        // A hop-count envelope (our 0xE2) around the signed v2 packet.
        let inner = mustSucceed("seed envelope") { try packets[1].1.encoded() }
        packets.append(
            ("hop-counted", MeshPacket(type: .invisoHopCounted, ttl: 0, timestamp: 42, senderID: sender, payload: [3] + inner)))
        // An acknowledging envelope (our 0xE3): hop count 2, two acknowledged packet IDs.
        let acknowledged = (UInt8(1)...32).map { $0 }
        packets.append(
            ("acknowledging", MeshPacket(
                type: .invisoAcknowledging, ttl: 0, timestamp: 43, senderID: sender, payload: [2, 2] + acknowledged + inner)))
        for (name, packet) in packets {
            for padded in [false, true] {
                let bytes = mustSucceed("seed \(name)") { try packet.encoded(padded: padded) }
                seeds.append(("packet-\(name)\(padded ? "-padded" : "")", [scenario.packet.rawValue] + bytes))
            }
        }
        // Inflate: stored, fixed and dynamic streams (Python 3 zlib, raw DEFLATE).
        let streams: [(String, String)] = [
            ("stored", "0105 00fa ff68656c6c6f".replacingOccurrences(of: " ", with: "")),
            ("fixed", "cb48cdc9c957c8402273538b3300"),
            ("multi", "72741c05c40200000000ffff737222155454560100"),
            ("bomb", "edc101010000008220ffaf6e484001" + String(repeating: "00", count: 968) + "af06"),
        ]
        for (name, hex) in streams {
            seeds.append(("inflate-\(name)", [scenario.inflate.rawValue, 0xFF, 0xFF] + bytes(hex)))
        }
        // Payloads, from the golden vectors.
        let payloads: [(Int, String)] = [
            (0, "7f000000000000002a016d02c3a9000568656c6c6f016f0172017002016102ceb20163"),
            (0, "820000000000000001016505616c6963650004000102ff"),
            (1, "00026d3101026869"),
            (2, "09cafe"),
            (3, "00010203040506070001000302aabb"),
            (4, "7f0002cafe0100011302000401020304030002aabb"),
            (5, "0103626f620220" + String(repeating: "11", count: 32) + "0320" + String(repeating: "22", count: 32) + "050200017f02cafe"),
            (6, "01010200010220" + String(repeating: "ab", count: 32) + "03020100"),
            (7, "01000161020004000000020300016d0400000002dead"),
            (8, "626f62"),
            (9, "0001"),
        ]
        for (index, (decoder, hex)) in payloads.enumerated() {
            seeds.append(("payload-\(decoder)-\(index)", [scenario.payload.rawValue, UInt8(decoder)] + bytes(hex)))
        }
        // Reassembly: all genuine fragments, then shuffled with a forgery and a clock step.
        seeds.append(("reassembly-genuine", [scenario.reassembly.rawValue, 5]))
        seeds.append(("reassembly-mixed", [scenario.reassembly.rawValue, 0, 3, 1, 0, 0, 0, 1, 0, 6, 0x02, 3, 0xAA, 0xBB, 0xCC, 0, 0, 3, 60, 5, 4]))
        return seeds
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }
}
