/// Next hops towards other peers, learned backwards from the packets they send, preferring
/// the neighbour that is fewest hops from the peer.
///
/// Every copy of a packet from `origin` that arrives on link `L` says "`L` leads back
/// towards `origin`". Between Inviso nodes a copy also carries a hop count (see
/// ``MeshFrame/packet(_:id:hops:acknowledgements:)``): the links from the origin to this node along the
/// sender's best known path. A node keeps, per origin, the link with the lowest hop count,
/// and the next lowest on another link as the alternate:
///
/// - a copy with fewer hops on another link takes over (the old link becomes the alternate);
/// - a copy on the route's own link is a fresh measurement of that path: its hop count
///   replaces the route's, and the route counts as confirmed;
/// - a route not confirmed for ``Configuration`` `routeMetricWindowMilliseconds` is stale:
///   the first copy of a newer packet on any link replaces it, whatever its hop count.
///
/// Copies without a hop count (from BitChat neighbours, or forwarded by one) rank after
/// every counted one; among themselves the first copy of the newest packet wins, as in a
/// time-of-arrival tree. Following next hops from such a tree leads to nodes that had the
/// packet earlier, so it cannot loop; with hop counts each next hop claimed a smaller
/// count when it was chosen.
struct RouteTable {
    /// Hop count of a copy that carried none.
    static let unknownHops: UInt8 = .max

    struct Route {
        var link: LinkID
        var alternate: LinkID?
        /// Hops from the origin over `link` and over `alternate` (``unknownHops``: unknown).
        var hops: UInt8
        var alternateHops: UInt8
        /// Timestamp of the newest packet from the origin seen.
        var packetTimestamp: UInt64
        /// When a copy last came over `link` (the route is used for its lifetime after that).
        var learnedAt: MeshTime
    }

    private var routes: RandomKeyMap<Route>

    /// Creates an empty table; `seed` keys its hash table (secret in a real node).
    init(seed: UInt64) { routes = RandomKeyMap(seed: seed) }

    var count: Int { routes.count }

    func route(to peer: PeerID) -> Route? { routes[peer.rawValue] }

    /// Hops from `peer` to this node over the route, if known.
    func hops(to peer: PeerID) -> UInt8? {
        guard let hops = routes[peer.rawValue]?.hops, hops != Self.unknownHops else { return nil }
        return hops
    }

    /// Learns from a copy of a packet from `origin` (timestamp `packetTimestamp`) arriving
    /// on `link` having crossed `hops` links (``unknownHops`` when it did not say). `isFirst`
    /// is true for the first copy of the packet this node has seen.
    mutating func learn(
        origin: PeerID, link: LinkID, hops: UInt8, packetTimestamp: UInt64, isFirst: Bool, now: MeshTime,
        metricWindow: Int64
    ) {
        guard var route = routes[origin.rawValue] else {
            routes[origin.rawValue] = Route(
                link: link, alternate: nil, hops: hops, alternateHops: Self.unknownHops,
                packetTimestamp: packetTimestamp, learnedAt: now)
            return
        }
        if hops == Self.unknownHops, route.hops == Self.unknownHops {
            learnByArrival(&route, link: link, packetTimestamp: packetTimestamp, isFirst: isFirst, now: now)
            routes[origin.rawValue] = route
            return
        }
        let isNewer = packetTimestamp > route.packetTimestamp
        if link == route.link {
            // The same neighbour again: a fresh measurement of this path.
            if isNewer || hops < route.hops { route.hops = hops }
            if packetTimestamp >= route.packetTimestamp { route.learnedAt = now }
        } else {
            let stale = now.milliseconds(since: route.learnedAt) > metricWindow
            let takesOver = hops < route.hops || (isNewer && isFirst && stale)
            if takesOver {
                route.alternate = route.link
                route.alternateHops = route.hops
                route.link = link
                route.hops = hops
                route.learnedAt = now
            } else if route.alternate == link {
                if isNewer || hops < route.alternateHops { route.alternateHops = hops }
            } else if route.alternate == nil || hops < route.alternateHops {
                route.alternate = link
                route.alternateHops = hops
            }
        }
        if isNewer { route.packetTimestamp = packetTimestamp }
        routes[origin.rawValue] = route
    }

    /// Without hop counts: the first copy of the newest packet sets the route, and another
    /// link that brought a copy of that packet becomes the alternate.
    private func learnByArrival(
        _ route: inout Route, link: LinkID, packetTimestamp: UInt64, isFirst: Bool, now: MeshTime
    ) {
        guard isFirst else {
            if packetTimestamp == route.packetTimestamp, route.link != link, route.alternate == nil {
                route.alternate = link
            }
            return
        }
        guard packetTimestamp >= route.packetTimestamp else {
            if route.alternate == nil, route.link != link { route.alternate = link }
            return
        }
        if route.link != link {
            route.alternate = route.link
            route.alternateHops = route.hops
        }
        route.link = link
        route.packetTimestamp = packetTimestamp
        route.learnedAt = now
    }

    /// The next hop towards `peer`, skipping `excluded` and links not in `isUp`.
    func nextHop(
        to peer: PeerID, excluding excluded: LinkID?, now: MeshTime, lifetime: Int64, isUp: (LinkID) -> Bool
    ) -> LinkID? {
        guard let route = routes[peer.rawValue], now.milliseconds(since: route.learnedAt) <= lifetime else { return nil }
        if route.link != excluded, isUp(route.link) { return route.link }
        if let alternate = route.alternate, alternate != excluded, isUp(alternate) { return alternate }
        return nil
    }

    /// Drops `link` from every route (promoting alternates); routes left without a link go.
    mutating func remove(link: LinkID) {
        routes.updateEach { _, route in
            if route.link == link {
                guard route.alternate != nil else { return false }
                route.promoteAlternate()
            } else if route.alternate == link {
                route.alternate = nil
                route.alternateHops = Self.unknownHops
            }
            return true
        }
    }

    /// Forgets that `link` leads to `peer` (it failed to deliver).
    mutating func forget(link: LinkID, for peer: PeerID) {
        guard var route = routes[peer.rawValue] else { return }
        if route.link == link {
            guard route.alternate != nil else {
                routes[peer.rawValue] = nil
                return
            }
            route.promoteAlternate()
        } else if route.alternate == link {
            route.alternate = nil
            route.alternateHops = Self.unknownHops
        }
        routes[peer.rawValue] = route
    }

    /// Drops routes not refreshed within `lifetime` milliseconds.
    mutating func expire(now: MeshTime, lifetime: Int64) {
        routes.updateEach { _, route in now.milliseconds(since: route.learnedAt) <= lifetime }
    }
}

extension RouteTable.Route {
    /// The alternate becomes the route, with its hop count; there is no alternate after.
    mutating func promoteAlternate() {
        guard let alternate else { return }
        link = alternate
        hops = alternateHops
        self.alternate = nil
        alternateHops = RouteTable.unknownHops
    }
}
