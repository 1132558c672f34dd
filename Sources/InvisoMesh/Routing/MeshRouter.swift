/// One node's mesh routing: duplicate suppression, TTL-bounded flooding with jitter and
/// counter-based suppression, next-hop forwarding of directed packets with per-hop
/// acknowledgements and a store-and-forward spool, and gossip sync.
///
/// It is a value-type state machine with no I/O and no clock: each input
/// (``linkUp(_:peer:now:)``, ``linkDown(_:now:)``, ``originate(_:now:)``,
/// ``receive(_:on:now:)``, ``tick(now:)``) takes the current time and returns the
/// ``Action``s the node must carry out, in order. Randomness (relay jitter, fan-out, sync
/// timing) comes from a seeded ``MeshRandom`` the router owns, so a run is reproducible
/// from its seed. `docs/mesh.md` ("Routing") describes the rules and why.
public struct MeshRouter: Sendable {
    // Stored properties in the order a packet's handling reads them: a simulation keeps
    // thousands of routers, and the fewer cache lines a packet touches the faster it runs.

    /// This node's peer ID.
    public let localID: PeerID
    /// The time of the latest input (routes older than their lifetime are not used).
    var currentTime = MeshTime(milliseconds: 0)
    var started = false
    var reportedWake: MeshTime?
    /// Links that are up, ascending (iteration order must not depend on hashing).
    var upLinks: [LinkID] = []
    var seen: DuplicateFilter
    var routes: RouteTable
    /// Relays waiting for their jitter, by ``PacketID/dedupKey`` (the key the duplicate
    /// filter already treats as the packet's identity).
    var pendingRelays: RandomKeyMap<PendingRelay>
    /// Counters.
    public internal(set) var statistics = Statistics()
    var timers = TimeOrderedQueue<Timer>()
    var random: MeshRandom
    var store: GossipStore
    var spool: RelaySpool
    var linkPeers: [LinkID: PeerID] = [:]
    var peerLinks: [PeerID: LinkID] = [:]
    var custody: [PacketID: Custody] = [:]
    /// Acknowledgements waiting to ride on a packet, by link (ascending; a node has few
    /// links, so a scan beats hashing), and when they go alone.
    var pendingAcknowledgements: [PendingAcknowledgements] = []
    /// No entry of ``pendingAcknowledgements`` is due before this.
    var firstAcknowledgementDue = MeshTime(milliseconds: .max)
    var syncRoundRobin = 0
    /// The last REQUEST_SYNC filter built, valid while the store's version is the same.
    var syncFilterCache: (storeVersion: UInt64, filter: GolombCodedSet, since: UInt64?)?
    var responseLog: [LinkID: [MeshTime]] = [:]
    var lastReversePull: [LinkID: MeshTime] = [:]
    var lastRoutePrune = MeshTime(milliseconds: 0)
    /// The parameters.
    public let configuration: Configuration

    /// A relay waiting for its jitter to pass.
    struct PendingRelay {
        var packet: MeshPacket
        /// The links that sent this node the packet (they need no relay).
        var heardFrom: LinkSet
        var duplicates: Int
    }

    /// Acknowledgements for the neighbour on one link, waiting for a packet to ride on.
    struct PendingAcknowledgements {
        var link: LinkID
        var due: MeshTime
        var acknowledgements: [HopAcknowledgement]
    }

    /// A directed packet sent to a next hop and not yet acknowledged.
    struct Custody {
        var packet: MeshPacket
        var recipient: PeerID
        var link: LinkID
        var attempts: Int
        var tried: [LinkID]
        var upstream: LinkID?
        var isLocal: Bool
    }

    enum Timer {
        case relay(PacketID)
        case acknowledgement(PacketID, attempt: Int)
        case acknowledgementsDue
        case periodicSync
        case linkSync(LinkID)
        case maintenance
    }

    /// Creates a router.
    /// - Parameters:
    ///   - localID: this node's peer ID.
    ///   - configuration: the parameters.
    ///   - seed: seeds the router's ``MeshRandom`` (use a random seed in a real node, a
    ///     fixed one in tests and simulations).
    public init(localID: PeerID, configuration: Configuration = Configuration(), seed: UInt64) {
        self.localID = localID
        self.configuration = configuration
        random = MeshRandom(seed: seed)
        seen = DuplicateFilter(
            windowMilliseconds: configuration.duplicateWindowMilliseconds,
            minimumCapacity: configuration.duplicateMinimumCapacity)
        // Seeds for the hash tables, derived without drawing from `random`.
        var tableSeeds = MeshRandom(seed: seed ^ 0x7AB1_E5EE_D5A1_7000)
        store = GossipStore(
            capacity: configuration.syncStoreCapacity, announceCapacity: configuration.announceStoreCapacity,
            seed: tableSeeds.next())
        routes = RouteTable(seed: tableSeeds.next())
        pendingRelays = RandomKeyMap(seed: tableSeeds.next())
        spool = RelaySpool(capacity: configuration.spoolCapacity)
    }

