import InvisoMesh
import InvisoMeshSimulation
import Testing

/// Per-hop acknowledgements held back up to `acknowledgementDelayMilliseconds` (500 ms by
/// default) to ride on a packet the node sends on the same link anyway.
@Suite("Mesh router: acknowledgements riding on packets")
struct AcknowledgementDelayTests {
    /// A router that knows Alice through link 1 and has relayed her announce already.
    static func quietRelay() -> Harness {
        var harness = DirectedTests.learnedAlice()
        _ = harness.advance(1_000)
        return harness
    }

    /// A relay that has just taken a directed packet from link 0 (Alice's route is link 1).
    static func relayHoldingAnAcknowledgement() -> (Harness, PacketID) {
        var harness = quietRelay()
        let packet = Harness.directed(from: Harness.bob, to: Harness.alice)
        let actions = harness.receive(packet, on: 0)
        #expect(actions.compactMap(\.acknowledgement).isEmpty)
        #expect(actions.compactMap(\.transmitted).map(\.links) == [[LinkID(1)]])
        return (harness, PacketID(packet))
    }

    @Test("the acknowledgement rides on the next packet sent on its link; the other links get the bare packet")
    func ridesOnTheNextPacket() {
        var (harness, id) = Self.relayHoldingAnAcknowledgement()
        _ = harness.advance(100)
        let message = Harness.broadcast(from: Harness.me, serial: 5, at: harness.now)
        let actions = harness.router.originate(message, now: harness.now)
        #expect(actions.compactMap(\.transmitted).map(\.links) == [[LinkID(1), LinkID(2)]])
        let carried = actions.compactMap(\.carrying)
        #expect(carried.count == 1)
        #expect(carried.first?.link == LinkID(0) && carried.first?.packet == MeshPacket(
            type: .message, ttl: 7, timestamp: message.timestamp, senderID: Harness.me, payload: message.payload))
        #expect(carried.first?.acknowledgements == [HopAcknowledgement(senderID: Harness.me, packetID: id)])
        #expect(harness.router.statistics.acknowledgementsPiggybacked == 1)
        // Nothing is left to go alone.
        #expect(harness.advance(1_000).compactMap(\.acknowledgement).isEmpty)
        #expect(harness.router.statistics.acknowledgementsSent == 0)
    }

    @Test("with nothing to ride on it goes alone when the delay is over, not before")
    func goesAloneAfterTheDelay() {
        var (harness, id) = Self.relayHoldingAnAcknowledgement()
        #expect(harness.advance(499).compactMap(\.acknowledgement).isEmpty)
        let alone = harness.advance(1).compactMap(\.acknowledgement)
        #expect(alone.map(\.1) == [LinkID(0)])
        #expect(alone.map(\.0) == [HopAcknowledgement(senderID: Harness.me, packetID: id)])
        #expect(harness.router.statistics.acknowledgementsSent == 1)
        #expect(harness.router.statistics.acknowledgementsPiggybacked == 0)
    }

    @Test("a second copy before the first acknowledgement left adds nothing; a copy after it is acknowledged again")
    func copies() {
        var (harness, _) = Self.relayHoldingAnAcknowledgement()
        let packet = Harness.directed(from: Harness.bob, to: Harness.alice)
        _ = harness.advance(200)
        _ = harness.receive(packet, on: 0)
        #expect(harness.advance(300).compactMap(\.acknowledgement).count == 1)
        _ = harness.receive(packet, on: 0)
        #expect(harness.advance(500).compactMap(\.acknowledgement).count == 1)
    }

    @Test("acknowledgements riding on a received packet complete custody before the packet is handled")
    func receivedRidingAcknowledgements() throws {
        var harness = DirectedTests.learnedAlice()
        let directed = Harness.directed(from: Harness.me, to: Harness.alice)
        let id = PacketID(directed)
        _ = harness.router.originate(directed, now: harness.now)
        let message = Harness.broadcast(from: Harness.alice, serial: 7)
        let riding = [HopAcknowledgement(senderID: PeerID(rawValue: 0x5001), packetID: id)]
        // On the wrong link it is ignored; on the hop's link it completes.
        let wrong = harness.router.receive(
            .packet(message, id: PacketID(message), hops: 1, acknowledgements: riding), on: LinkID(2), now: harness.now)
        #expect(wrong.compactMap(\.report).isEmpty)
        #expect(wrong.compactMap(\.delivered) == [message])
        let right = harness.router.receive(
            .packet(message, id: PacketID(message), hops: 1, acknowledgements: riding), on: LinkID(1), now: harness.now)
        let report = try #require(right.compactMap(\.report).first)
        #expect(report.0 == id && report.1 == .acknowledged(by: PeerID(rawValue: 0x5001)))
        #expect(right.compactMap(\.delivered).isEmpty)  // a duplicate of the message
        #expect(harness.advance(2_000).compactMap(\.transmitted).filter { $0.packet.type == .noiseEncrypted }.isEmpty)
    }

    @Test("at most 16 ride on one packet; the rest wait for the next or go alone")
    func envelopeLimit() {
        var harness = Self.quietRelay()
        let ids = (1...20).map { serial in
            let packet = Harness.directed(from: Harness.bob, to: Harness.alice, serial: UInt8(serial))
            _ = harness.receive(packet, on: 0)
            return PacketID(packet)
        }
        let message = Harness.broadcast(from: Harness.me, serial: 5, at: harness.now)
        let carried = harness.router.originate(message, now: harness.now).compactMap(\.carrying)
        #expect(carried.map(\.acknowledgements.count) == [MeshFrame.maxAcknowledgementsPerEnvelope])
        #expect(carried.first?.acknowledgements.map(\.packetID) == Array(ids.prefix(16)))
        let alone = harness.advance(500).compactMap(\.acknowledgement)
        #expect(alone.map(\.0.packetID) == Array(ids.suffix(4)) && alone.allSatisfy { $0.1 == LinkID(0) })
    }

    @Test("a link that goes down drops what waited for it")
    func linkDown() {
        var (harness, _) = Self.relayHoldingAnAcknowledgement()
        _ = harness.router.linkDown(LinkID(0), now: harness.now)
        #expect(harness.advance(1_000).compactMap(\.acknowledgement).isEmpty)
    }

    @Test("in the simulator most acknowledgements ride on broadcast traffic, and delivery holds")
    func simulation() {
        let run = { (delay: Int64) -> MeshSimulation in
            var parameters = SimulationParameters()
            parameters.seed = 5
            parameters.router.acknowledgementDelayMilliseconds = delay
            let graph = GeometricGraph(nodeCount: 80, meanDegree: 6, seed: 5)
            let simulation = MeshSimulation(graph: graph, parameters: parameters)
            for node in 0..<graph.count { simulation.announce(node: node, atMillisecond: Int64(node * 50)) }
            let workload = SimulationTests.workload(nodes: graph.count, messages: 200, seed: 5)
            for message in workload { simulation.schedule(message) }
            simulation.run(untilMillisecond: 100_000)
            return simulation
        }
        let immediate = run(0)
        let delayed = run(500)
        #expect(immediate.counters.piggybackedAcknowledgements == 0)
        #expect(delayed.counters.piggybackedAcknowledgements > delayed.counters.acknowledgements)
        #expect(delayed.counters.acknowledgements * 2 < immediate.counters.acknowledgements)
        #expect(delayed.directSummary().transmissionsPerMessage < immediate.directSummary().transmissionsPerMessage)
        #expect(delayed.directSummary().deliveryRatio >= 0.97, "\(delayed.directSummary().deliveryRatio)")
        #expect(delayed.broadcastSummary().deliveryRatio >= 0.97)
    }
}
