extension MeshRouter {
    /// The router's parameters. The defaults are the ones `inviso bench mesh` measured
    /// (see `docs/mesh.md`); where a value comes from BitChat the comment says where.
    public struct Configuration: Sendable {
        // MARK: Flooding

        /// TTL of packets this node originates. BitChat: 7
        /// (`TransportConfig.messageTTLDefault`).
        public var originTTL: UInt8 = 7
        /// At or above this many links a node counts as dense and clamps harder. BitChat: 6
        /// (`TransportConfig.bleHighDegreeThreshold`).
        public var highDegreeThreshold = 6
        /// Largest TTL a dense node relays with (before the decrement). BitChat: 5.
        public var denseTTLLimit: UInt8 = 5
        /// Largest TTL a node of middling degree relays with (before the decrement); the
        /// announce limit is ``announceTTLLimit``. BitChat: 6 (7 for announces).
        public var preferredTTLLimit: UInt8 = 6
        /// Largest TTL an announce is relayed with at middling degree. BitChat: 7.
        public var announceTTLLimit: UInt8 = 7
        /// A node with at most this many links relays at full incoming depth (a thin chain).
        /// BitChat: 2.
        public var sparseDegree = 2
        /// Relay jitter in milliseconds by degree (≤ 2, 3–5, 6–9, ≥ 10). BitChat:
        /// 10–40, 60–150, 80–180, 100–220 (`RelayController`, permissionlesstech/bitchat
        /// `bitchat/Services/RelayController.swift`, read at the stanley-fork/bitchat
        /// mirror @295f855b).
        public var broadcastJitter: [ClosedRange<Int>] = [10...40, 60...150, 80...180, 100...220]
        /// TTL with which a node floods a directed packet it has no route for, and the
        /// largest a relay of such a flood keeps (our extension; BitChat floods with
        /// ``originTTL``). It matches ``announceRadius``: every node within that many hops of
        /// the recipient has a route to it, so a flood this deep finds the recipient up to
        /// twice the radius away (proactive routes inside a zone, a flood to its border
        /// beyond it, as in the Zone Routing Protocol). BitChat relays clamp it to 7.
        public var directedFloodTTL: UInt8 = 20
        /// Jitter for flooding directed packets (BitChat: 20–60 ms).
        public var directedJitter: ClosedRange<Int> = 20...60
        /// Counter-based suppression: a scheduled relay is cancelled when this many
        /// duplicate copies arrived while it waited. BitChat cancels on the first duplicate
        /// once a node has more than 2 links (`BLEReceivePipeline`).
        public var suppressionThreshold = 2
        /// The suppression counter applies only above this many links (a chain node must
        /// relay whatever it hears). BitChat: 2.
        public var suppressionMinimumDegree = 2
        /// How many of the links that have not sent us the packet a relay of a public
        /// broadcast goes to. Announces, fragments and directed packets always go to all of
        /// them, as in BitChat (`BLEFanoutSelector.shouldSubset`, permissionlesstech/bitchat
        /// `bitchat/Services/BLE/BLEFanoutSelector.swift`@3fb94862): announces teach routes,
        /// and a fragment lost to one subset stalls a whole reassembly.
        public var fanOut: FanOut = .logarithmic

        // MARK: Duplicate suppression

        /// How long a packet ID is remembered, in milliseconds: the sync age limit, so a
        /// sync response can never bring back a packet the node has forgotten.
        public var duplicateWindowMilliseconds: Int64 = 900_000
        /// The duplicate filter's smallest capacity; it grows with the traffic rate.
        public var duplicateMinimumCapacity = 1_024

        // MARK: Directed packets

        /// How long a node waits for a next hop's acknowledgement beyond the next hop's
        /// ``acknowledgementDelayMilliseconds``, in milliseconds.
        public var acknowledgementTimeoutMilliseconds: Int64 = 250
        /// How long an acknowledgement may wait for a packet this node sends on the same
        /// link anyway, to ride on it (our `0xE3` envelope) instead of costing a
        /// transmission of its own, in milliseconds; 0 sends each at once. A sender waits
        /// this long plus ``acknowledgementTimeoutMilliseconds`` before it retries, so every
        /// node of a mesh should use the same value. `docs/mesh.md`, "Direct messages: what
        /// per-hop acknowledgements cost".
        public var acknowledgementDelayMilliseconds: Int64 = 500
        /// Transmissions to one next hop before trying another way.
        public var attemptsPerHop = 3
        /// How long a learned route stays usable without being refreshed, in milliseconds.
        public var routeLifetimeMilliseconds: Int64 = 600_000
        /// Whether packets this node sends carry its hop count from their origin, and routes
        /// prefer the neighbour with the fewest hops (our extension; BitChat has no hop
        /// count). Off, a route follows the first copy of the newest packet.
        public var hopCountRouting = true
        /// How long a route with the fewest hops is kept while copies with more hops come
        /// over other links, without a copy over its own link, in milliseconds. After that a
        /// newer packet's first copy replaces it whatever its hop count.
        public var routeMetricWindowMilliseconds: Int64 = 120_000
        /// How long a relay keeps a directed packet it could not forward (store-and-forward),
        /// in milliseconds. BitChat keeps 15 s (`bleDirectedSpoolWindowSeconds`); we keep
        /// longer because the peer may be away for a while.
        public var spoolWindowMilliseconds: Int64 = 300_000
        /// Packets the spool holds at most (oldest dropped first).
        public var spoolCapacity = 512