    // MARK: - Inputs

    /// A link came up. `peer` is the neighbour's peer ID if the link knows it (a BLE link
    /// learns it from the neighbour's announce; call again with the ID when it does).
    /// Directed packets spooled for that peer go out on the link.
    public mutating func linkUp(_ link: LinkID, peer: PeerID?, now: MeshTime) -> [Action] {
        var actions: [Action] = []
        start(now: now)
        if !upLinks.contains(link) {
            upLinks.insert(link, at: upLinks.firstIndex { $0 > link } ?? upLinks.count)
            timers.insert(.linkSync(link), at: now.adding(milliseconds: configuration.linkUpSyncDelayMilliseconds).milliseconds)
        }
        if let peer {
            if let old = linkPeers[link], old != peer { peerLinks[old] = nil }
            linkPeers[link] = peer
            peerLinks[peer] = link
            flushSpool(for: peer, now: now, into: &actions)
        }
        finish(&actions, from: 0)
        return actions
    }

    /// A link went down: its routes are dropped and directed packets waiting for its
    /// acknowledgement try another way at once.
    public mutating func linkDown(_ link: LinkID, now: MeshTime) -> [Action] {
        var actions: [Action] = []
        start(now: now)
        guard let index = upLinks.firstIndex(of: link) else { return actions }
        upLinks.remove(at: index)
        if let peer = linkPeers.removeValue(forKey: link), peerLinks[peer] == link { peerLinks[peer] = nil }
        routes.remove(link: link)
        responseLog[link] = nil
        lastReversePull[link] = nil
        pendingAcknowledgements.removeAll { $0.link == link }
        let waiting = custody.filter { $0.value.link == link }.keys.sorted { ($0.high, $0.low) < ($1.high, $1.low) }
        for id in waiting { giveUpOnHop(id, now: now, into: &actions) }
        finish(&actions, from: 0)
        return actions
    }

    /// Sends a packet this node made: a broadcast goes to every link at once; a directed
    /// packet goes to its next hop (reported with ``Action/report(_:_:)``), or is flooded
    /// and spooled when no route is known. The router sets the TTL to
    /// ``Configuration/originTTL``.
    public mutating func originate(_ packet: MeshPacket, now: MeshTime) -> [Action] {
        originate(packet, id: PacketID(packet), now: now)
    }

    /// ``originate(_:now:)`` with the packet's ID already computed.
    public mutating func originate(_ packet: MeshPacket, id: PacketID, now: MeshTime) -> [Action] {
        var actions: [Action] = []
        originate(packet, id: id, now: now, into: &actions)
        return actions
    }

    /// ``originate(_:id:now:)``, appending the actions to `actions` (a caller that handles
    /// many inputs reuses one array).
    public mutating func originate(_ packet: MeshPacket, id: PacketID, now: MeshTime, into actions: inout [Action]) {
        let first = actions.count
        start(now: now)
        var packet = packet
        packet.ttl = configuration.originTTL
        packet.isRSR = false
        _ = seen.insert(id, now: now)
        if packet.isBroadcast {
            if isSyncable(packet) { store.insert(packet, id: id) }
            if !upLinks.isEmpty { actions.append(.transmit(packet, id: id, links: upLinks, hops: advertisedHops(from: localID))) }
        } else {
            forwardDirected(packet, id: id, from: nil, isLocal: true, now: now, into: &actions)
        }
        finish(&actions, from: first)
    }

    /// A frame arrived on `link`.
    public mutating func receive(_ frame: MeshFrame, on link: LinkID, now: MeshTime) -> [Action] {
        var actions: [Action] = []
        receive(frame, on: link, now: now, into: &actions)
        return actions
    }

    /// ``receive(_:on:now:)``, appending the actions to `actions`.
    public mutating func receive(_ frame: MeshFrame, on link: LinkID, now: MeshTime, into actions: inout [Action]) {
        let first = actions.count
        start(now: now)
        switch frame {
        case .packet(let packet, let id, let hops, let acknowledgements):
            for acknowledgement in acknowledgements {
                handleAcknowledgement(acknowledgement, on: link, now: now, into: &actions)
            }
            if let acknowledgement = HopAcknowledgement(packet: packet) {
                handleAcknowledgement(acknowledgement, on: link, now: now, into: &actions)
            } else {
                let counted = hops == 0 || !configuration.hopCountRouting ? RouteTable.unknownHops : hops
                handlePacket(packet, id: id, hops: counted, on: link, now: now, into: &actions)
            }
        case .syncRequest(let request):
            handleSyncRequest(request, on: link, now: now, into: &actions)
        case .acknowledgement(let acknowledgement):
            handleAcknowledgement(acknowledgement, on: link, now: now, into: &actions)
        }
        finish(&actions, from: first)
    }

