/// A per-hop acknowledgement: "I have taken the directed packet with this ID". Our
/// extension to BitChat.
///
/// On the wire it is a version-1 packet of type ``MessageType/invisoHopAcknowledgement``
/// (`0xE1`), TTL 0, from the acknowledging node to the neighbour that sent the packet,
/// unsigned, whose payload is exactly the 16-byte ``PacketID``. BitChat clients ignore it:
/// their decoders accept any type byte, they have no handler for `0xE1`, and their relay
/// rule never forwards a packet whose TTL is at most 1 (`RelayController`). BitChat
/// allocates new type bytes upwards from `0x2C`; `0xE1` is far from that range.
public struct HopAcknowledgement: Hashable, Sendable {
    /// The acknowledging node.
    public var senderID: PeerID
    /// The packet it acknowledges.
    public var packetID: PacketID

    /// Creates an acknowledgement.
    public init(senderID: PeerID, packetID: PacketID) {
        self.senderID = senderID
        self.packetID = packetID
    }

    /// Reads an acknowledgement from a received packet; `nil` if it is not one.
    public init?(packet: MeshPacket) {
        guard packet.type == .invisoHopAcknowledgement, let id = PacketID(bytes: packet.payload) else { return nil }
        self.init(senderID: packet.senderID, packetID: id)
    }

    /// The packet that carries this acknowledgement to `neighbour`.
    public func packet(to neighbour: PeerID?, timestamp: UInt64) -> MeshPacket {
        MeshPacket(
            type: .invisoHopAcknowledgement, ttl: 0, timestamp: timestamp, senderID: senderID,
            recipientID: neighbour, payload: packetID.bytes)
    }
}

extension MessageType {
    /// Inviso's per-hop acknowledgement (``HopAcknowledgement``): not a BitChat type.
    public static let invisoHopAcknowledgement = MessageType(rawValue: 0xE1)
    /// Inviso's hop-count envelope (``MeshFrame/datagrams(to:timestamp:hopCounts:)``): not a
    /// BitChat type.
    public static let invisoHopCounted = MessageType(rawValue: 0xE2)
    /// Inviso's envelope for a packet with per-hop acknowledgements riding on it
    /// (``MeshFrame/datagrams(to:timestamp:hopCounts:)``): not a BitChat type.
    public static let invisoAcknowledging = MessageType(rawValue: 0xE3)
}
