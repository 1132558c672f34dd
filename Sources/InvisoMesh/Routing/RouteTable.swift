/// Next hops towards other peers, learned backwards from the packets they send.
///
/// When the first copy of a new packet from `origin` arrives on link `L`, `L` leads back
/// towards `origin` (the copy that came fastest). Announces are the steady source: every
/// node announces, announces flood and are carried further by gossip sync, so every node
/// learns a next hop towards every announcing peer. A newer packet from the same origin
/// (by its timestamp) replaces the route; the link of the second copy of the same packet
/// is kept as the alternate. Following next hops always leads to nodes that received that
/// origin's packet earlier, so routes learned from one packet cannot loop.
struct RouteTable {
    struct Route {
        var link: LinkID
        var alternate: LinkID?
        /// Timestamp of the packet the route was learned from.
        var packetTimestamp: UInt64
        var learnedAt: MeshTime
    }

    private var routes: RandomKeyMap<Route>

    /// Creates an empty table; `seed` keys its hash table (secret in a real node).
    init(seed: UInt64) { routes = RandomKeyMap(seed: seed) }

    var count: Int { routes.count }

    func route(to peer: PeerID) -> Route? { routes[peer.rawValue] }

    /// Learns from the first copy of a new packet from `origin` arriving on `link`.
    mutating func learn(origin: PeerID, link: LinkID, packetTimestamp: UInt64, now: MeshTime) {
        if var route = routes[origin.rawValue] {
            guard packetTimestamp >= route.packetTimestamp else {
                if route.alternate == nil, route.link != link { route.alternate = link; routes[origin.rawValue] = route }
                return
            }
            if route.link != link { route.alternate = route.link }
            route.link = link
            route.packetTimestamp = packetTimestamp
            route.learnedAt = now
            routes[origin.rawValue] = route
        } else {
            routes[origin.rawValue] = Route(link: link, alternate: nil, packetTimestamp: packetTimestamp, learnedAt: now)
        }
    }

    /// Records a later copy of the same packet arriving on `link` as the alternate.
    mutating func learnAlternate(origin: PeerID, link: LinkID, packetTimestamp: UInt64) {
        guard var route = routes[origin.rawValue], route.packetTimestamp == packetTimestamp, route.link != link,
            route.alternate == nil
        else { return }
        route.alternate = link
        routes[origin.rawValue] = route
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
                guard let alternate = route.alternate else { return false }
                route.link = alternate
                route.alternate = nil
            } else if route.alternate == link {
                route.alternate = nil
            }
            return true
        }
    }

    /// Forgets that `link` leads to `peer` (it failed to deliver).
    mutating func forget(link: LinkID, for peer: PeerID) {
        guard var route = routes[peer.rawValue] else { return }
        if route.link == link {
            guard let alternate = route.alternate else {
                routes[peer.rawValue] = nil
                return
            }
            route.link = alternate
            route.alternate = nil
        } else if route.alternate == link {
            route.alternate = nil
        }
        routes[peer.rawValue] = route
    }

    /// Drops routes not refreshed within `lifetime` milliseconds.
    mutating func expire(now: MeshTime, lifetime: Int64) {
        routes.updateEach { _, route in now.milliseconds(since: route.learnedAt) <= lifetime }
    }
}
