import NIOCore

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

    // MARK: Sockets that do not read, and fragmented messages

    /// Fragments one WebSocket message may have; more → close 1009.
    public var webSocketFragments = 256
    /// A fragmented WebSocket message must be complete this long after its first
    /// fragment; later → close 1008.
    public var webSocketAssemblyTimeout: Duration = .seconds(20)
    /// A socket whose reader reads nothing while data waits for it this long is closed
    /// with 1008.
    public var stallTimeout: Duration = .seconds(30)
    /// Bytes one socket may hold queued for its reader; more → close 1008.
    public var socketQueuedBytes = 1 << 20
    /// Bytes all sockets together may hold queued for their readers; past it, sockets
    /// that are behind are closed with 1008.
    public var queuedBytesTotal = 128 << 20

    // MARK: Connections

    /// From a connection's first byte, its first request head (and, with TLS, the
    /// handshake before it) must be complete within this; otherwise it is closed.
    public var handshakeTimeout: Duration = .seconds(10)
    /// A request's body must be complete this long after its head.
    public var requestTimeout: Duration = .seconds(10)
    /// A kept-alive HTTP connection must send its next request head within this after a
    /// response.
    public var keepAliveTimeout: Duration = .seconds(30)
    /// The most connections open at once (`nil`: no cap). `inviso serve` sets it to the
    /// descriptor limit minus a reserve. When full, the oldest connection that has not yet
    /// sent a complete request is closed to make room; if there is none, the new one is.
    public var maxConnections: Int? = nil
    /// The most connections one source (an IPv4 address, an IPv6 prefix) may have open.
    public var connectionsPerSource = 1_000
    /// The most connections one source may have open that are not yet WebSockets or
    /// waiting for a response (slow, idle or half-sent).
    public var pendingConnectionsPerSource = 64
    /// IPv6 clients are keyed on this prefix for every per-source limit (one host
    /// usually has a whole /64).
    public var ipv6PrefixLength = 64

    // MARK: Join codes

    /// Room creations one source may make per minute (sustained), …
    public var createsPerMinute: Double = 30
    /// … and at once.
    public var createBurst: Double = 30
    /// `check` polls one source may make per minute (sustained), …
    public var checksPerMinute: Double = 120
    /// … and at once.
    public var checkBurst: Double = 120
    /// Live (unexpired, unaccepted) codes one source may hold.
    public var liveCodesPerSource = 20

    /// The defaults.
    public init() {}

    var signaling: SignalingLimits {
        var limits = SignalingLimits()
        limits.messagesPerSecond = socketMessagesPerSecond
        limits.messageBurst = socketMessageBurst
        limits.closeAfterRefused = socketCloseAfterRefused
        limits.roomBytesPerSecond = roomRelayBytesPerSecond
        limits.roomByteBurst = roomRelayByteBurst
        limits.maxMessageBytes = webSocketMessageBytes
        return limits
    }

    var socket: SocketLimits {
        SocketLimits(
            messages: .init(
                maxMessageBytes: webSocketMessageBytes, maxFragments: webSocketFragments,
                assemblyTimeout: TimeAmount(webSocketAssemblyTimeout)),
            silenceTimeout: TimeAmount(silenceTimeout), stallTimeout: TimeAmount(stallTimeout),
            maxQueuedBytes: socketQueuedBytes)
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
