public import InvisoWire
public import Logging
public import NIOCore
import NIOPosix
import NIOWebSocket

/// The signaling WebSocket to the Inviso server: joins a room, relays signaling messages
/// and binary frames, keeps the connection alive and reconnects.
///
/// Call ``run()`` in a task you own (it returns after ``close()``, ``leave()`` or giving
/// up) and read ``events``. The client:
/// - sends a WebSocket control-frame ping every ``Configuration/pingInterval`` (25 s) and
///   treats the connection as dead when no pong follows within
///   ``Configuration/pongTimeout`` (10 s);
/// - after a loss, reconnects following ``Configuration/reconnect`` (exponential backoff,
///   full jitter from the injected generator), then rejoins the active room with
///   `join_room {roomId, deviceId}` and re-sends `watch_code` for codes still watched;
/// - never reconnects after ``close()`` or ``leave()``.
///
/// Logs carry event kinds and close reasons only: never message bodies, frames, room ids,
/// device IDs or join codes.
public actor SignalingClient {
    /// Timeouts, limits and the reconnect schedule.
    public struct Configuration: Sendable {
        /// The server.
        public var endpoint: ServerEndpoint
        /// Time between control-frame pings (25 s).
        public var pingInterval: Duration = .seconds(25)
        /// How long a pong may take before the connection counts as dead (10 s).
        public var pongTimeout: Duration = .seconds(10)
        /// The longest TCP, TLS and WebSocket upgrade may take together (10 s).
        public var connectTimeout: Duration = .seconds(10)
        /// When to reconnect after a loss.
        public var reconnect = ReconnectPolicy()
        /// The largest message sent or received (the server's limit, 64 KiB).
        public var maxMessageBytes = 64 * 1024

        /// Creates a configuration with the defaults above.
        public init(endpoint: ServerEndpoint) {
            self.endpoint = endpoint
        }
    }

    /// The events, in order; finishes when ``run()`` returns.
    public nonisolated let events: AsyncStream<SignalingEvent>

    let configuration: Configuration
    let continuation: AsyncStream<SignalingEvent>.Continuation
    let group: any EventLoopGroup
    let sleep: @Sendable (Duration) async throws -> Void
    var random: AnyGenerator
    let logger: Logger

    /// The open connection, if any.
    var outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>?
    var channel: (any Channel)?
    /// The room to be in (rejoined after every reconnect) until ``leave()``.
    var activeRoom: (roomID: String, deviceID: String)?
    /// Codes being watched: join code → creator's device ID.
    var watched: [String: String] = [:]
    var userClosed = false
    var started = false
    var greeted = false
    var backoff: Task<Void, any Error>?
    /// The payload of the ping still waiting for its pong.
    var awaitingPong: UInt64?
    var pingCounter: UInt64 = 0
    /// Text frame fragments being collected.
    var fragments: [UInt8] = []
    var fragmentOpcode: WebSocketOpcode?

    /// Creates a client; nothing happens until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, timeouts and reconnect policy.
    ///   - random: The generator for reconnect jitter.
    ///   - sleep: Waits for a duration (pings, pong timeouts, backoff); inject a fake clock's
    ///     sleep in tests. Defaults to the continuous clock.
    ///   - group: The event loops; `nil` uses NIO's shared singleton.
    ///   - logger: Receives connection-level events only.
    public init(
        configuration: Configuration,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        group: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "inviso.kit.signaling")
    ) {
        self.configuration = configuration
        self.random = AnyGenerator(generator: random)
        self.sleep = sleep
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: - Lifetime

    /// Connects and keeps the connection up until ``close()``, ``leave()``, cancellation or
    /// ``ReconnectPolicy/maxAttempts`` failures in a row; then finishes ``events``.
    /// Call it once.
    public func run() async {
        guard !started else { return }
        started = true
        var attempt = 0
        var finalReason = SignalingDisconnectReason.closedByUser
        while !userClosed && !Task.isCancelled {
            let reason = await connectOnce()
            if greeted { attempt = 0 }
            greeted = false
            if userClosed || Task.isCancelled { break }
            logger.info("signaling connection ended", metadata: ["reason": "\(reason)"])
            continuation.yield(.disconnected(reason))
            attempt += 1
            guard configuration.reconnect.allows(attempt: attempt) else {
                finalReason = .gaveUp
                break
            }
            let delay = configuration.reconnect.delay(forAttempt: attempt, using: &random.generator)
            continuation.yield(.reconnecting(attempt: attempt, delay: delay))
            let sleep = sleep
            let wait = Task { try await sleep(delay) }
            backoff = wait
            _ = try? await wait.value
            backoff = nil
        }
        continuation.yield(.disconnected(finalReason))
        continuation.finish()
    }

    /// Closes the connection for good (close code 1000); no reconnect follows and ``run()``
    /// returns. The room is not left: the peer sees `peer_disconnected`.
    public func close() async {
        userClosed = true
        backoff?.cancel()
        if let outbound {
            var reason = ByteBuffer()
            reason.write(webSocketErrorCode: .normalClosure)
            try? await outbound.write(Self.frame(.connectionClose, reason))
        }
        channel?.close(promise: nil)
    }

    /// Leaves the active room (`leave_room`, so the peer sees `peer_left`), stops watching
    /// codes and closes like ``close()``: no reconnect follows.
    public func leave() async {
        if activeRoom != nil, outbound != nil {
            try? await write(.leaveRoom)
        }
        activeRoom = nil
        watched.removeAll()
        await close()
    }

    // MARK: - Requests

    /// Takes this device's seat in `roomID` (`join_room`) now if connected, and again after
    /// every reconnect until ``leave()``.
    ///
    /// - Throws: ``SignalingClientError/closed`` after ``close()``.
    public func join(roomID: String, deviceID: String) async throws(SignalingClientError) {
        guard !userClosed else { throw .closed }
        activeRoom = (roomID, deviceID)
        if greeted { try? await write(.joinRoom(roomID: roomID, deviceID: deviceID)) }
    }

    /// Asks to be told (``SignalingEvent/roomAccepted(joinID:roomID:)``) when this device's
    /// code is accepted (`watch_code`), instead of polling ``RoomAPI/check(joinID:deviceID:)``.
    /// Watched again after every reconnect until it fires.
    ///
    /// - Throws: ``SignalingClientError/closed`` after ``close()``.
    public func watch(joinID: String, deviceID: String) async throws(SignalingClientError) {
        guard !userClosed else { throw .closed }
        watched[joinID] = deviceID
        if greeted { try? await write(.watchCode(joinID: joinID, client1: deviceID)) }
    }

    /// Sends a message (a relayed signaling message, `ping_peer`, …) on the open connection.
    ///
    /// - Throws: ``SignalingClientError/notConnected`` while disconnected,
    ///   ``SignalingClientError/closed`` after ``close()``,
    ///   ``SignalingClientError/messageTooLarge`` above the limit.
    public func send(_ message: ClientMessage) async throws(SignalingClientError) {
        try await write(message)
    }

    /// Sends a binary frame to the other member (the relay path).
    ///
    /// - Throws: As ``send(_:)``.
    public func send(binary: [UInt8]) async throws(SignalingClientError) {
        guard binary.count <= configuration.maxMessageBytes else { throw .messageTooLarge }
        try await write(frame: Self.frame(.binary, ByteBuffer(bytes: binary)))
    }

    /// Whether a connection is open and greeted.
    public var isConnected: Bool { greeted && outbound != nil }

    func write(_ message: ClientMessage) async throws(SignalingClientError) {
        let bytes = message.object.serialized()
        guard bytes.count <= configuration.maxMessageBytes else { throw .messageTooLarge }
        try await write(frame: Self.frame(.text, ByteBuffer(bytes: bytes)))
    }

    func write(frame: WebSocketFrame) async throws(SignalingClientError) {
        guard !userClosed else { throw .closed }
        guard let outbound else { throw .notConnected }
        do { try await outbound.write(frame) } catch { throw .notConnected }
    }

    /// A client frame: final, masked (RFC 6455 §5.3; the mask key is not a secret).
    static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
    }
}

/// Holds the injected generator so it can be passed `inout` as a concrete type.
struct AnyGenerator: Sendable {
    struct Generator: RandomNumberGenerator, Sendable {
        var base: any RandomNumberGenerator & Sendable
        mutating func next() -> UInt64 { base.next() }
    }

    var generator: Generator

    init(generator: some RandomNumberGenerator & Sendable) { self.generator = Generator(base: generator) }

    init(base: any RandomNumberGenerator & Sendable) { self.generator = Generator(base: base) }
}
