public import InvisoTime
public import InvisoWire
public import Logging
public import NIOCore
import NIOPosix

/// The signaling WebSocket to the Inviso server: joins a room, relays signaling messages
/// and binary frames, keeps the connection alive and reconnects.
///
/// The decisions are a ``SignalingMachine``'s; this actor is its driver: it opens
/// connections through its ``SignalingConnector`` (a NIO WebSocket by default), feeds
/// frames and timers to the machine, and writes what it asks for.
/// Call ``run()`` in a task you own (it returns after ``close()``, ``leave()`` or giving
/// up; every task of the client runs inside it) and read ``events``. The client:
/// - sends a WebSocket control-frame ping every ``Configuration/pingInterval`` (25 s) and
///   treats the connection as dead when no pong follows within
///   ``Configuration/pongTimeout`` (10 s);
/// - after a loss, reconnects following ``Configuration/reconnect`` (exponential backoff,
///   full jitter from the injected generator), then rejoins the active room with
///   `join_room {roomId, deviceId}` and re-sends `watch_code` for codes still watched;
/// - never reconnects after ``close()`` or ``leave()``.
///
/// Every timer sleeps on the injected clock, so tests advance a manual clock instead of
/// waiting. Logs carry event kinds and close reasons only: never message bodies, frames,
/// room ids, device IDs or join codes.
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
        /// How long ``SignalingClient/leave()`` waits for the server's `left_room` (5 s).
        public var leaveTimeout: Duration = .seconds(5)

        /// Creates a configuration with the defaults above.
        public init(endpoint: ServerEndpoint) {
            self.endpoint = endpoint
        }

        var machine: SignalingMachine.Configuration {
            var machine = SignalingMachine.Configuration()
            machine.pingInterval = pingInterval
            machine.pongTimeout = pongTimeout
            machine.connectTimeout = connectTimeout
            machine.reconnect = reconnect
            machine.maxMessageBytes = maxMessageBytes
            machine.leaveTimeout = leaveTimeout
            return machine
        }
    }

    /// The events, in order; finishes when ``run()`` returns.
    public nonisolated let events: AsyncStream<SignalingEvent>

    let configuration: Configuration
    let continuation: AsyncStream<SignalingEvent>.Continuation
    let connector: any SignalingConnector
    /// The event loop the actor, its child tasks and its WebSocket run on.
    nonisolated let executorLoop: any EventLoop
    nonisolated let taskExecutor: EventLoopTaskExecutor

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executorLoop.executor.asUnownedSerialExecutor()
    }
    let clock: any InvisoClock
    let logger: Logger
    var machine: SignalingMachine

    /// The open connection, if any, and its number.
    var connection: (any SignalingConnection)?
    var openConnection: UInt64?
    /// ``leave()`` callers waiting for the machine to finish.
    var finishWaiters: [CheckedContinuation<Void, Never>] = []
    /// Connections being opened, so that a timed-out one can be abandoned.
    var pending: [UInt64: SignalingConnectAttempt] = [:]
    var started = false
    /// Child tasks of ``run()``.
    var jobs: AsyncStream<@Sendable () async -> Void>.Continuation?
    var timers = TimerGenerations<SignalingMachine.Timer>()

    /// Creates a client; nothing happens until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: Endpoint, timeouts and reconnect policy.
    ///   - random: The generator for reconnect jitter.
    ///   - clock: Pings, pong and connect timeouts, backoff; a manual clock in tests.
    ///   - group: Where the client runs: the actor, its tasks and the default connector's
    ///     WebSocket share one loop of it; `nil` uses NIO's shared singleton.
    ///   - connector: Opens the connections; `nil` opens WebSockets to the configuration's
    ///     endpoint (``WebSocketSignalingConnector``).
    ///   - logger: Receives connection-level events only.
    public init(
        configuration: Configuration,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        clock: any InvisoClock = SystemClock(),
        group: (any EventLoopGroup)? = nil,
        connector: (any SignalingConnector)? = nil,
        logger: Logger = Logger(label: "inviso.kit.signaling")
    ) {
        self.configuration = configuration
        self.machine = SignalingMachine(configuration: configuration.machine, random: random)
        self.clock = clock
        let loop = (group ?? MultiThreadedEventLoopGroup.singleton).next()
        self.executorLoop = loop
        self.taskExecutor = EventLoopTaskExecutor(loop)
        self.connector =
            connector
            ?? WebSocketSignalingConnector(
                endpoint: configuration.endpoint, maxFrameBytes: configuration.maxMessageBytes,
                connectTimeout: configuration.connectTimeout, group: loop)
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
        let (stream, jobs) = AsyncStream<@Sendable () async -> Void>.makeStream(bufferingPolicy: .unbounded)
        self.jobs = jobs
        await perform(machine.start(at: clock.now))
        // Closed before it ran: nothing to wait for.
        if machine.phase == .closed { jobs.finish() }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await job in stream { group.addTask(executorPreference: taskExecutor) { await job() } }
                group.cancelAll()
            }
        } onCancel: {
            jobs.finish()
        }
        if machine.phase != .closed {
            // Cancelled: end like close() without waiting for anything.
            await perform(machine.close())
        }
        closeConnection()
        continuation.finish()
    }

    /// Closes the connection for good (close code 1000); no reconnect follows and ``run()``
    /// returns. The room is not left: the peer sees `peer_disconnected`.
    public func close() async {
        await perform(machine.close())
    }

    /// Leaves the active room (`leave_room`, so the peer sees `peer_left`), stops watching
    /// codes and closes like ``close()``: no reconnect follows.
    ///
    /// Returns once the server confirmed (`left_room`, so everything sent before was handled
    /// — a REST call made next cannot overtake it), the connection ended, or
    /// ``Configuration/leaveTimeout`` passed.
    public func leave() async {
        await perform(machine.leave(at: clock.now))
        guard machine.phase != .closed else { return }
        await withCheckedContinuation { finishWaiters.append($0) }
    }

    // MARK: - Requests

    /// Takes this device's seat in `roomID` (`join_room`) now if connected, and again after
    /// every reconnect until ``leave()``.
    ///
    /// - Throws: ``SignalingClientError/closed`` after ``close()``.
    public func join(roomID: String, deviceID: String) async throws(SignalingClientError) {
        guard machine.phase != .closed else { throw .closed }
        await perform(machine.join(roomID: roomID, deviceID: deviceID))
    }

    /// Asks to be told (``SignalingEvent/roomAccepted(joinID:roomID:)``) when this device's
    /// code is accepted (`watch_code`), instead of polling ``RoomAPI/check(joinID:deviceID:)``.
    /// Watched again after every reconnect until it fires.
    ///
    /// - Throws: ``SignalingClientError/closed`` after ``close()``.
    public func watch(joinID: String, deviceID: String) async throws(SignalingClientError) {
        guard machine.phase != .closed else { throw .closed }
        await perform(machine.watch(joinID: joinID, deviceID: deviceID))
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
        try await send(binaries: [binary])
    }

    /// Sends binary frames to the other member as one write (the relay path's batches).
    ///
    /// - Throws: As ``send(_:)``; after a failure some of the frames may have gone out.
    public func send(binaries: [[UInt8]]) async throws(SignalingClientError) {
        guard binaries.allSatisfy({ $0.count <= configuration.maxMessageBytes }) else { throw .messageTooLarge }
        guard machine.phase != .closed else { throw .closed }
        guard let connection else { throw .notConnected }
        do {
            try await connection.write(contentsOf: binaries.map { SignalingMachine.Frame(opcode: .binary, payload: $0) })
        } catch {
            throw .notConnected
        }
    }

    /// Whether a connection is open and greeted.
    public var isConnected: Bool { machine.isConnected && connection != nil }

    /// The connection's phase and number, whether a room is held, the timers armed
    /// (diagnostics; no id).
    var diagnostics: String {
        "phase=\(machine.phase) connection=\(machine.connection) hasConnection=\(connection != nil) "
            + "room=\(machine.activeRoom != nil) timers=\(timers.armed.map { "\($0)" }.sorted())"
    }

    func write(_ message: ClientMessage) async throws(SignalingClientError) {
        let bytes = message.object.serialized()
        guard bytes.count <= configuration.maxMessageBytes else { throw .messageTooLarge }
        try await write(frame: SignalingMachine.Frame(opcode: .text, payload: bytes))
    }

    func write(frame: SignalingMachine.Frame) async throws(SignalingClientError) {
        guard machine.phase != .closed else { throw .closed }
        guard let connection else { throw .notConnected }
        do { try await connection.write(frame) } catch { throw .notConnected }
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
