import InvisoMesh
import InvisoMeshSimulation
import InvisoTesting
import Testing

@Suite("Simulator")
struct SimulationTests {
    static func workload(nodes: Int, messages: Int, seed: UInt64) -> [SimulatedMessage] {
        var random = MeshRandom(seed: seed)
        return (0..<messages).map { index in
            let origin = random.int(in: 0...(nodes - 1))
            let time = 20_000 + Int64(random.int(in: 0...9_999))
            if index % 2 == 0 { return SimulatedMessage(origin: origin, atMillisecond: time, kind: .broadcast) }
            var recipient = random.int(in: 0...(nodes - 2))
            if recipient >= origin { recipient += 1 }
            return SimulatedMessage(origin: origin, atMillisecond: time, kind: .direct(to: recipient))
        }
    }

    static func run(seed: UInt64, nodes: Int = 60, threads: Int = 1) -> MeshSimulation {
        var parameters = SimulationParameters()
        parameters.seed = seed
        parameters.threads = threads
        let graph = GeometricGraph(nodeCount: nodes, meanDegree: 6, seed: seed)
        let simulation = MeshSimulation(graph: graph, parameters: parameters)
        for node in 0..<graph.count { simulation.announce(node: node, atMillisecond: Int64(node * 50)) }
        for message in workload(nodes: graph.count, messages: 40, seed: seed) { simulation.schedule(message) }
        simulation.run(untilMillisecond: 100_000)
        return simulation
    }

    @Test("the graph has the asked mean degree before the largest component is taken, and is connected")
    func graph() {
        let graph = GeometricGraph(nodeCount: 400, meanDegree: 6, seed: 3)
        #expect(graph.count + graph.droppedNodes == 400)
        #expect(graph.count > 350)
        #expect(abs(graph.meanDegree - 6) < 0.6)
        #expect(!graph.hopDistances(from: 0).contains(-1))
        #expect(graph.neighbours.indices.allSatisfy { node in
            graph.neighbours[node].allSatisfy { graph.neighbours[Int($0)].contains(Int32(node)) }
        })
    }

    @Test("a run is the same for the same seed")
    func deterministic() {
        let first = Self.run(seed: 11)
        let second = Self.run(seed: 11)
        #expect(first.counters == second.counters)
        #expect(first.broadcastSummary() == second.broadcastSummary())
        #expect(first.directSummary() == second.directSummary())
        #expect(Self.run(seed: 12).counters != first.counters)
    }

    @Test("the routers' inputs of a millisecond give the same run on several threads as on one")
    func threads() async {
        // Two 300-node runs: computed on a thread of their own, off the test pool.
        let same = await onOwnThread {
            let single = Self.run(seed: 11, nodes: 300)
            let parallel = Self.run(seed: 11, nodes: 300, threads: 3)
            return [
                single.counters == parallel.counters, single.broadcastSummary() == parallel.broadcastSummary(),
                single.directSummary() == parallel.directSummary(),
                single.routers.map(\.statistics) == parallel.routers.map(\.statistics),
            ]
        }
        #expect(same == [true, true, true, true], "counters, broadcasts, directs, router statistics")
    }

    @Test("with 10 % loss, broadcasts and direct messages arrive, for fewer transmissions than naive flooding")
    func delivers() {
        let simulation = Self.run(seed: 5, nodes: 80)
        let broadcast = simulation.broadcastSummary()
        let direct = simulation.directSummary()
        #expect(broadcast.deliveryRatio >= 0.97, "broadcast \(broadcast.deliveryRatio)")
        #expect(direct.deliveryRatio >= 0.9, "direct \(direct.deliveryRatio)")
        let flood = NaiveFlood(graph: simulation.graph, parameters: simulation.parameters)
            .run(Self.workload(nodes: simulation.graph.count, messages: 40, seed: 5))
        #expect(broadcast.transmissionsPerDelivery < flood.broadcast.transmissionsPerDelivery)
        #expect(direct.transmissionsPerMessage < flood.direct.transmissionsPerMessage)
        #expect(broadcast.meanStretch >= 1)
    }

    @Test("a TTL-7 naive flood stops at 7 hops")
    func ttlFlood() {
        var parameters = SimulationParameters()
        parameters.loss = 0
        let graph = GeometricGraph(nodeCount: 400, meanDegree: 6, seed: 2)
        let distances = graph.hopDistances(from: 0)
        let within = distances.filter { $0 > 0 && $0 <= 7 }.count
        let result = NaiveFlood(graph: graph, parameters: parameters, ttl: 7)
            .run([SimulatedMessage(origin: 0, atMillisecond: 0, kind: .broadcast)])
        #expect(result.broadcast.delivered + result.broadcast.late <= within)
        #expect(result.broadcast.delivered >= within * 9 / 10)
        let unbounded = NaiveFlood(graph: graph, parameters: parameters)
            .run([SimulatedMessage(origin: 0, atMillisecond: 0, kind: .broadcast)])
        #expect(unbounded.broadcast.delivered == graph.count - 1)
    }

    @Test("a directed message to an offline node is spooled and delivered when it comes back")
    func storeAndForward() {
        var parameters = SimulationParameters()
        parameters.seed = 21
        parameters.loss = 0
        parameters.deadlineMilliseconds = 200_000
        let graph = GeometricGraph(nodeCount: 50, meanDegree: 6, seed: 21)
        let simulation = MeshSimulation(graph: graph, parameters: parameters)
        for node in 0..<graph.count { simulation.announce(node: node, atMillisecond: Int64(node * 20)) }
        let distances = graph.hopDistances(from: 0)
        let recipient = distances.indices.max { distances[$0] < distances[$1] }!
        simulation.setOffline(node: recipient, fromMillisecond: 20_000, untilMillisecond: 60_000)
        simulation.schedule(SimulatedMessage(origin: 0, atMillisecond: 30_000, kind: .direct(to: recipient)))
        simulation.run(untilMillisecond: 50_000)
        #expect(simulation.directSummary().delivered == 0)
        #expect(simulation.routers.contains { $0.spooledCount > 0 })
        simulation.run(untilMillisecond: 120_000)
        let summary = simulation.directSummary()
        #expect(summary.delivered == 1)
        #expect(summary.latencies.first.map { $0 >= 30_000 } == true)
    }
}
