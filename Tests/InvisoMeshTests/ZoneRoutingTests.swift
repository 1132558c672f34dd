import InvisoMesh
import Testing

/// The announce radius, the deeper flood of directed packets without a route, and the
/// REQUEST_SYNC filter kept while the store does not change (`docs/mesh.md`, "Zones").
@Suite("Mesh router: announce radius and directed floods")
struct ZoneRoutingTests {
    static func announce(from sender: PeerID, at time: MeshTime) -> MeshPacket {
        MeshPacket(type: .announce, ttl: 7, timestamp: time.milliseconds, senderID: sender, payload: [1, 2, 3])
    }

    static func radius(_ hops: UInt8) -> MeshRouter.Configuration {
        var configuration = Harness.quiet
        configuration.announceRadius = hops
        return configuration
    }

    /// The packets a fresh REQUEST_SYNC of `router` sends back to a requester that has nothing.
    static func served(by router: inout MeshRouter, now: MeshTime) -> [MeshPacket] {
        let empty = SyncRequest(senderID: Harness.bob, timestamp: now.milliseconds, filter: .empty(p: 7))
        return router.receive(.syncRequest(empty), on: LinkID(0), now: now).compactMap(\.transmitted).map(\.packet)
    }

    @Test("an announce is relayed and kept inside the radius; at the radius it is delivered and routed but goes no further")
    func radiusStopsAnnounces() {
        var harness = Harness(links: 3, configuration: Self.radius(5))
        let near = Self.announce(from: Harness.alice, at: harness.now)
        let far = Self.announce(from: Harness.bob, at: harness.now)
        let nearActions = HopCountRoutingTests.copy(near, hops: 3, on: 0, to: &harness)
        let farActions = HopCountRoutingTests.copy(far, hops: 5, on: 0, to: &harness)
        #expect(nearActions.compactMap(\.delivered).count == 1)
        #expect(farActions.compactMap(\.delivered).count == 1)
        #expect(harness.router.nextHop(to: Harness.bob) == LinkID(0))
        let relayed = harness.advance(500).compactMap(\.transmitted)
        #expect(relayed.map(\.packet.senderID) == [Harness.alice])
        // Only the announce inside the radius is served to a peer that lacks it.
        #expect(Self.served(by: &harness.router, now: harness.now).map(\.senderID) == [Harness.alice])
    }

    @Test("one hop short of the radius, an announce is relayed but not served by sync (the requester would not keep it)")
    func syncStopsShortOfTheRadius() {
        var harness = Harness(links: 3, configuration: Self.radius(5))
        _ = HopCountRoutingTests.copy(Self.announce(from: Harness.alice, at: harness.now), hops: 4, on: 0, to: &harness)
        _ = HopCountRoutingTests.copy(Self.announce(from: Harness.bob, at: harness.now), hops: 3, on: 0, to: &harness)
        #expect(harness.advance(500).compactMap(\.transmitted).count == 2)
        #expect(Self.served(by: &harness.router, now: harness.now).map(\.senderID) == [Harness.bob])
    }

    @Test("an announce without a hop count (a BitChat client) and radius 0 are not limited")
    func unlimited() {
        var counted = Harness(links: 3, configuration: Self.radius(0))
        _ = HopCountRoutingTests.copy(Self.announce(from: Harness.alice, at: counted.now), hops: 200, on: 0, to: &counted)
        #expect(counted.advance(500).compactMap(\.transmitted).count == 1)
        var bitchat = Harness(links: 3, configuration: Self.radius(2))
        _ = HopCountRoutingTests.copy(Self.announce(from: Harness.alice, at: bitchat.now), hops: 0, on: 0, to: &bitchat)
        #expect(bitchat.advance(500).compactMap(\.transmitted).count == 1)
        #expect(Self.served(by: &bitchat.router, now: bitchat.now).count == 1)
    }

    @Test("a directed packet without a route is flooded with the directed flood TTL, and relays keep it up to that TTL")
    func deepFlood() {
        var configuration = Harness.quiet
        configuration.directedFloodTTL = 20
        var origin = Harness(links: 2, configuration: configuration)
        let sent = origin.router.originate(Harness.directed(from: Harness.me, to: Harness.bob), now: origin.now)
        #expect(sent.compactMap(\.transmitted).map(\.packet.ttl) == [20])

        var relay = Harness(links: 3, configuration: configuration)
        var packet = Harness.directed(from: Harness.alice, to: Harness.bob)
        packet.ttl = 20
        _ = relay.receive(packet, on: 0)
        let relayed = relay.advance(100).compactMap(\.transmitted)
        #expect(relayed.map(\.packet.ttl) == [19])
        #expect(relayed.first?.links == [LinkID(1), LinkID(2)])

        // BitChat's limit: a relay with the default keeps at most the origin TTL.
        var bitchatDepth = Harness(links: 3, configuration: { var c = Harness.quiet; c.directedFloodTTL = 7; return c }())
        _ = bitchatDepth.receive(packet, on: 0)
        #expect(bitchatDepth.advance(100).compactMap(\.transmitted).map(\.packet.ttl) == [6])
    }

    @Test("the REQUEST_SYNC filter is reused while the store is unchanged and rebuilt when a packet arrives")
    func filterFollowsTheStore() throws {
        var configuration = Harness.quiet
        configuration.syncIntervalMilliseconds = 1_000
        var harness = Harness(links: 1, configuration: configuration)
        let first = Harness.broadcast(serial: 1)
        _ = harness.receive(first, on: 0)
        var requests: [SyncRequest] = []
        for _ in 0..<6 { requests += harness.advance(500).compactMap(\.syncRequest).map(\.0) }
        try #require(requests.count >= 2)
        #expect(requests[0].filter == requests[1].filter)
        let second = Harness.broadcast(serial: 2, at: harness.now)
        _ = harness.receive(second, on: 0)
        var later: [SyncRequest] = []
        for _ in 0..<6 { later += harness.advance(500).compactMap(\.syncRequest).map(\.0) }
        let filter = try #require(later.first).filter.membership()
        #expect(filter.mightContain(PacketID(first).syncHash))
        #expect(filter.mightContain(PacketID(second).syncHash))
        #expect(later.first?.filter != requests[0].filter)
    }
}
