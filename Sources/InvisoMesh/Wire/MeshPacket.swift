/// One BitChat packet: the outer frame every mesh message travels in (version 1 with a
/// 14-byte header, version 2 with a 16-byte header and optional source route).
///
/// The value holds the fields as they are on the wire: ``payload`` is the carried bytes
/// (still compressed when ``isCompressed`` is set), so a relay that forwards a decoded
/// packet re-encodes exactly what it received. Encoding and decoding live in
/// `MeshPacket+Codec.swift`.
public struct MeshPacket: Hashable, Sendable {
    /// Protocol version: 1 or 2.
    public var version: UInt8
    /// The packet type.
    public var type: MessageType
    /// Hops left; a relay forwards only while it is above zero after decrementing.
    public var ttl: UInt8
    /// Milliseconds since the Unix epoch, set by the origin.
    public var timestamp: UInt64
    /// The origin's peer ID.
    public var senderID: PeerID
    /// The addressee of a directed packet; `nil` for a broadcast.
    public var recipientID: PeerID?
    /// A source route of intermediate hops (version 2 only); `nil` when absent.
    public var route: [PeerID]?
    /// The payload bytes as carried: when ``isCompressed``, the original-size prefix (v1
    /// u16, v2 u32) followed by the raw DEFLATE stream; read it with
    /// ``decompressedPayload(limit:)``.
    public var payload: [UInt8]
    /// Whether ``payload`` is compressed (flag 0x04).
    public var isCompressed: Bool
    /// Whether this is a request-sync response (flag 0x10, RSR).
    public var isRSR: Bool
    /// The origin's 64-byte Ed25519 signature over the signing encoding; `nil` when unsigned.
    public var signature: [UInt8]?

    /// Creates a packet.
    public init(
        version: UInt8 = 1, type: MessageType, ttl: UInt8, timestamp: UInt64, senderID: PeerID,
        recipientID: PeerID? = nil, route: [PeerID]? = nil, payload: [UInt8], isCompressed: Bool = false,
        isRSR: Bool = false, signature: [UInt8]? = nil
    ) {
        self.version = version
        self.type = type
        self.ttl = ttl
        self.timestamp = timestamp
        self.senderID = senderID
        self.recipientID = recipientID
        self.route = route
        self.payload = payload
        self.isCompressed = isCompressed
        self.isRSR = isRSR
        self.signature = signature
    }

    /// Whether the packet is addressed to everyone (no recipient, or the all-`0xFF` ID).
    public var isBroadcast: Bool { recipientID == nil || recipientID == .broadcast }
}
