/// What travels over one link: a mesh packet, or one of the two link-local control
/// messages the router exchanges with a neighbour.
///
/// A link that carries bytes (UDP, BLE) encodes each case as a BitChat packet:
/// ``packet(_:id:hops:acknowledgements:)`` as itself (or, between Inviso nodes, with a hop
/// count in our `0xE2` envelope and with acknowledgements riding on it in our `0xE3`
/// envelope: see ``datagrams(to:timestamp:hopCounts:)``); ``syncRequest(_:)`` as a
/// REQUEST_SYNC packet (see ``SyncRequest``); ``acknowledgement(_:)`` as our `0xE1` packet
/// (see ``HopAcknowledgement``). The in-process simulator passes the values as they are.
public enum MeshFrame: Hashable, Sendable {
    /// A packet, with its ID (computed once by whoever first held the packet; a receiving
    /// link that decodes bytes computes it again with ``PacketID/init(_:)``), and the hops
    /// from its origin to the receiver along the sender's best known path: 1 from the origin
    /// itself, 0 when unknown. Routers prefer next hops with fewer (see `docs/mesh.md`,
    /// "Directed packets"). BitChat has no such field: between Inviso nodes a link carries
    /// it in our `0xE2` envelope (``MessageType/invisoHopCounted``), and a link to a BitChat
    /// client sends the bare packet.
    ///
    /// `acknowledgements` are per-hop acknowledgements from the sending node riding on the
    /// frame (see ``MeshRouter/Configuration/acknowledgementDelayMilliseconds``); between
    /// Inviso nodes they travel in our `0xE3` envelope, to a BitChat client as separate
    /// `0xE1` packets.
    case packet(MeshPacket, id: PacketID, hops: UInt8 = 0, acknowledgements: [HopAcknowledgement] = [])
    /// A REQUEST_SYNC to this neighbour.
    case syncRequest(SyncRequest)
    /// A per-hop acknowledgement to this neighbour.
    case acknowledgement(HopAcknowledgement)
}
