import InvisoMesh
import Testing

@Suite("Mesh router: hop-count routes")
struct HopCountRoutingTests {
    static func announce(serial: UInt8, at time: MeshTime) -> MeshPacket {
        MeshPacket(type: .announce, ttl: 7, timestamp: time.milliseconds, senderID: Harness.alice, payload: [serial])
    }

    /// Hands the router a copy of `packet` that crossed `hops` links.
    static func copy(_ packet: MeshPacket, hops: UInt8, on link: UInt32, to harness: inout Harness) -> [MeshRouter.Action] {
        harness.router.receive(.packet(packet, id: PacketID(packet), hops: hops), on: LinkID(link), now: harness.now)
    }

    static func hopsSent(_ actions: [MeshRouter.Action]) -> [UInt8] {
        actions.compactMap { if case .transmit(_, _, _, let hops) = $0 { hops } else { nil } }
    }

    @Test("a later copy with fewer hops takes the route over; the relay and the origin send their own counts")
    func fewestHops() {
        var harness = Harness(links: 4, configuration: Harness.quiet)
        let first = Self.announce(serial: 1, at: harness.now)
        _ = Self.copy(first, hops: 5, on: 0, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(0))
        _ = Self.copy(first, hops: 2, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(1))
        // The relay goes to the links that did not send the packet, as 2 + 1 hops.
        let relayed = harness.advance(500)
        #expect(relayed.compactMap(\.transmitted).map(\.links) == [[LinkID(2), LinkID(3)]])
        #expect(Self.hopsSent(relayed) == [3])
        // A copy with more hops on another link changes nothing but the alternate.
        _ = Self.copy(first, hops: 4, on: 2, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(1))
        // The first hop of our own directed packet: hop count 1.
        let sent = harness.router.originate(Harness.directed(from: Harness.me, to: Harness.alice), now: harness.now)
        #expect(sent.compactMap(\.transmitted).map(\.links) == [[LinkID(1)]])
        #expect(Self.hopsSent(sent) == [1])
    }

    @Test("a newer packet with more hops does not displace a confirmed route, but replaces a stale one")
    func ageing() {
        var configuration = Harness.quiet
        configuration.routeMetricWindowMilliseconds = 30_000
        var harness = Harness(links: 3, configuration: configuration)
        _ = Self.copy(Self.announce(serial: 1, at: harness.now), hops: 2, on: 0, to: &harness)
        _ = harness.advance(20_000)
        _ = Self.copy(Self.announce(serial: 2, at: harness.now), hops: 6, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(0))
        // Nothing over link 0 for more than the window: the next newer packet's first copy wins.
        _ = harness.advance(11_000)
        _ = Self.copy(Self.announce(serial: 3, at: harness.now), hops: 6, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(1))
        // The old link is the alternate: it takes over when the route's link goes down.
        _ = harness.router.linkDown(LinkID(1), now: harness.now)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(0))
    }

    @Test("a copy over the route's own link keeps it fresh and updates its count")
    func confirmation() {
        var configuration = Harness.quiet
        configuration.routeMetricWindowMilliseconds = 30_000
        var harness = Harness(links: 3, configuration: configuration)
        _ = Self.copy(Self.announce(serial: 1, at: harness.now), hops: 2, on: 0, to: &harness)
        _ = harness.advance(25_000)
        _ = Self.copy(Self.announce(serial: 2, at: harness.now), hops: 3, on: 0, to: &harness)
        _ = harness.advance(25_000)
        // Confirmed 25 s ago: a newer copy with 4 hops does not take over, one with 2 does.
        _ = Self.copy(Self.announce(serial: 3, at: harness.now), hops: 4, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(0))
        _ = Self.copy(Self.announce(serial: 3, at: harness.now), hops: 2, on: 2, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(2))
    }

    @Test("copies without a count (BitChat) follow the first copy of the newest packet, and rank after counted ones")
    func unknownCounts() {
        var harness = Harness(links: 3, configuration: Harness.quiet)
        _ = Self.copy(Self.announce(serial: 1, at: harness.now), hops: 0, on: 0, to: &harness)
        _ = harness.advance(1_000)
        _ = Self.copy(Self.announce(serial: 2, at: harness.now), hops: 0, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(1))
        // Relaying what came without a count: no count.
        #expect(Self.hopsSent(harness.advance(500)) == [0])
        _ = Self.copy(Self.announce(serial: 2, at: harness.now), hops: 9, on: 2, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(2))
    }

    @Test("with hop-count routing off, counts are neither read nor sent")
    func off() {
        var configuration = Harness.quiet
        configuration.hopCountRouting = false
        var harness = Harness(links: 3, configuration: configuration)
        let first = Self.announce(serial: 1, at: harness.now)
        _ = Self.copy(first, hops: 5, on: 0, to: &harness)
        _ = Self.copy(first, hops: 1, on: 1, to: &harness)
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(0))
        let sent = harness.router.originate(Harness.directed(from: Harness.me, to: Harness.alice), now: harness.now)
        #expect(Self.hopsSent(sent) == [0])
    }
}
