/// The limits the server enforces; defaults are the documented ones.
public struct ServerLimits: Sendable, Equatable {
    /// Largest REST request body (bytes); larger → `413 body_too_large`.
    public var restBodyBytes = 16 * 1024
    /// Largest WebSocket message (bytes); larger → the socket is closed with 1009.
    public var webSocketMessageBytes = 64 * 1024
    /// A socket that sends nothing (not even a control-frame ping) for this long is closed
    /// and its seat freed.
    public var silenceTimeout: Duration = .seconds(60)
    /// Failed `accept`/`check` attempts allowed per client address per minute.
    public var failedAttemptsPerMinute = 10
    /// Failed guesses against one code after which the code is burnt.
    public var guessesPerCode = 5
    /// Messages per second one socket may send.
    public var socketMessagesPerSecond: Double = 50
    /// Messages one socket may send in a burst.
    public var socketMessageBurst: Double = 200
    /// Refused messages in a row after which a socket is closed with 1008.
    public var socketCloseAfterRefused = 1_000
    /// Binary bytes per second one room may relay.
    public var roomRelayBytesPerSecond: Double = 1_048_576
    /// Binary bytes one room may relay in a burst.
    public var roomRelayByteBurst: Double = 8_388_608
    /// How often expired codes are deleted and limiter state is pruned.
    public var sweepInterval: Duration = .seconds(60)

    /// The defaults.
    public init() {}

    var signaling: SignalingLimits {
        var limits = SignalingLimits()
        limits.messagesPerSecond = socketMessagesPerSecond
        limits.messageBurst = socketMessageBurst
        limits.closeAfterRefused = socketCloseAfterRefused
        limits.roomBytesPerSecond = roomRelayBytesPerSecond
        limits.roomByteBurst = roomRelayByteBurst
        return limits
    }
}

/// Where and how `inviso serve` listens.
public struct ServerConfiguration: Sendable {
    /// The address to bind (`127.0.0.1` by default; `0.0.0.0` for all interfaces).
    public var host: String
    /// The TCP port (`0` picks a free one; see ``SignalingServer/run(onListening:)``).
    public var port: Int
    /// PEM certificate chain and private key files: serve HTTPS/WSS instead of HTTP/WS.
    public var tls: (certificatePath: String, keyPath: String)?
    /// The coturn secret and URLs for `POST /api/turn` (`nil`: the route answers
    /// `404 turn_not_configured`).
    public var turn: TURNConfiguration?
    /// Limits.
    public var limits: ServerLimits

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, tls: (certificatePath: String, keyPath: String)? = nil,
        turn: TURNConfiguration? = nil, limits: ServerLimits = ServerLimits()
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.turn = turn
        self.limits = limits
    }
}