    /// A packet arrived on `link` (computes its ID).
    public mutating func receive(_ packet: MeshPacket, on link: LinkID, now: MeshTime) -> [Action] {
        receive(.packet(packet, id: PacketID(packet)), on: link, now: now)
    }

    /// Runs the timers that are due: relays whose jitter has passed, acknowledgement
    /// timeouts, sync rounds and maintenance.
    public mutating func tick(now: MeshTime) -> [Action] {
        var actions: [Action] = []
        tick(now: now, into: &actions)
        return actions
    }

    /// ``tick(now:)``, appending the actions to `actions`.
    public mutating func tick(now: MeshTime, into actions: inout [Action]) {
        let first = actions.count
        start(now: now)
        while let (_, timer) = timers.popFirst(notAfter: now.milliseconds) {
            switch timer {
            case .relay(let id): fireRelay(id, now: now, into: &actions)
            case .acknowledgement(let id, let attempt): acknowledgementTimedOut(id, attempt: attempt, now: now, into: &actions)
            case .acknowledgementsDue: break  // `finish` sends what is due
            case .periodicSync: periodicSync(now: now, into: &actions)
            case .linkSync(let link): if upLinks.contains(link) { sendSyncRequest(on: link, now: now, into: &actions) }
            case .maintenance: maintain(now: now, into: &actions)
            }
        }
        reportedWake = nil
        finish(&actions, from: first)
    }

    /// When ``tick(now:)`` next has work, if ever.
    public var nextDeadline: MeshTime? { timers.earliestTime.map(MeshTime.init(milliseconds:)) }

    // MARK: - Queries

    /// The links that are up, ascending.
    public var links: [LinkID] { upLinks }

    /// The next hop towards `peer`, if a route is known.
    public func nextHop(to peer: PeerID) -> LinkID? {
        if let link = peerLinks[peer] { return link }
        return routes.nextHop(to: peer, excluding: nil, now: currentTime, lifetime: configuration.routeLifetimeMilliseconds) {
            upLinks.contains($0)
        }
    }

    /// How many peers this node has a route to.
    public var routeCount: Int { routes.count }

    /// How many directed packets wait in the spool.
    public var spooledCount: Int { spool.count }

    /// How many packet IDs the duplicate filter remembers, and its current capacity.
    public var duplicateFilterSize: (count: Int, capacity: Int) { (seen.count, seen.capacity) }

    /// Whether this node has seen the packet.
    public func hasSeen(_ id: PacketID) -> Bool { seen.contains(id) }

    // MARK: - Plumbing

    mutating func start(now: MeshTime) {
        currentTime = now
        guard !started else { return }
        started = true
        let interval = configuration.syncIntervalMilliseconds
        if interval > 0 {
            timers.insert(.periodicSync, at: now.adding(milliseconds: Int64(random.int(in: 0...Int(interval)))).milliseconds)
        }
        timers.insert(.maintenance, at: now.adding(milliseconds: configuration.maintenanceIntervalMilliseconds).milliseconds)
    }

    /// Ends an input: acknowledgements ride on this input's packets (`actions[first...]`)
    /// or go alone when due, and a new wake-up time is reported.
    mutating func finish(_ actions: inout [Action], from first: Int) {
        if !pendingAcknowledgements.isEmpty { sendPendingAcknowledgements(&actions, from: first) }
        guard let next = nextDeadline else { return }
        if reportedWake == nil || next < reportedWake! {
            actions.append(.schedule(at: next))
            reportedWake = next
        }
    }

    func isSyncable(_ packet: MeshPacket) -> Bool {
        guard packet.isBroadcast else { return false }
        switch packet.type {
        case .announce, .message, .fragment, .fileTransfer: return true
        default: return false
        }
    }

    /// The hop count to send a packet from `origin` with: 1 from its origin, else this
    /// node's hops from `origin` plus one; 0 (unknown) without a count or with hop-count
    /// routing off.
    func advertisedHops(from origin: PeerID) -> UInt8 {
        guard configuration.hopCountRouting else { return 0 }
        if origin == localID { return 1 }
        guard let hops = routes.hops(to: origin), hops < RouteTable.unknownHops - 1 else { return 0 }
        return hops + 1
    }

    func isUp(_ link: LinkID) -> Bool {
        // Links are few (a BLE node holds under ten); a linear scan beats hashing.
        upLinks.contains(link)
    }
}
