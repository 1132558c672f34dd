extension MeshRouter {
    /// What the router asks its node to do, in order.
    public enum Action: Sendable {
        /// Send `packet` on each of `links` (one transmission per link), telling the
        /// neighbours it is `hops` links from its origin when they get it (0: unknown; see
        /// ``MeshFrame/packet(_:id:hops:acknowledgements:)``).
        case transmit(MeshPacket, id: PacketID, links: [LinkID], hops: UInt8 = 0)
        /// Send `packet` on `link` with these acknowledgements riding on it (one
        /// transmission; ``MeshFrame/packet(_:id:hops:acknowledgements:)``).
        case transmitWithAcknowledgements(
            MeshPacket, id: PacketID, link: LinkID, hops: UInt8, acknowledgements: [HopAcknowledgement])
        /// Send a REQUEST_SYNC to the neighbour on `link`.
        case sendSyncRequest(SyncRequest, link: LinkID)
        /// Send a per-hop acknowledgement to the neighbour on `link`.
        case sendAcknowledgement(HopAcknowledgement, link: LinkID)
        /// Hand a packet to the application: a broadcast, or a directed packet for this node.
        /// Each packet is delivered once.
        case deliver(MeshPacket, id: PacketID)
        /// News about a directed packet this node originated, for an outbox that resends.
        case report(PacketID, DeliveryReport)
        /// Call ``MeshRouter/tick(now:)`` at (or soon after) this time.
        case schedule(at: MeshTime)
    }

    /// What became of a directed packet this node originated.
    public enum DeliveryReport: Sendable, Hashable {
        /// The next hop (or the recipient itself) took custody: it acknowledged the packet.
        /// `by` is the neighbour's peer ID when the link knows it.
        case acknowledged(by: PeerID?)
        /// No route was known: the packet was flooded (TTL-limited, no acknowledgement
        /// will follow) and kept in the spool in case a route appears.
        case flooded
        /// The router gave up; the outbox may resend later.
        case failed(FailureReason)
    }

    /// Why a directed packet was given up.
    public enum FailureReason: Sendable, Hashable {
        /// It waited in the spool longer than the spool window.
        case spoolExpired
        /// The spool was full and this was the oldest packet in it.
        case spoolOverflow
    }

    /// Counters for tests and benchmarks.
    public struct Statistics: Sendable, Hashable {
        /// Packets received (all frames carrying a packet, duplicates included).
        public var packetsReceived = 0
        /// Of those, copies of packets already seen.
        public var duplicates = 0
        /// Relays scheduled, then cancelled because enough duplicates arrived or no link
        /// was left that had not sent the packet.
        public var relaysSuppressed = 0
        /// Broadcasts not relayed because their TTL ran out.
        public var ttlExpired = 0
        /// Relays transmitted (each may go to several links).
        public var relaysSent = 0
        /// Directed packets sent by unicast (first attempts and retries).
        public var unicastsSent = 0
        /// Of those, retries after a missing acknowledgement.
        public var retransmissions = 0
        /// Directed packets flooded for lack of a route.
        public var directedFloods = 0
        /// Packets put in the spool.
        public var spooled = 0
        /// REQUEST_SYNCs sent.
        public var syncRequestsSent = 0
        /// REQUEST_SYNCs answered (rate limiting may drop some).
        public var syncRequestsAnswered = 0
        /// Packets sent in answer to REQUEST_SYNCs.
        public var syncResponsesSent = 0
        /// Acknowledgements sent in transmissions of their own.
        public var acknowledgementsSent = 0
        /// Acknowledgements that rode on a packet sent on the same link.
        public var acknowledgementsPiggybacked = 0

        /// All zero.
        public init() {}
    }
}
