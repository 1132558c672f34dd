/// What travels over one link: a mesh packet, or one of the two link-local control
/// messages the router exchanges with a neighbour.
///
/// A link that carries bytes (UDP, BLE) encodes each case as a BitChat packet:
/// ``packet(_:id:)`` as itself; ``syncRequest(_:)`` as a REQUEST_SYNC packet (see
/// ``SyncRequest``); ``acknowledgement(_:)`` as our `0xE1` packet (see
/// ``HopAcknowledgement``). The in-process simulator passes the values as they are.
public enum MeshFrame: Hashable, Sendable {
    /// A packet, with its ID (computed once by whoever first held the packet; a receiving
    /// link that decodes bytes computes it again with ``PacketID/init(_:)``).
    case packet(MeshPacket, id: PacketID)
    /// A REQUEST_SYNC to this neighbour.
    case syncRequest(SyncRequest)
    /// A per-hop acknowledgement to this neighbour.
    case acknowledgement(HopAcknowledgement)
}
