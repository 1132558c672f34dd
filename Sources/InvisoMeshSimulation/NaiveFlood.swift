import InvisoMesh
/// The baseline: naive flooding on the same graph, loss and latency as a
/// ``MeshSimulation``.
///
/// Every node that receives a packet for the first time forwards it once, at once, to every
/// neighbour except the one it came from; the recipient of a direct message does not
/// forward it. With a TTL, a node forwards only while the TTL it received is above 1 and
/// decrements it, as BitChat does; without one the flood is unbounded. There is no repair:
/// a node whose every copy was lost never gets the packet. Messages do not interact (links
/// have no capacity limit), so each is flooded on its own.
public struct NaiveFlood: Sendable {
    /// The graph.
    public let graph: GeometricGraph
    /// Loss, latency and deadline (the router configuration is not used).
    public let parameters: SimulationParameters
    /// The origin TTL, or `nil` for an unbounded flood.
    public let ttl: UInt8?

    /// Creates the baseline.
    public init(graph: GeometricGraph, parameters: SimulationParameters, ttl: UInt8? = nil) {
        self.graph = graph
        self.parameters = parameters
        self.ttl = ttl
    }

    /// Floods each message and sums the results.
    public func run(_ messages: [SimulatedMessage]) -> (broadcast: DeliverySummary, direct: DeliverySummary) {
        var random = MeshRandom(seed: parameters.seed ^ 0xF100_D0F0_0D00_0001)
        var broadcast = DeliverySummary()
        var direct = DeliverySummary()
        let count = graph.count
        var arrival = [UInt32](repeating: .max, count: count)
        var hops = [UInt16](repeating: 0, count: count)
        var queue = CalendarQueue<(node: Int32, from: Int32, hops: UInt16, ttl: UInt8)>(window: 64)
        for message in messages {
            var recipient = -1
            switch message.kind {
            case .announce: continue
            case .broadcast: break
            case .direct(let to): recipient = to
            }
            for index in 0..<count { arrival[index] = .max }
            let shortest = graph.hopDistances(from: message.origin)
            var transmissions = 0
            var summary = DeliverySummary()
            summary.messages = 1
            summary.possible = recipient >= 0 ? 1 : count - 1
            if recipient >= 0 { summary.shortestHopSum = Int(max(0, shortest[recipient])) }
            arrival[message.origin] = 0
            let startTTL = ttl ?? .max
            func forward(from node: Int, except previous: Int32, hops nextHops: UInt16, ttl receivedTTL: UInt8, at time: UInt64) {
                guard ttl == nil || receivedTTL > 1 else { return }
                let sendTTL = ttl == nil ? receivedTTL : receivedTTL - 1
                for neighbour in graph.neighbours[node] where neighbour != previous {
                    transmissions += 1
                    if random.unit() < parameters.loss { continue }
                    let latency = UInt64(random.int(in: parameters.latencyMilliseconds))
                    queue.insert((neighbour, Int32(node), nextHops, sendTTL), at: time + latency)
                }
            }
            // The origin sends with the full TTL (its "received" TTL is one more).
            forward(from: message.origin, except: -1, hops: 1, ttl: startTTL == .max ? .max : startTTL &+ 1, at: 0)
            while let (time, event) = queue.popFirst() {
                let node = Int(event.node)
                guard arrival[node] == .max else { continue }
                arrival[node] = UInt32(min(time, UInt64(UInt32.max - 1)))
                hops[node] = event.hops
                if node == recipient || recipient < 0 {
                    if Int64(time) <= parameters.deadlineMilliseconds {
                        summary.delivered += 1
                        summary.latencies.append(UInt32(time))
                        summary.hopSum += Int(event.hops)
                        if shortest[node] > 0 { summary.stretchSum += Double(event.hops) / Double(shortest[node]) }
                    } else {
                        summary.late += 1
                    }
                }
                if node != recipient { forward(from: node, except: event.from, hops: event.hops + 1, ttl: event.ttl, at: time) }
            }
            summary.transmissions = transmissions
            if recipient >= 0 { direct.merge(summary) } else { broadcast.merge(summary) }
        }
        return (broadcast, direct)
    }
}
