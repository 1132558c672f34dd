import InvisoMesh
internal import InvisoFuzzSupport

/// `MeshPacket.decode` on arbitrary bytes.
///
/// Accepted input must be the packet's own encoding followed by nothing or a valid PKCS#7
/// pad; the encoding, padded or not, must decode to the same packet; the signing bytes must
/// exist; decompression must fail with a `MeshWireError` or produce exactly the declared
/// size. As a link frame (`MeshFrame(decoding:)`), a packet or envelope (`0xE2`, `0xE3`) it accepts
/// must encode to bytes that decode to the same frame.
enum PacketScenario {
    static func run(_ bytes: [UInt8]) {
        if let frame = try? MeshFrame(decoding: bytes), case .packet(let inner, let id, _, _) = frame {
            invariant(id == PacketID(inner), "a decoded frame's ID is not its packet's")
            let again = mustSucceed("re-encoding a decoded frame") { try frame.datagrams(to: nil, timestamp: 0) }
            invariant(again.count == 1, "a decoded frame re-encodes to more than one datagram")
            invariant((try? MeshFrame(decoding: again[0])) == frame, "a frame does not survive encoding")
        }
        let packet: MeshPacket
        do {
            packet = try MeshPacket.decode(bytes)
        } catch {
            return
        }
        let encoded = mustSucceed("re-encoding a decoded packet") { try packet.encoded() }
        invariant(bytes.starts(with: encoded), "decoded packet re-encodes to other bytes")
        let tail = bytes.dropFirst(encoded.count)
        if let last = tail.last {
            invariant(Int(last) == tail.count && tail.allSatisfy { $0 == last }, "accepted a tail that is not PKCS#7")
        }
        invariant((try? MeshPacket.decode(encoded)) == packet, "encoding does not decode to the packet")
        let padded = mustSucceed("padded encoding") { try packet.encoded(padded: true) }
        invariant((try? MeshPacket.decode(padded)) == packet, "padded encoding does not decode to the packet")
        let signing = mustSucceed("signing bytes") { try packet.signingBytes() }
        invariant(signing.count >= encoded.count - (packet.signature == nil ? 0 : 64), "signing bytes too short")
        if packet.isCompressed {
            let width = packet.version == 2 ? 4 : 2
            let declared = packet.payload.prefix(width).reduce(0) { $0 << 8 | Int($1) }
            if let output = try? packet.decompressedPayload(limit: 1 << 16) {
                invariant(output.count == declared && declared <= 1 << 16, "decompressed size differs from declared")
            }
        }
    }
}
