extension MeshFrame {
    /// Decodes the bytes a link received (a UDP datagram, a BLE write) into a frame: a
    /// REQUEST_SYNC packet becomes ``syncRequest(_:)``, our `0xE1` packet
    /// ``acknowledgement(_:)``, anything else ``packet(_:id:)``.
    /// - Throws: ``MeshWireError`` for bytes that are not a packet, or a REQUEST_SYNC or
    ///   acknowledgement whose payload is malformed.
    public init(decoding bytes: [UInt8]) throws(MeshWireError) {
        let packet = try MeshPacket.decode(bytes)
        switch packet.type {
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
    /// - Parameters:
    ///   - neighbour: the peer at the other end when known; a REQUEST_SYNC and an
    ///     acknowledgement are addressed to it (broadcast while it is unknown).
    ///   - timestamp: the acknowledgement packet's timestamp (ms since the epoch).
    /// - Throws: ``MeshWireError`` when a field does not fit the wire format.
    public func encoded(to neighbour: PeerID?, timestamp: UInt64) throws(MeshWireError) -> [UInt8] {
        switch self {
        case .packet(let packet, _):
            return try packet.encoded()
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
