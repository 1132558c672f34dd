import InvisoMesh
import Testing

/// Helpers to drive one router by hand.
struct Harness {
    static let me = PeerID(rawValue: 0x1111)
    static let alice = PeerID(rawValue: 0xA11CE)
    static let bob = PeerID(rawValue: 0xB0B)
    static let start = MeshTime(milliseconds: 1_750_000_000_000)

    var router: MeshRouter
    var now = Harness.start

    init(links: Int, configuration: MeshRouter.Configuration = .init(), seed: UInt64 = 1) {
        router = MeshRouter(localID: Self.me, configuration: configuration, seed: seed)
        for index in 0..<links {
            _ = router.linkUp(LinkID(UInt32(index)), peer: PeerID(rawValue: 0x5000 + UInt64(index)), now: now)
        }
    }

    static func broadcast(from sender: PeerID = alice, ttl: UInt8 = 7, serial: UInt8 = 1, at time: MeshTime = start) -> MeshPacket {
        MeshPacket(type: .message, ttl: ttl, timestamp: time.milliseconds, senderID: sender, payload: [serial, 2, 3])
    }

    static func directed(from sender: PeerID = alice, to recipient: PeerID, serial: UInt8 = 1) -> MeshPacket {
        MeshPacket(
            type: .noiseEncrypted, ttl: 7, timestamp: start.milliseconds, senderID: sender, recipientID: recipient,
            payload: [serial, 9])
    }

    mutating func receive(_ packet: MeshPacket, on link: UInt32) -> [MeshRouter.Action] {
        router.receive(packet, on: LinkID(link), now: now)
    }

    /// Advances time by `milliseconds` and runs the timers due (periodic sync disabled
    /// in most tests by configuration).
    mutating func advance(_ milliseconds: Int64) -> [MeshRouter.Action] {
        now = now.adding(milliseconds: milliseconds)
        return router.tick(now: now)
    }

    static var quiet: MeshRouter.Configuration {
        var configuration = MeshRouter.Configuration()
        configuration.syncIntervalMilliseconds = 0
        configuration.linkUpSyncDelayMilliseconds = 1_000_000_000
        return configuration
    }

    /// ``quiet`` with every acknowledgement sent at once.
    static var immediateAcknowledgements: MeshRouter.Configuration {
        var configuration = quiet
        configuration.acknowledgementDelayMilliseconds = 0
        return configuration
    }
}

extension MeshRouter.Action {
    var transmitted: (packet: MeshPacket, links: [LinkID])? {
        if case .transmit(let packet, _, let links, _) = self { return (packet, links) }
        return nil
    }
    var carrying: (packet: MeshPacket, link: LinkID, acknowledgements: [HopAcknowledgement])? {
        if case .transmitWithAcknowledgements(let packet, _, let link, _, let acknowledgements) = self {
            return (packet, link, acknowledgements)
        }
        return nil
    }
    var delivered: MeshPacket? {
        if case .deliver(let packet, _) = self { return packet }
        return nil
    }
    var acknowledgement: (HopAcknowledgement, LinkID)? {
        if case .sendAcknowledgement(let ack, let link) = self { return (ack, link) }
        return nil
    }
    var syncRequest: (SyncRequest, LinkID)? {
        if case .sendSyncRequest(let request, let link) = self { return (request, link) }
        return nil
    }
    var report: (PacketID, MeshRouter.DeliveryReport)? {
        if case .report(let id, let report) = self { return (id, report) }
        return nil
    }
}

@Suite("Mesh router: flooding")
struct FloodingTests {
    @Test("a packet is delivered once however many copies arrive")
    func duplicates() {
        var harness = Harness(links: 3, configuration: Harness.quiet)
        let packet = Harness.broadcast()
        let first = harness.receive(packet, on: 0)
        var again = packet
        again.ttl = 3  // identity does not depend on TTL
        let second = harness.receive(again, on: 1)
        #expect(first.compactMap(\.delivered).count == 1)
        #expect(second.compactMap(\.delivered).isEmpty)
        #expect(harness.router.statistics.duplicates == 1)
        #expect(PacketID(packet) == PacketID(again))
    }

