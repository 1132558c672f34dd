/// A REQUEST_SYNC as the router sees it: "here are the packets I have; send me what I
/// lack".
///
/// On the wire it is a ``MessageType/requestSync`` packet (TTL 0: BitChat never relays it)
/// addressed to one neighbour, whose payload carries the filter's `P`, `M` and data, and
/// optionally the since-cursor, as TLVs. Turning this value into that packet and back is
/// the packet codec's job (`RequestSyncPayload` in the wire layer); the router only builds
/// and reads the filter.
public struct SyncRequest: Hashable, Sendable {
    /// The requesting node.
    public var senderID: PeerID
    /// When it was made (milliseconds since the epoch).
    public var timestamp: UInt64
    /// The packets the requester has.
    public var filter: GolombCodedSet
    /// When the filter could not hold everything: the oldest packet timestamp it covers.
    /// Older packets are not missing, just not listed (BitChat's `sinceTimestamp` TLV).
    public var sinceTimestamp: UInt64?

    /// Creates a request.
    public init(senderID: PeerID, timestamp: UInt64, filter: GolombCodedSet, sinceTimestamp: UInt64? = nil) {
        self.senderID = senderID
        self.timestamp = timestamp
        self.filter = filter
        self.sinceTimestamp = sinceTimestamp
    }
}
