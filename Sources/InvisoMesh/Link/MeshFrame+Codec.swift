extension MeshFrame {
    /// The most acknowledgements one `0xE3` envelope carries.
    public static let maxAcknowledgementsPerEnvelope = 16

    /// Decodes the bytes a link received (a UDP datagram, a BLE write) into a frame: a
    /// REQUEST_SYNC packet becomes ``syncRequest(_:)``, our `0xE1` packet
    /// ``acknowledgement(_:)``, our `0xE2` and `0xE3` envelopes the
    /// ``packet(_:id:hops:acknowledgements:)`` they carry with its hop count (and, for `0xE3`,
    /// the acknowledgements riding on it), anything else ``packet(_:id:hops:acknowledgements:)``
    /// with hop count 0 (unknown).
    /// - Throws: ``MeshWireError`` for bytes that are not a packet, or a REQUEST_SYNC,
    ///   acknowledgement or envelope whose payload is malformed.
    public init(decoding bytes: [UInt8]) throws(MeshWireError) {
        let packet = try MeshPacket.decode(bytes)
        switch packet.type {
        case .invisoHopCounted, .invisoAcknowledging:
            self = try Self.decodeEnvelope(packet)
        case .invisoHopAcknowledgement:
            guard let acknowledgement = HopAcknowledgement(packet: packet) else {
                throw MeshWireError(.invalidField, "acknowledgement without a packet ID")
            }
            self = .acknowledgement(acknowledgement)
        case .requestSync:
            let request = try RequestSyncPacket(decoding: try packet.decompressedPayload(limit: 65_536))
            self = .syncRequest(
                SyncRequest(
                    senderID: packet.senderID, timestamp: packet.timestamp,
                    filter: GolombCodedSet(p: request.p, m: request.m, data: request.data),
                    sinceTimestamp: request.sinceTimestamp))
        default:
            self = .packet(packet, id: PacketID(packet))
        }
    }

    /// `0xE2`: [hops u8, at least 1][the packet]. `0xE3`: [hops u8][n u8, 1…16][n packet
    /// IDs, 16 bytes each][the packet], the acknowledgements being from the envelope's
    /// sender. A control frame inside is refused.
    private static func decodeEnvelope(_ envelope: MeshPacket) throws(MeshWireError) -> MeshFrame {
        let malformed = MeshWireError(.invalidField, "malformed Inviso envelope")
        guard envelope.version == 1, envelope.ttl == 0, envelope.recipientID == nil, envelope.signature == nil,
            envelope.route == nil, !envelope.isCompressed, !envelope.isRSR, let hops = envelope.payload.first
        else { throw malformed }
        var rest = envelope.payload.dropFirst()
        var acknowledgements: [HopAcknowledgement] = []
        if envelope.type == .invisoAcknowledging {
            guard let count = rest.first, (1...maxAcknowledgementsPerEnvelope).contains(Int(count)),
                rest.count > 1 + Int(count) * PacketID.byteCount
            else { throw malformed }
            rest = rest.dropFirst()
            for _ in 0..<count {
                guard let id = PacketID(bytes: Array(rest.prefix(PacketID.byteCount))) else { throw malformed }
                acknowledgements.append(HopAcknowledgement(senderID: envelope.senderID, packetID: id))
                rest = rest.dropFirst(PacketID.byteCount)
            }
        } else {
            guard hops > 0 else { throw malformed }
        }
        let inner = try MeshPacket.decode(Array(rest))
        guard inner.type != .invisoHopCounted, inner.type != .invisoAcknowledging,
            inner.type != .invisoHopAcknowledgement, inner.type != .requestSync
        else { throw MeshWireError(.invalidField, "control frame in an Inviso envelope") }
        return .packet(inner, id: PacketID(inner), hops: hops, acknowledgements: acknowledgements)
    }

    /// The datagrams a link sends for this frame: one, except when acknowledgements ride on
    /// a packet that cannot carry them (then they follow as `0xE1` packets).
    ///
    /// Between Inviso nodes (`hopCounts` true):
    /// - a packet with acknowledgements goes in our `0xE3` envelope: a version-1 packet of
    ///   type ``MessageType/invisoAcknowledging``, TTL 0, unsigned, from the acknowledging
    ///   node, no recipient, whose payload is the hop count (0: unknown), the number of
    ///   acknowledgements (1…16), their packet IDs (16 bytes each), then the packet's
    ///   encoding byte for byte. It costs 24 + 16 per acknowledgement bytes, where a
    ///   separate `0xE1` costs 46 bytes and a transmission.
    /// - a packet with a hop count and nothing riding goes in our `0xE2` envelope: the same
    ///   shape, type ``MessageType/invisoHopCounted``, from the inner packet's sender, whose
    ///   payload is the hop count (at least 1) then the packet. It costs 23 bytes.
    ///
    /// A packet whose envelope would not fit a version-1 length goes bare. BitChat clients
    /// ignore both envelopes (unknown types at TTL 0, like `0xE1`), so a link whose
    /// neighbour may be a BitChat client passes `hopCounts: false`: the bare packet, and
    /// any acknowledgements as separate `0xE1` packets.
    ///
    /// - Parameters:
    ///   - neighbour: the peer at the other end when known; a REQUEST_SYNC and an
    ///     acknowledgement are addressed to it (broadcast while it is unknown).
    ///   - timestamp: the acknowledgement packets' timestamp (ms since the epoch).
    ///   - hopCounts: whether the neighbour reads our envelopes.
    /// - Throws: ``MeshWireError`` when a field does not fit the wire format.
    public func datagrams(to neighbour: PeerID?, timestamp: UInt64, hopCounts: Bool = true) throws(MeshWireError)
        -> [[UInt8]]
    {
        switch self {
        case .packet(let packet, _, let hops, let acknowledgements):
            let bytes = try packet.encoded()
            let fits = bytes.count <= Int(UInt16.max) - 2 - acknowledgements.count * PacketID.byteCount
            if hopCounts, fits, let first = acknowledgements.first,
                acknowledgements.count <= Self.maxAcknowledgementsPerEnvelope,
                acknowledgements.allSatisfy({ $0.senderID == first.senderID })
            {
                let payload = [hops, UInt8(acknowledgements.count)] + acknowledgements.flatMap(\.packetID.bytes) + bytes
                return [
                    try MeshPacket(
                        type: .invisoAcknowledging, ttl: 0, timestamp: packet.timestamp, senderID: first.senderID,
                        payload: payload
                    ).encoded()
                ]
            }
            var datagrams = [bytes]
            if hopCounts, hops > 0, bytes.count < Int(UInt16.max) {
                datagrams[0] = try MeshPacket(
                    type: .invisoHopCounted, ttl: 0, timestamp: packet.timestamp, senderID: packet.senderID,
                    payload: [hops] + bytes
                ).encoded()
            }
            for acknowledgement in acknowledgements {
                datagrams.append(try acknowledgement.packet(to: neighbour, timestamp: timestamp).encoded())
            }
            return datagrams
        case .syncRequest(let request):
            let payload = RequestSyncPacket(
                p: request.filter.p, m: request.filter.m, data: request.filter.data, sinceTimestamp: request.sinceTimestamp)
            let packet = MeshPacket(
                type: .requestSync, ttl: 0, timestamp: request.timestamp, senderID: request.senderID,
                recipientID: neighbour, payload: try payload.encoded())
            return [try packet.encoded()]
        case .acknowledgement(let acknowledgement):
            return [try acknowledgement.packet(to: neighbour, timestamp: timestamp).encoded()]
        }
    }
}
