import ArgumentParser
import Foundation
import InvisoMesh
import InvisoMeshSimulation

/// `inviso bench mesh`: our routing against naive flooding on the same simulated meshes.
struct BenchMesh: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Simulate mesh routing against naive flooding on random geometric graphs.",
        discussion: """
            For each --nodes count: a random geometric graph in the unit square with mean degree \
            --degree (its largest connected component; dropped nodes are reported), every \
            transmission lost with probability --loss, one-way latency 10–40 ms. Every node \
            announces once in the first 10 s (background: it teaches routes within the announce radius; --announce-rounds repeats it every 20 s); from 60 s on, \
            --messages messages (half public broadcasts, half direct messages between random \
            pairs) start at random nodes at random times over 60 s; the run ends 60 s after the \
            last. A message counts as delivered to a node only within 60 s of being sent. \
            The same workload is flooded naively on the same graph (every node forwards each \
            new packet once to every neighbour but the sender, no TTL, no repair) for the \
            ratios, and once more with TTL 7 to show how far a TTL-bounded flood reaches. \
            Transmissions are per link. Broadcast figures count the broadcasts' sends, relays and \
            sync responses plus every REQUEST_SYNC sent after the warm-up; direct figures count each \
            message's unicast hops, retries, floods, spool deliveries and acknowledgements (for \
            messages whose sender knew a route, also the data transmissions and the \
            acknowledgements apart); \
            announces and REQUEST_SYNCs are also reported per node per minute. Simulated, not \
            wall-clock, time except for the "wall time" line. Use -c release.
            """
    )

    @Option(help: "Comma-separated node counts.")
    var nodes = "50,500,5000"

    @Option(help: "Seed for graphs, workload and routers.")
    var seed: UInt64 = 1

    @Option(help: "Messages per node count (half broadcast, half direct).")
    var messages = 1_000

    @Option(help: "Mean degree of the graphs.")
    var degree = 6.0

    @Option(help: "Loss probability per transmission.")
    var loss = 0.10

    @Option(help: "Threads that run the routers within each simulated millisecond (the figures do not depend on it; default: the active processors).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Flag(inversion: .prefixedNo, help: "Hop counts between Inviso nodes: routes prefer the neighbour fewest hops from the destination (off: the first copy of the newest packet sets the route).")
    var hopCounts = true

    @Option(help: "Announces per node in the warm-up (1–3): round k at a random time in [20k, 20k + 10) s.")
    var announceRounds = 1

    @Option(help: ArgumentHelp("How long a route with the fewest hops holds against copies with more, in ms.", visibility: .hidden))
    var routeMetricWindow: Int64?

    @Option(help: ArgumentHelp("Announce radius in hops (0: unlimited).", visibility: .hidden))
    var announceRadius: UInt8?

    @Option(help: ArgumentHelp("TTL of directed floods.", visibility: .hidden))
    var directedFloodTTL: UInt8?

    @Option(help: ArgumentHelp("Mean REQUEST_SYNC interval in ms.", visibility: .hidden))
    var syncInterval: Int64?

    @Option(help: ArgumentHelp("How long a hop acknowledgement waits for a packet to ride on, in ms (0: alone at once).", visibility: .hidden))
    var acknowledgementDelay: Int64?

    @Flag(help: "One JSON object per line.")
    var json = false

    func validate() throws {
        guard !counts.isEmpty, counts.allSatisfy({ $0 >= 2 }) else { throw ValidationError("--nodes: counts of at least 2") }
        guard messages >= 2 else { throw ValidationError("--messages must be at least 2") }
        guard (0..<1).contains(loss) else { throw ValidationError("--loss must be in [0, 1)") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard (1...3).contains(announceRounds) else { throw ValidationError("--announce-rounds must be 1, 2 or 3") }
    }

    var counts: [Int] { nodes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func run() throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench mesh`\n".utf8))
        #endif
        let out = BenchServer.Output(json: json)
        for count in counts { measure(nodeCount: count, out: out) }
    }

    static let warmUp: Int64 = 60_000
    static let window: Int64 = 60_000

    private func measure(nodeCount: Int, out: BenchServer.Output) {
        var parameters = SimulationParameters()
        parameters.loss = loss
        parameters.seed = seed &+ UInt64(nodeCount)
        parameters.threads = threads
        parameters.router.hopCountRouting = hopCounts
        if let announceRadius { parameters.router.announceRadius = announceRadius }
        if let directedFloodTTL { parameters.router.directedFloodTTL = directedFloodTTL }
        if let syncInterval { parameters.router.syncIntervalMilliseconds = syncInterval }
        if let acknowledgementDelay { parameters.router.acknowledgementDelayMilliseconds = max(0, acknowledgementDelay) }
        if let routeMetricWindow { parameters.router.routeMetricWindowMilliseconds = routeMetricWindow }
        let graph = GeometricGraph(nodeCount: nodeCount, meanDegree: degree, seed: parameters.seed)
        let n = graph.count
        let diameterSample = (0..<min(n, 8)).map { graph.hopDistances(from: $0 * n / min(n, 8)).max() ?? 0 }.max() ?? 0
        out.note(
            "\(nodeCount) nodes: \(n) in the largest component (\(graph.droppedNodes) dropped), mean degree "
                + String(format: "%.2f", graph.meanDegree) + ", radius " + String(format: "%.4f", graph.radius)
                + ", eccentricity up to \(diameterSample) hops; loss \(Int(loss * 100)) %, latency 10–40 ms")

        var random = MeshRandom(seed: parameters.seed ^ 0xB0B0)
        var workload: [SimulatedMessage] = []
        for index in 0..<messages {
            let origin = random.int(in: 0...(n - 1))
            let time = Self.warmUp + Int64(random.int(in: 0...Int(Self.window - 1)))
            if index % 2 == 0 {
                workload.append(SimulatedMessage(origin: origin, atMillisecond: time, kind: .broadcast))
            } else {
                var recipient = random.int(in: 0...(n - 2))
                if recipient >= origin { recipient += 1 }
                workload.append(SimulatedMessage(origin: origin, atMillisecond: time, kind: .direct(to: recipient)))
            }
        }

        let simulation = MeshSimulation(graph: graph, parameters: parameters)
        for node in 0..<n { simulation.announce(node: node, atMillisecond: Int64(random.int(in: 0...9_999))) }
        for round in 1..<announceRounds {
            for node in 0..<n {
                simulation.announce(node: node, atMillisecond: Int64(round * 20_000 + random.int(in: 0...9_999)))
            }
        }
        for message in workload { simulation.schedule(message) }
        let end = (workload.map(\.time).max() ?? Self.warmUp) + parameters.deadlineMilliseconds + 1
        let started = monotonicSeconds()
        simulation.run(untilMillisecond: Self.warmUp)
        let warmUpWall = monotonicSeconds() - started
        let warmUpEvents = simulation.counters.events
        let warmUpSyncRequests = simulation.counters.syncRequests
        simulation.markWorkloadStart()
        simulation.run(untilMillisecond: end)
        let wall = monotonicSeconds() - started - warmUpWall

        let floodStarted = monotonicSeconds()
        let flood = NaiveFlood(graph: graph, parameters: parameters).run(workload)
        let ttlFlood = NaiveFlood(graph: graph, parameters: parameters, ttl: 7).run(workload.filter { $0.kind == .broadcast })
        let floodWall = monotonicSeconds() - floodStarted

        let broadcast = simulation.broadcastSummary()
        let direct = simulation.directSummary()
        let routed = simulation.directSummary(onlyWithRoute: true)
        let prefix = "mesh \(nodeCount) "

        func figure(_ name: String, _ ours: Double, _ unit: String, _ baseline: Double, precision: Int = 2) {
            out.figure(
                prefix + name, ours, unit, baselineName: "flood", baseline: baseline,
                ratio: baseline == 0 ? 0 : ours / baseline, precision: precision)
        }
        figure("broadcast delivered within 60 s", broadcast.deliveryRatio * 100, "%", flood.broadcast.deliveryRatio * 100)
        figure(
            "broadcast transmissions per reached node", broadcast.transmissionsPerDelivery, "tx",
            flood.broadcast.transmissionsPerDelivery)
        figure("broadcast hop stretch", broadcast.meanStretch, "x", flood.broadcast.meanStretch)
        figure("broadcast p95 latency", broadcast.latencyQuantile(0.95), "ms", flood.broadcast.latencyQuantile(0.95), precision: 0)
        out.figure(prefix + "TTL-7 naive flood reach", ttlFlood.broadcast.deliveryRatio * 100, "%")
        out.figure(prefix + "TTL-7 naive flood tx per reached node", ttlFlood.broadcast.transmissionsPerDelivery, "tx")
        figure("direct delivered within 60 s", direct.deliveryRatio * 100, "%", flood.direct.deliveryRatio * 100)
        figure("direct transmissions per message", direct.transmissionsPerMessage, "tx", flood.direct.transmissionsPerMessage)
        let bound = 2 * routed.meanShortestHops + 4
        out.figure(
            prefix + "direct, route known: tx per message",
            routed.transmissionsPerMessage, "tx", baselineName: "2 x shortest hops + 4",
            baseline: bound, ratio: routed.transmissionsPerMessage / bound, precision: 2)
        out.figure(
            prefix + "direct, route known: data tx per message",
            routed.dataTransmissionsPerMessage, "tx", baselineName: "2 x shortest hops + 4",
            baseline: bound, ratio: routed.dataTransmissionsPerMessage / bound, precision: 2)
        out.figure(
            prefix + "direct, route known: hop acks per message", routed.acknowledgementsPerMessage, "tx")
        out.note("\(nodeCount): \(routed.messages) of \(direct.messages) direct messages' senders knew a route when sending")
        out.figure(
            prefix + "direct, route known: delivered within 60 s", routed.deliveryRatio * 100, "%")
        out.figure(
            prefix + "direct, route known: mean hops travelled", routed.delivered == 0 ? 0 : Double(routed.hopSum) / Double(routed.delivered),
            "hops", baselineName: "mean shortest", baseline: routed.meanShortestHops,
            ratio: routed.meanShortestHops == 0 ? 0 : Double(routed.hopSum) / Double(max(1, routed.delivered)) / routed.meanShortestHops,
            precision: 2)
        figure("direct hop stretch", direct.meanStretch, "x", flood.direct.meanStretch)
        figure("direct p95 latency", direct.latencyQuantile(0.95), "ms", flood.direct.latencyQuantile(0.95), precision: 0)
        let counters = simulation.counters
        out.figure(prefix + "announce transmissions per node (background)", Double(counters.announces) / Double(n), "tx")
        out.figure(
            prefix + "REQUEST_SYNCs per node per minute, warm-up",
            Double(warmUpSyncRequests) / Double(n) / (Double(Self.warmUp) / 60_000), "tx")
        out.figure(
            prefix + "REQUEST_SYNCs per node per minute, workload",
            Double(counters.syncRequests - warmUpSyncRequests) / Double(n) / ((Double(end) - Double(Self.warmUp)) / 60_000), "tx")
        out.figure(prefix + "wall time, warm-up (announces)", warmUpWall, "s")
        out.figure(prefix + "wall time, \(messages) messages", wall, "s")
        out.figure(prefix + "wall time, whole simulation (warm-up + messages)", warmUpWall + wall, "s")
        out.figure(prefix + "wall time, both naive floods", floodWall, "s")
        out.note(
            "\(nodeCount): \(warmUpEvents) warm-up events, \(counters.events - warmUpEvents) workload events; transmissions: broadcast data \(counters.broadcastData), "
                + "broadcast sync responses \(counters.broadcastSyncResponses), REQUEST_SYNCs \(counters.syncRequests), "
                + "directed \(counters.directedData), acknowledgements \(counters.acknowledgements) (and "
                + "\(counters.piggybackedAcknowledgements) riding on other packets), announces "
                + "\(counters.announces), other \(counters.other); lost \(counters.lost); late deliveries: broadcast "
                + "\(broadcast.late), direct \(direct.late)")
    }
}