    @Test("origin sends with TTL 7; relays clamp by degree and stop at TTL 1", arguments: [
        (links: 2, received: UInt8(7), relayed: UInt8?(6)),  // thin chain: full depth
        (links: 4, received: 7, relayed: 5),  // middling: limit 6
        (links: 6, received: 7, relayed: 4),  // dense: limit 5
        (links: 6, received: 3, relayed: 2),
        (links: 4, received: 1, relayed: nil),
    ])
    func ttl(links: Int, received: UInt8, relayed: UInt8?) {
        var harness = Harness(links: links, configuration: Harness.quiet)
        let origin = harness.router.originate(Harness.broadcast(from: Harness.me, ttl: 2, serial: 9), now: harness.now)
        #expect(origin.compactMap(\.transmitted).first?.packet.ttl == 7)
        _ = harness.receive(Harness.broadcast(ttl: received), on: 0)
        let fired = harness.advance(500).compactMap(\.transmitted)
        #expect(fired.first?.packet.ttl == relayed)
        if relayed != nil { #expect(fired.first?.links.contains(LinkID(0)) == false) }
    }

    @Test("a relay waits out its jitter and is cancelled once enough duplicates arrive")
    func counterSuppression() {
        var configuration = Harness.quiet
        configuration.suppressionThreshold = 2
        var harness = Harness(links: 5, configuration: configuration)
        let packet = Harness.broadcast()
        #expect(harness.receive(packet, on: 0).compactMap(\.transmitted).isEmpty)
        _ = harness.receive(packet, on: 1)
        _ = harness.receive(packet, on: 2)
        #expect(harness.advance(500).compactMap(\.transmitted).isEmpty)
        #expect(harness.router.statistics.relaysSuppressed == 1)

        // One duplicate is not enough, but its link is skipped.
        let other = Harness.broadcast(serial: 2)
        _ = harness.receive(other, on: 0)
        _ = harness.receive(other, on: 3)
        let sent = harness.advance(500).compactMap(\.transmitted)
        #expect(sent.count == 1)
        #expect(sent.first?.links == [LinkID(1), LinkID(2), LinkID(4)])
    }

    @Test("fan-out limits a relay to a subset of the remaining links")
    func fanOut() {
        var configuration = Harness.quiet
        configuration.fanOut = .atMost(2)
        var harness = Harness(links: 6, configuration: configuration)
        _ = harness.receive(Harness.broadcast(), on: 0)
        let sent = harness.advance(500).compactMap(\.transmitted)
        #expect(sent.first?.links.count == 2)
        #expect(sent.first?.links.contains(LinkID(0)) == false)
        // Announces always go to every remaining link.
        let announce = MeshPacket(
            type: .announce, ttl: 7, timestamp: Harness.start.milliseconds, senderID: Harness.bob, payload: [4])
        _ = harness.receive(announce, on: 0)
        #expect(harness.advance(500).compactMap(\.transmitted).first?.links.count == 5)
        // BitChat's logarithmic subset: all of 2, then bitLength(count - 1) + 1.
        #expect([1, 2, 3, 4, 5, 9, 17].map { MeshRouter.FanOut.logarithmic.size(for: $0) } == [1, 2, 3, 3, 4, 5, 6])
    }

    @Test("a packet too old for the duplicate window is dropped, not delivered")
    func tooOld() {
        var harness = Harness(links: 2, configuration: Harness.quiet)
        let old = Harness.broadcast(at: Harness.start.adding(milliseconds: -1_000_000))
        #expect(harness.receive(old, on: 0).compactMap(\.delivered).isEmpty)
    }
}

@Suite("Mesh router: directed packets")
struct DirectedTests {
    /// Alice is reachable through link 1 (her announce came that way first).
    static func learnedAlice(configuration: MeshRouter.Configuration = Harness.quiet) -> Harness {
        var harness = Harness(links: 3, configuration: configuration)
        let announce = MeshPacket(
            type: .announce, ttl: 5, timestamp: Harness.start.milliseconds, senderID: Harness.alice, payload: [1])
        _ = harness.receive(announce, on: 1)
        _ = harness.receive(announce, on: 2)
        return harness
    }

    @Test("a route is learned from the first copy of an announce; the next hop gets the packet and acknowledges")
    func routeAndAcknowledgement() throws {
        var harness = Self.learnedAlice()
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(1))
        let packet = Harness.directed(from: Harness.me, to: Harness.alice)
        let id = PacketID(packet)
        let sent = harness.router.originate(packet, now: harness.now)
        #expect(sent.compactMap(\.transmitted).map(\.links) == [[LinkID(1)]])
        // An acknowledgement from the wrong link is ignored; the right one completes.
        let wrong = harness.router.receive(
            .acknowledgement(HopAcknowledgement(senderID: Harness.bob, packetID: id)), on: LinkID(2), now: harness.now)
        #expect(wrong.compactMap(\.report).isEmpty)
        let right = harness.router.receive(
            .acknowledgement(HopAcknowledgement(senderID: Harness.bob, packetID: id)), on: LinkID(1), now: harness.now)
        let report = try #require(right.compactMap(\.report).first)
        #expect(report.0 == id)
        #expect(report.1 == .acknowledged(by: PeerID(rawValue: 0x5001)))
        #expect(harness.advance(1_000).compactMap(\.transmitted).filter { $0.packet.type == .noiseEncrypted }.isEmpty)
    }

