public import Prometheus

/// The server's Prometheus metrics, registered in one registry that `GET /metrics` emits.
///
/// Names: `inviso_connections` (open WebSockets), `inviso_rooms` and
/// `inviso_pending_codes` (live, refreshed at each scrape), `inviso_relayed_messages_total`
/// and `inviso_relayed_bytes_total` (label `kind`: `text` or `binary`),
/// `inviso_rate_limited_total` (label `limit`: `accept`, `create`, `check`, `socket`,
/// `room_quota`, `live_codes`), `inviso_connections_closed_total` (label `reason`:
/// `deadline` for a request or handshake not done in time, `slow_reader` for a socket
/// that stopped reading, `connection_cap` for a connection refused or evicted by a cap),
/// `inviso_codes_created_total`, `inviso_rooms_created_total`.
public struct ServerMetrics: Sendable {
    /// Where the metrics live.
    public let registry: PrometheusCollectorRegistry
    let connections: Gauge
    let rooms: Gauge
    let pendingCodes: Gauge
    let textMessages: Counter
    let textBytes: Counter
    let binaryMessages: Counter
    let binaryBytes: Counter
    let acceptLimited: Counter
    let socketLimited: Counter
    let quotaLimited: Counter
    let createLimited: Counter
    let checkLimited: Counter
    let liveCodesLimited: Counter
    let closedDeadline: Counter
    let closedSlowReader: Counter
    let closedConnectionCap: Counter
    let codesCreated: Counter
    let roomsCreated: Counter

    /// The limits whose refusals are counted.
    enum Limit {
        case accept, create, check, socket, roomQuota, liveCodes
    }

    /// Why the server closed a connection on its own.
    enum CloseReason {
        case deadline, slowReader, connectionCap
    }

    /// Registers the metrics in `registry` (a new one by default).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        connections = registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "inviso_connections", unitName: "", helpText: "Open WebSocket connections"))
        rooms = registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "inviso_rooms", unitName: "", helpText: "Rooms in the store"))
        pendingCodes = registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "inviso_pending_codes", unitName: "", helpText: "Live join codes in the store"))
        let relayed = "inviso_relayed_messages_total"
        let bytes = "inviso_relayed_bytes_total"
        textMessages = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: relayed, unitName: "", helpText: "Relayed messages"), labels: [("kind", "text")])
        binaryMessages = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: relayed, unitName: "", helpText: "Relayed messages"), labels: [("kind", "binary")])
        textBytes = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: bytes, unitName: "", helpText: "Relayed bytes"), labels: [("kind", "text")])
        binaryBytes = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: bytes, unitName: "", helpText: "Relayed bytes"), labels: [("kind", "binary")])
        let limited = "inviso_rate_limited_total"
        acceptLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "accept")])
        socketLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "socket")])
        quotaLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "room_quota")])
        createLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "create")])
        checkLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "check")])
        liveCodesLimited = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: limited, unitName: "", helpText: "Refused by a limit"), labels: [("limit", "live_codes")])
        let closed = "inviso_connections_closed_total"
        let closedHelp = "Connections the server closed on its own"
        closedDeadline = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: closed, unitName: "", helpText: closedHelp), labels: [("reason", "deadline")])
        closedSlowReader = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: closed, unitName: "", helpText: closedHelp), labels: [("reason", "slow_reader")])
        closedConnectionCap = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: closed, unitName: "", helpText: closedHelp), labels: [("reason", "connection_cap")])
        codesCreated = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "inviso_codes_created_total", unitName: "", helpText: "Join codes created"))
        roomsCreated = registry.makeCounter(descriptor: MetricNameDescriptor(metricName: "inviso_rooms_created_total", unitName: "", helpText: "Rooms created (codes accepted)"))
    }

    func relayed(textBytes count: Int) {
        textMessages.increment()
        textBytes.increment(by: Int64(count))
    }

    func relayed(binaryBytes count: Int) {
        binaryMessages.increment()
        binaryBytes.increment(by: Int64(count))
    }

    func rateLimited(_ limit: Limit) {
        switch limit {
        case .accept: acceptLimited.increment()
        case .socket: socketLimited.increment()
        case .roomQuota: quotaLimited.increment()
        case .create: createLimited.increment()
        case .check: checkLimited.increment()
        case .liveCodes: liveCodesLimited.increment()
        }
    }

    func closed(_ reason: CloseReason) {
        switch reason {
        case .deadline: closedDeadline.increment()
        case .slowReader: closedSlowReader.increment()
        case .connectionCap: closedConnectionCap.increment()
        }
    }

    /// The Prometheus text exposition.
    public func exposition() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
