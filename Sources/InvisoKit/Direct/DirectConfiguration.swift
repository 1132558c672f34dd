import NIOCore

/// Limits and timeouts of the direct TCP path, shared by ``DirectListener`` and
/// ``DirectConnector``.
public struct DirectConfiguration: Sendable {
    /// The address to listen on. `0.0.0.0` (the default) listens on every IPv4 interface,
    /// `::` on every interface; a specific address listens there only.
    public var host = "0.0.0.0"
    /// The port to listen on; 0 (the default) lets the system choose.
    public var port = 0
    /// The largest frame ``DirectConnection/send(_:)`` sends and the peer may send
    /// (1 MiB + 64 bytes). Both sides should use the same value.
    public var maxFrameBytes = (1 << 20) + 64
    /// How long a new connection may take to authenticate before it is dropped (5 s).
    public var handshakeTimeout: Duration = .seconds(5)
    /// How long one TCP connect to a candidate may take (5 s).
    public var dialTimeout: Duration = .seconds(5)
    /// How long ``DirectConnector/connect(to:)`` tries before giving up (10 s).
    public var connectTimeout: Duration = .seconds(10)
    /// Inbound connections that may be open and not yet claimed (handshaking, or
    /// authenticated and waiting for the connector) at once; more are closed at accept (8).
    public var maxPendingInbound = 8
    /// The most peer candidates dialled (8); the rest are ignored.
    public var maxDialedCandidates = 8
    /// Received payload bytes buffered before reading from the socket pauses (4 MiB).
    public var receiveBufferBytes = 4 << 20

    /// Creates a configuration with the defaults above.
    public init() {}

    /// The largest authenticated frame body on the wire.
    var maxBodyBytes: Int { maxFrameBytes + DirectWire.frameOverhead }
}

extension Duration {
    /// The duration as NIO's `TimeAmount` (negative durations become zero).
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return .zero }
        let capped = min(seconds, Int64.max / 1_000_000_000 - 1)
        return .nanoseconds(capped * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