        // MARK: Gossip sync

        /// Mean time between periodic REQUEST_SYNCs, in milliseconds (each goes to one
        /// neighbour, round-robin; ±50 % jitter). BitChat sends every 15 s to every
        /// connected peer (`GossipSyncManager.Config.messageSyncIntervalSeconds`).
        public var syncIntervalMilliseconds: Int64 = 5_000
        /// Delay before syncing with a link that just came up. BitChat: 5 s.
        public var linkUpSyncDelayMilliseconds: Int64 = 1_000
        /// Filter size budget in bytes. BitChat: 400 (`gcsMaxBytes`), which keeps a
        /// REQUEST_SYNC within one BLE write.
        public var syncFilterMaxBytes = 400
        /// Target false-positive rate of the filter. BitChat: 0.01 (P = 7).
        public var syncFalsePositiveRate = 0.01
        /// Oldest packet (by its timestamp) the node stores and serves, in milliseconds.
        /// BitChat: 900 s (`maxMessageAgeSeconds`).
        public var syncMaxAgeMilliseconds: Int64 = 900_000
        /// Oldest announce the node serves, in milliseconds. BitChat drops announces older
        /// than 60 s (`stalePeerTimeoutSeconds`); we keep them as long as messages, since
        /// routes beyond the TTL horizon are learned from them.
        public var announceMaxAgeMilliseconds: Int64 = 900_000
        /// Broadcast packets kept for sync (besides the newest announce of each peer).
        /// BitChat: 1,000 (`seenCapacity`).
        public var syncStoreCapacity = 1_000
        /// Announces kept for sync (the newest per peer).
        public var announceStoreCapacity = 1_000
        /// Requests from one link answered per ``syncResponseWindowMilliseconds``. BitChat: 8
        /// per 30 s.
        public var syncResponsesPerWindow = 8
        /// The window of ``syncResponsesPerWindow``, in milliseconds.
        public var syncResponseWindowMilliseconds: Int64 = 30_000
        /// When a received filter shows that the requester has packets this node lacks, this
        /// node asks back at once (at most once per link per this many milliseconds; 0
        /// disables it).
        public var reversePullIntervalMilliseconds: Int64 = 1_000
        /// TTL with which a broadcast first obtained through a sync response is relayed
        /// onward (our extension; 0 = BitChat's behaviour, where such a packet stays at
        /// TTL 0 and spreads one sync round per hop).
        public var syncRelayTTL: UInt8 = 7
        /// Announces travel this many hops from their origin at most (our extension; 0: no
        /// limit, as in BitChat). A node whose hop count from an announce's origin is at
        /// least this neither relays the announce nor keeps it for sync, so each announce
        /// costs a ball of this radius instead of the whole mesh. Only counted copies are
        /// limited: an announce from a BitChat client carries no count and spreads as before.
        public var announceRadius: UInt8 = 20

        // MARK: Maintenance

        /// How often routes, spool and stores are pruned, in milliseconds.
        public var maintenanceIntervalMilliseconds: Int64 = 5_000

        /// The defaults.
        public init() {}
    }

    /// How many links a relay transmits to, of those that have not already sent it the
    /// packet.
    public enum FanOut: Sendable, Hashable {
        /// All of them.
        case all
        /// BitChat's subset for broadcasts: all when there are at most 2, else
        /// `bitLength(count - 1) + 1` of them (`BLEFanoutSelector.subsetSize`,
        /// permissionlesstech/bitchat `bitchat/Services/BLE/BLEFanoutSelector.swift`@3fb94862).
        case logarithmic
        /// At most this many.
        case atMost(Int)

        /// How many of `count` links a relay goes to.
        public func size(for count: Int) -> Int {
            switch self {
            case .all: return count
            case .logarithmic:
                guard count > 2 else { return count }
                let bits = Int.bitWidth - (count - 1).leadingZeroBitCount
                return min(count, max(1, bits + 1))
            case .atMost(let limit): return min(count, max(1, limit))
            }
        }
    }
}