    @Test("without an acknowledgement the hop is retried, then the alternate link is tried")
    func retries() {
        var harness = Self.learnedAlice()
        _ = harness.router.originate(Harness.directed(from: Harness.me, to: Harness.alice), now: harness.now)
        var links: [LinkID] = []
        func sent(_ actions: [MeshRouter.Action]) -> [LinkID] {
            actions.compactMap(\.transmitted).filter { $0.packet.type == .noiseEncrypted }.flatMap(\.links)
        }
        // The next hop may hold its acknowledgement back 500 ms: a retry waits 250 ms more.
        #expect(sent(harness.advance(740)).isEmpty)
        links += sent(harness.advance(20))
        for _ in 0..<3 { links += sent(harness.advance(760)) }
        #expect(links == [LinkID(1), LinkID(1), LinkID(2), LinkID(2)])
        #expect(harness.router.statistics.retransmissions >= 2)
    }

    @Test("a relay acknowledges upstream and forwards with TTL at least 1; the recipient delivers and acknowledges")
    func relayAndRecipient() {
        var harness = Self.learnedAlice(configuration: Harness.immediateAcknowledgements)
        let packet = Harness.directed(from: Harness.bob, to: Harness.alice)
        let actions = harness.receive(packet, on: 0)
        #expect(actions.compactMap(\.acknowledgement).map(\.1) == [LinkID(0)])
        #expect(actions.compactMap(\.transmitted).map(\.links) == [[LinkID(1)]])
        #expect(actions.compactMap(\.delivered).isEmpty)

        let mine = Harness.directed(from: Harness.bob, to: Harness.me, serial: 2)
        let received = harness.receive(mine, on: 0)
        #expect(received.compactMap(\.delivered).count == 1)
        #expect(received.compactMap(\.acknowledgement).count == 1)
        // A retransmitted copy (our acknowledgement was lost) is acknowledged again, not delivered.
        let again = harness.receive(mine, on: 0)
        #expect(again.compactMap(\.delivered).isEmpty)
        #expect(again.compactMap(\.acknowledgement).count == 1)
    }

    @Test("with no route the packet is flooded and spooled; it goes out when the recipient's link comes up")
    func spool() throws {
        var harness = Harness(links: 2, configuration: Harness.quiet)
        let packet = Harness.directed(from: Harness.me, to: Harness.bob)
        let sent = harness.router.originate(packet, now: harness.now)
        #expect(sent.compactMap(\.report).map(\.1) == [.flooded])
        #expect(sent.compactMap(\.transmitted).first?.links == [LinkID(0), LinkID(1)])
        #expect(harness.router.spooledCount == 1)
        let up = harness.router.linkUp(LinkID(7), peer: Harness.bob, now: harness.now)
        #expect(up.compactMap(\.transmitted).map(\.links) == [[LinkID(7)]])
        #expect(harness.router.spooledCount == 0)
        let ack = harness.router.receive(
            .acknowledgement(HopAcknowledgement(senderID: Harness.bob, packetID: PacketID(packet))), on: LinkID(7),
            now: harness.now)
        #expect(ack.compactMap(\.report).map(\.1) == [.acknowledged(by: Harness.bob)])
    }

    @Test("a spooled packet that waits too long is reported as failed")
    func spoolExpiry() {
        var configuration = Harness.quiet
        configuration.spoolWindowMilliseconds = 10_000
        var harness = Harness(links: 1, configuration: configuration)
        let packet = Harness.directed(from: Harness.me, to: Harness.bob)
        _ = harness.router.originate(packet, now: harness.now)
        var reports: [MeshRouter.DeliveryReport] = []
        for _ in 0..<4 { reports += harness.advance(5_000).compactMap(\.report).map(\.1) }
        #expect(reports == [.failed(.spoolExpired)])
    }

