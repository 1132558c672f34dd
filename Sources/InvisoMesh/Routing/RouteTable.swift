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

    private(set) var routes: [PeerID: Route] = [:]

    var count: Int { routes.count }

    func route(to peer: PeerID) -> Route? { routes[peer] }

    /// Learns from the first copy of a new packet from `origin` arriving on `link`.
    mutating func learn(origin: PeerID, link: LinkID, packetTimestamp: UInt64, now: MeshTime) {
        if var route = routes[origin] {
            guard packetTimestamp >= route.packetTimestamp else {
                if route.alternate == nil, route.link != link { route.alternate = link; routes[origin] = route }
                return
            }
            if route.link != link { route.alternate = route.link }
            route.link = link
            route.packetTimestamp = packetTimestamp
            route.learnedAt = now
            routes[origin] = route
        } else {
            routes[origin] = Route(link: link, alternate: nil, packetTimestamp: packetTimestamp, learnedAt: now)
        }
    }

    /// Records a later copy of the same packet arriving on `link` as the alternate.
    mutating func learnAlternate(origin: PeerID, link: LinkID, packetTimestamp: UInt64) {
        guard var route = routes[origin], route.packetTimestamp == packetTimestamp, route.link != link,
            route.alternate == nil
        else { return }
        route.alternate = link
        routes[origin] = route
    }

    /// The next hop towards `peer`, skipping `excluded` and links not in `isUp`.
    func nextHop(
        to peer: PeerID, excluding excluded: LinkID?, now: MeshTime, lifetime: Int64, isUp: (LinkID) -> Bool
    ) -> LinkID? {
        guard let route = routes[peer], now.milliseconds(since: route.learnedAt) <= lifetime else { return nil }
        if route.link != excluded, isUp(route.link) { return route.link }
        if let alternate = route.alternate, alternate != excluded, isUp(alternate) { return alternate }
        return nil
    }

    /// Drops `link` from every route (promoting alternates); routes left without a link go.
    mutating func remove(link: LinkID) {
        for (peer, route) in routes where route.link == link || route.alternate == link {
            if route.link == link {
                if let alternate = route.alternate {
                    routes[peer] = Route(link: alternate, alternate: nil, packetTimestamp: route.packetTimestamp, learnedAt: route.learnedAt)
                } else {
                    routes[peer] = nil
                }
            } else {
                routes[peer]?.alternate = nil
            }
        }
    }

    /// Forgets that `link` leads to `peer` (it failed to deliver).
    mutating func forget(link: LinkID, for peer: PeerID) {
        guard var route = routes[peer] else { return }
        if route.link == link {
            guard let alternate = route.alternate else {
                routes[peer] = nil
                return
            }
            route.link = alternate
            route.alternate = nil
        } else if route.alternate == link {
            route.alternate = nil
        }
        routes[peer] = route
    }

    /// Drops routes not refreshed within `lifetime` milliseconds.
    mutating func expire(now: MeshTime, lifetime: Int64) {
        routes = routes.filter { now.milliseconds(since: $0.value.learnedAt) <= lifetime }
    }
}
