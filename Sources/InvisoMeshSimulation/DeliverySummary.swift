import InvisoMesh
/// What a set of messages achieved in a simulation or baseline run.
public struct DeliverySummary: Sendable, Hashable {
    /// Messages sent.
    public var messages = 0
    /// (message, node) pairs that could be reached: every other node for a broadcast, the
    /// recipient for a direct message.
    public var possible = 0
    /// Pairs reached within the deadline.
    public var delivered = 0
    /// Pairs reached after the deadline (not counted as delivered).
    public var late = 0
    /// Transmissions that carried these messages (each link send counts once, lost or
    /// not; see the simulation's counters for what is included).
    public var transmissions = 0
    /// Of ``transmissions``, the per-hop acknowledgements (direct messages in a
    /// ``MeshSimulation``; a naive flood has none).
    public var acknowledgements = 0
    /// Sum over delivered pairs of hops travelled / shortest hops.
    public var stretchSum = 0.0
    /// Sum over delivered pairs of hops travelled.
    public var hopSum = 0
    /// Sum over messages of the shortest hop count to the recipient (direct messages).
    public var shortestHopSum = 0
    /// Latencies of delivered pairs, in milliseconds.
    public var latencies: [UInt32] = []

    /// Creates an empty summary.
    public init() {}

    /// delivered / possible.
    public var deliveryRatio: Double { possible == 0 ? 0 : Double(delivered) / Double(possible) }
    /// transmissions / delivered.
    public var transmissionsPerDelivery: Double { delivered == 0 ? .infinity : Double(transmissions) / Double(delivered) }
    /// transmissions / messages.
    public var transmissionsPerMessage: Double { messages == 0 ? 0 : Double(transmissions) / Double(messages) }
    /// (transmissions − acknowledgements) / messages: the packets themselves.
    public var dataTransmissionsPerMessage: Double {
        messages == 0 ? 0 : Double(transmissions - acknowledgements) / Double(messages)
    }
    /// acknowledgements / messages.
    public var acknowledgementsPerMessage: Double { messages == 0 ? 0 : Double(acknowledgements) / Double(messages) }
    /// Mean of hops travelled / shortest hops over delivered pairs.
    public var meanStretch: Double { delivered == 0 ? 0 : stretchSum / Double(delivered) }
    /// Mean shortest hop count (direct messages).
    public var meanShortestHops: Double { messages == 0 ? 0 : Double(shortestHopSum) / Double(messages) }

    /// The `fraction` quantile of the latencies, in milliseconds (0 if none).
    public func latencyQuantile(_ fraction: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        var sorted = latencies
        sorted.sort()
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
        return Double(sorted[index])
    }

    /// Adds another summary's counts.
    public mutating func merge(_ other: DeliverySummary) {
        messages += other.messages
        possible += other.possible
        delivered += other.delivered
        late += other.late
        transmissions += other.transmissions
        acknowledgements += other.acknowledgements
        stretchSum += other.stretchSum
        hopSum += other.hopSum
        shortestHopSum += other.shortestHopSum
        latencies += other.latencies
    }
}

extension MeshSimulation {
    /// The broadcasts' results. `transmissions` counts their data and sync-response
    /// transmissions plus every REQUEST_SYNC sent since ``markWorkloadStart()`` (or since
    /// the start): sync exists for broadcasts, so all of it is charged to them.
    public func broadcastSummary() -> DeliverySummary {
        var summary = DeliverySummary()
        for record in messages where record.kind == .broadcast && !record.hops.isEmpty {
            summary.messages += 1
            summary.possible += graph.count - 1
            summary.delivered += record.delivered
            summary.late += record.deliveredLate
            summary.transmissions += record.transmissions
            summary.stretchSum += record.stretchSum
            summary.hopSum += record.hopSum
            summary.latencies += record.latencies
        }
        summary.transmissions += counters.syncRequests - syncRequestsBeforeWorkload
        return summary
    }

    /// The direct messages' results; `onlyWithRoute` keeps those whose sender knew a route
    /// when it sent. `transmissions` counts each message's own transmissions (unicast hops,
    /// retries, floods, spool deliveries, acknowledgements); `acknowledgements` counts the
    /// acknowledgements among them.
    public func directSummary(onlyWithRoute: Bool = false) -> DeliverySummary {
        var summary = DeliverySummary()
        for record in messages where !record.hops.isEmpty {
            guard case .direct = record.kind, !onlyWithRoute || record.routeKnown else { continue }
            summary.messages += 1
            summary.possible += 1
            summary.delivered += record.delivered
            summary.late += record.deliveredLate
            summary.transmissions += record.transmissions
            summary.acknowledgements += record.acknowledgements
            summary.stretchSum += record.stretchSum
            summary.hopSum += record.hopSum
            summary.shortestHopSum += Int(max(0, record.shortest[0]))
            summary.latencies += record.latencies
        }
        return summary
    }

    /// How many direct messages' senders knew a route when they sent.
    public var directMessagesWithRoute: Int {
        messages.reduce(0) { count, record in
            if case .direct = record.kind, record.routeKnown { return count + 1 }
            return count
        }
    }
}