    @Test("a link going down moves waiting packets to another way at once")
    func linkDown() {
        var harness = Self.learnedAlice()
        _ = harness.router.originate(Harness.directed(from: Harness.me, to: Harness.alice), now: harness.now)
        let actions = harness.router.linkDown(LinkID(1), now: harness.now)
        #expect(actions.compactMap(\.transmitted).map(\.links) == [[LinkID(2)]])
        #expect(harness.router.nextHop(to: Harness.alice) == LinkID(2))
    }
}

@Suite("Mesh router: gossip sync")
struct SyncTests {
    @Test("a REQUEST_SYNC is answered with exactly the stored packets its filter lacks, as TTL-0 RSR packets")
    func answer() throws {
        var responder = Harness(links: 2, configuration: Harness.quiet)
        var requester = Harness(links: 1, configuration: Harness.quiet)
        let shared = Harness.broadcast(serial: 1)
        let missing = Harness.broadcast(serial: 2)
        _ = responder.receive(shared, on: 1)
        _ = responder.receive(missing, on: 1)
        _ = requester.receive(shared, on: 0)

        var configuration = Harness.quiet
        configuration.syncIntervalMilliseconds = 1_000
        var asking = MeshRouter(localID: PeerID(rawValue: 0x2222), configuration: configuration, seed: 3)
        _ = asking.linkUp(LinkID(0), peer: Harness.me, now: requester.now)
        _ = asking.receive(shared, on: LinkID(0), now: requester.now)
        let requests = asking.tick(now: requester.now.adding(milliseconds: 2_000)).compactMap(\.syncRequest)
        let request = try #require(requests.first).0
        #expect(request.filter.p == 7)

        let answer = responder.router.receive(.syncRequest(request), on: LinkID(0), now: responder.now)
        let sent = answer.compactMap(\.transmitted)
        #expect(sent.map(\.packet.payload) == [missing.payload])
        #expect(sent.first?.packet.ttl == 0)
        #expect(sent.first?.packet.isRSR == true)
    }

    @Test("a filter listing packets the responder lacks makes it ask back")
    func reversePull() throws {
        var rich = MeshRouter(localID: PeerID(rawValue: 0x3333), configuration: Harness.quiet, seed: 4)
        _ = rich.linkUp(LinkID(0), peer: Harness.me, now: Harness.start)
        _ = rich.receive(Harness.broadcast(serial: 5), on: LinkID(0), now: Harness.start)
        var configuration = Harness.quiet
        configuration.linkUpSyncDelayMilliseconds = 0
        var withRequest = MeshRouter(localID: PeerID(rawValue: 0x3333), configuration: configuration, seed: 4)
        _ = withRequest.linkUp(LinkID(0), peer: Harness.me, now: Harness.start)
        _ = withRequest.receive(Harness.broadcast(serial: 5), on: LinkID(0), now: Harness.start)
        let request = try #require(withRequest.tick(now: Harness.start).compactMap(\.syncRequest).first).0

        var poor = Harness(links: 1, configuration: Harness.quiet)
        let actions = poor.router.receive(.syncRequest(request), on: LinkID(0), now: poor.now)
        #expect(actions.compactMap(\.syncRequest).count == 1)
        _ = rich
    }

    @Test("a packet obtained by sync is relayed onward with the sync relay TTL (0 keeps it local)", arguments: [UInt8(7), 0])
    func relayAfterSync(syncRelayTTL: UInt8) {
        var configuration = Harness.quiet
        configuration.syncRelayTTL = syncRelayTTL
        var harness = Harness(links: 3, configuration: configuration)
        var response = Harness.broadcast()
        response.ttl = 0
        response.isRSR = true
        let actions = harness.receive(response, on: 0)
        #expect(actions.compactMap(\.delivered).count == 1)
        let relayed = harness.advance(500).compactMap(\.transmitted)
        if syncRelayTTL == 0 {
            #expect(relayed.isEmpty)
        } else {
            #expect(relayed.first?.packet.ttl == 5)
            #expect(relayed.first?.packet.isRSR == false)
        }
    }

    @Test("sync requests go round-robin to one neighbour per interval")
    func periodic() {
        var configuration = MeshRouter.Configuration()
        configuration.syncIntervalMilliseconds = 1_000
        configuration.linkUpSyncDelayMilliseconds = 1_000_000_000
        var harness = Harness(links: 3, configuration: configuration)
        var links: [LinkID] = []
        for _ in 0..<30 { links += harness.advance(500).compactMap(\.syncRequest).map(\.1) }
        #expect(links.count >= 6 && links.count <= 16)
        #expect(Array(links.prefix(3)) == [LinkID(0), LinkID(1), LinkID(2)])
    }
}
