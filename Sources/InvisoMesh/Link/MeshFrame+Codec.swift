extension MeshFrame {
    /// Decodes the bytes a link received (a UDP datagram, a BLE write) into a frame: a
    /// REQUEST_SYNC packet becomes ``syncRequest(_:)``, our `0xE1` packet
    /// ``acknowledgement(_:)``, our `0xE2` envelope the ``packet(_:id:hops:)`` it carries
    /// with its hop count, anything else ``packet(_:id:hops:)`` with hop count 0 (unknown).
    /// - Throws: ``MeshWireError`` for bytes that are not a packet, or a REQUEST_SYNC,
    ///   acknowledgement or envelope whose payload is malformed.
    public init(decoding bytes: [UInt8]) throws(MeshWireError) {
        let packet = try MeshPacket.decode(bytes)
        switch packet.type {
        case .invisoHopCounted:
            // [hops u8, at least 1][the packet's own encoding]; a control frame inside is refused.
            guard packet.version == 1, packet.ttl == 0, packet.recipientID == nil, packet.signature == nil, packet.route == nil,
                !packet.isCompressed, !packet.isRSR, let hops = packet.payload.first, hops > 0
            else { throw MeshWireError(.invalidField, "malformed hop-count envelope") }
            let inner = try MeshPacket.decode(Array(packet.payload.dropFirst()))
            guard inner.type != .invisoHopCounted, inner.type != .invisoHopAcknowledgement, inner.type != .requestSync
            else { throw MeshWireError(.invalidField, "control frame in a hop-count envelope") }
            self = .packet(inner, id: PacketID(inner), hops: hops)
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

    /// The bytes a link sends for this frame.
    ///
    /// A packet with a hop count goes, if `hopCounts` is true, in our `0xE2` envelope: a
    /// version-1 packet of type ``MessageType/invisoHopCounted``, TTL 0, unsigned, from the
    /// inner packet's sender, with no recipient, whose payload is the hop count (one byte,
    /// at least 1) followed by the inner packet's encoding, byte for byte as received. It
    /// costs 23 bytes. A packet whose envelope would not fit a version-1 length goes bare.
    /// BitChat clients ignore the envelope (an unknown type at TTL 0, like `0xE1`), so a
    /// link whose neighbour may be a BitChat client passes `hopCounts: false`.
    ///
    /// - Parameters:
    ///   - neighbour: the peer at the other end when known; a REQUEST_SYNC and an
    ///     acknowledgement are addressed to it (broadcast while it is unknown).
    ///   - timestamp: the acknowledgement packet's timestamp (ms since the epoch).
    ///   - hopCounts: whether the neighbour reads our hop-count envelope.
    /// - Throws: ``MeshWireError`` when a field does not fit the wire format.
    public func encoded(to neighbour: PeerID?, timestamp: UInt64, hopCounts: Bool = true) throws(MeshWireError)
        -> [UInt8]
    {
        switch self {
        case .packet(let packet, _, let hops):
            let bytes = try packet.encoded()
            guard hopCounts, hops > 0, bytes.count < Int(UInt16.max) else { return bytes }
            return try MeshPacket(
                type: .invisoHopCounted, ttl: 0, timestamp: packet.timestamp, senderID: packet.senderID,
                payload: [hops] + bytes
            ).encoded()
        case .syncRequest(let request):
            let payload = RequestSyncPacket(
                p: request.filter.p, m: request.filter.m, data: request.filter.data, sinceTimestamp: request.sinceTimestamp)
            let packet = MeshPacket(
                type: .requestSync, ttl: 0, timestamp: request.timestamp, senderID: request.senderID,
                recipientID: neighbour, payload: try payload.encoded())
            return try packet.encoded()
        case .acknowledgement(let acknowledgement):
            return try acknowledgement.packet(to: neighbour, timestamp: timestamp).encoded()
        }
    }
}
