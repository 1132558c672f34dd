public import InvisoTime
public import Logging
import NIOCore
public import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// A ``SignalingBus`` over PostgreSQL `LISTEN`/`NOTIFY`, for server instances that share
/// one database.
///
/// The bus holds two connections of its own, each in a one-connection `PostgresClient`
/// made from the configuration it is given: one publishes, one listens. They exist only
/// while ``run()`` runs: put the bus in the server's `ServiceGroup` (or run it in a task
/// and cancel that task to stop it). ``publish(_:)`` before ``run()`` starts or after it
/// ends throws ``SignalingBusError/Code/notRunning``; ``messages()`` finishes when it ends.
///
/// ## Order and delivery
///
/// Publishes go into one queue, drained by one task that sends each message on the
/// publishing connection and waits for the database to take it before sending the next.
/// Each message is its own transaction, so PostgreSQL delivers them to every listener in
/// the order they were queued (and never folds two equal messages into one). The listening
/// connection hands notifications over one at a time, in the order they arrive, so
/// ``messages()`` yields each publisher's messages in its publish order. A message whose
/// `origin` is this instance is dropped on arrival.
///
/// Delivery is at most once. When the listening connection fails (the server restarts,
/// the network drops it, or it leaves a heartbeat query unanswered for 10 seconds) the bus
/// logs a warning, connects again with exponential backoff (0.1 s doubling to 5 s) and
/// listens again; **notifications sent in that gap are lost**, and so are messages an
/// instance publishes while no instance listens.
///
/// ## What goes on the wire
///
/// A notification's text is `<instanceID>:i:<base64 of the message>` when that fits in
/// 7,800 bytes (PostgreSQL refuses 8,000 or more). A larger message is inserted into the
/// table `inviso_bus_spill(id bigserial primary key, payload bytea not null, created_at
/// timestamptz not null default now())` and announced, in the same statement and so the
/// same transaction, as `<instanceID>:r:<id>`; each listener reads the row by ID, in
/// notification order. ``run()`` creates the table if it is missing (in the first schema
/// of the connection's `search_path`, under an advisory lock so instances starting at
/// once do not race), and every instance deletes rows older than a minute, at start and
/// every 30 seconds: a listener that falls more than a minute behind loses the large
/// messages it has not read yet (it logs each one).
///
/// Anything else on the channel (another program's `NOTIFY`) is logged at debug level
/// and ignored. Anyone who can use the database can read and send bus messages: the bus
/// adds no authentication of its own.
public final class PostgresSignalingBus: SignalingBus {
    /// The largest message ``publish(_:)`` accepts: 1 MiB.
    public static let maximumPayloadSize = 1 << 20

    /// This instance's identifier: the `origin` of the messages it publishes.
    public let instanceID: String

    /// The PostgreSQL notification channel the bus listens and publishes on.
    public let channel: String

    private let publishClient: PostgresClient
    private let listenClient: PostgresClient
    private let logger: Logger
    /// Heartbeats, retries and clean-ups sleep on it.
    private let clock: any InvisoClock
    /// Why the channel or instance ID cannot be used, reported by ``run()``.
    private let configurationProblem: String?
    private let state = Mutex(State())
    private let requests: AsyncStream<PublishRequest>
    private let requestInput: AsyncStream<PublishRequest>.Continuation
    private let inbox: AsyncStream<BusMessage>
    private let inboxInput: AsyncStream<BusMessage>.Continuation

    /// Creates a bus; it connects when ``run()`` runs.
    ///
    /// - Parameters:
    ///   - configuration: Where and how to connect, as for the room store (see
    ///     ``PostgresRoomStore/configuration(url:)``). The bus makes two one-connection
    ///     clients from it, and names their connections `inviso-bus-publish-<instanceID>`
    ///     and `inviso-bus-listen-<instanceID>` (`application_name`) unless the
    ///     configuration already sets an application name. The publishing connection
    ///     sets `synchronous_commit` to `off` unless the configuration sets it: a publish
    ///     then costs one round trip rather than a disk sync, and only a server crash
    ///     (which loses notifications anyway) can lose a message it acknowledged.
    ///   - channel: The notification channel: 1 to 63 lowercase ASCII letters, digits or
    ///     `_`, not starting with a digit. Every instance of one deployment uses the same.
    ///   - instanceID: This instance's identifier, unique among the instances: 1 to 64
    ///     ASCII letters, digits, `.`, `_` or `-`. The default is 16 random hex digits.
    ///   - logger: Receives the bus's and its clients' logging.
    ///
    /// An unusable `channel` or `instanceID` makes ``run()`` throw
    /// ``SignalingBusError/Code/invalidConfiguration``.
    public init(
        configuration: PostgresClient.Configuration,
        channel: String = "inviso_signaling",
        instanceID: String = PostgresSignalingBus.randomInstanceID(),
        clock: any InvisoClock = SystemClock(),
        logger: Logger
    ) {
        self.clock = clock
        var logger = logger
        logger[metadataKey: "inviso.bus.instance"] = "\(instanceID)"
        logger[metadataKey: "inviso.bus.channel"] = "\(channel)"
        self.instanceID = instanceID
        self.channel = channel
        self.logger = logger
        self.publishClient = PostgresClient(
            configuration: Self.dedicated(configuration, role: "publish", instanceID: instanceID),
            backgroundLogger: logger
        )
        self.listenClient = PostgresClient(
            configuration: Self.dedicated(configuration, role: "listen", instanceID: instanceID),
            backgroundLogger: logger
        )
        if !Self.isValidChannel(channel) {
            configurationProblem = "the channel must be 1 to 63 of a-z, 0-9 and _, not starting with a digit"
        } else if !BusNotification.isValidOrigin(instanceID) {
            configurationProblem = "the instance ID must be 1 to 64 of A-Z, a-z, 0-9, '.', '_' and '-'"
        } else {
            configurationProblem = nil
        }
        (requests, requestInput) = AsyncStream.makeStream(of: PublishRequest.self)
        (inbox, inboxInput) = AsyncStream.makeStream(of: BusMessage.self)
    }

    /// 16 random hex digits (64 bits from the system's generator): the default instance ID.
    @usableFromInline
    static func randomInstanceID() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `configuration` for a client of exactly one connection.
    private static func dedicated(
        _ configuration: PostgresClient.Configuration, role: String, instanceID: String
    ) -> PostgresClient.Configuration {
        var configuration = configuration
        configuration.options.minimumConnections = 1
        configuration.options.maximumConnections = 1
        func setIfAbsent(_ name: String, _ value: String) {
            if !configuration.options.additionalStartupParameters.contains(where: { $0.0 == name }) {
                configuration.options.additionalStartupParameters.append((name, value))
            }
        }
        setIfAbsent("application_name", "inviso-bus-\(role)-\(instanceID)")
        if role == "publish" {
            // Each NOTIFY commits a transaction; not waiting for its WAL flush makes a
            // publish one round trip instead of one disk sync. Only a server crash can
            // then lose a committed message, and a crash loses notifications anyway.
            setIfAbsent("synchronous_commit", "off")
        }
        return configuration
    }

    /// Whether `channel` is a name LISTEN and NOTIFY agree on unquoted and quoted alike.
    private static func isValidChannel(_ channel: String) -> Bool {
        let bytes = Array(channel.utf8)
        guard (1...63).contains(bytes.count), !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[0]) else {
            return false
        }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }
}

// MARK: - State

extension PostgresSignalingBus {
    private struct State: Sendable {
        enum Phase: Sendable, Equatable {
            case idle, running, stopped
        }
        var phase = Phase.idle
        /// Whether the listening connection is listening now.
        var listening = false
        /// How many times a `LISTEN` has succeeded.
        var listenCount = 0
        var nextRequestID: UInt64 = 0
        /// The publishes not yet answered, by request ID. Each is resumed exactly once, by
        /// whoever removes it.
        var pending: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// The timer that closes the connections if stopping takes too long.
        var forcedClose: Task<Void, Never>?
        /// Whether run()'s own work has ended (no timer is needed any more).
        var workStopped = false
    }

    private struct PublishRequest: Sendable {
        var id: UInt64
        var message: [UInt8]
    }

    private static let stoppedError = SignalingBusError(.notRunning, "the bus has stopped")

    /// Moves from idle to running, or throws.
    private func start() throws {
        if let configurationProblem {
            state.withLock { $0.phase = .stopped }
            throw SignalingBusError(.invalidConfiguration, configurationProblem)
        }
        try state.withLock { state throws(SignalingBusError) in
            guard state.phase == .idle else { throw SignalingBusError(.alreadyStarted, "run() was called before") }
            state.phase = .running
        }
    }

    /// Refuses new publishes; the queue's consumer sees the end once it has taken the
    /// ones already queued.
    private func stopAccepting() {
        state.withLock { state in
            state.phase = .stopped
            requestInput.finish()
        }
    }

    /// Ends the run: fails every unanswered publish and finishes ``messages()``.
    private func finishRun() {
        let unanswered = state.withLock { state in
            state.phase = .stopped
            state.listening = false
            requestInput.finish()
            let unanswered = Array(state.pending.values)
            state.pending = [:]
            return unanswered
        }
        for continuation in unanswered {
            continuation.resume(throwing: Self.stoppedError)
        }
        inboxInput.finish()
    }

    private func complete(_ id: UInt64, _ result: Result<Void, any Error>) {
        let continuation = state.withLock { $0.pending.removeValue(forKey: id) }
        continuation?.resume(with: result)
    }

    private func setListening(_ listening: Bool) {
        state.withLock { state in
            if listening { state.listenCount += 1 }
            state.listening = listening
        }
    }

    /// Returns once the listening connection is listening (at once if it is).
    ///
    /// Messages published by other instances before that may be lost, so a caller that
    /// needs to see everything (a test, a readiness check) waits here first.
    ///
    /// - Throws: ``SignalingBusError/Code/notRunning`` when the bus has stopped;
    ///   `CancellationError` when the task is cancelled.
    package func waitUntilListening() async throws {
        while true {
            let (phase, listening) = state.withLock { ($0.phase, $0.listening) }
            if listening { return }
            if phase == .stopped { throw Self.stoppedError }
            try await clock.sleep(for: .milliseconds(10))
        }
    }
}

// MARK: - SignalingBus

extension PostgresSignalingBus {
    /// Queues `message` for every other instance and returns when the database has taken
    /// it (committed the notification, and the spill row for a large message). Messages
    /// are sent in the order their `publish` calls queued them.
    ///
    /// - Parameter message: Any bytes, at most ``maximumPayloadSize``.
    /// - Throws: ``SignalingBusError/Code/payloadTooLarge`` for a message over 1 MiB;
    ///   ``SignalingBusError/Code/notRunning`` when ``run()`` is not running (or stops
    ///   before the message is sent); ``SignalingBusError/Code/unavailable`` when the
    ///   database failed. In each case the message was not sent (unless the connection
    ///   broke after the database took it, which cannot be told apart).
    ///   `CancellationError` when the task is already cancelled (once queued, a message is
    ///   sent regardless). While the database is unreachable, publishes wait for it.
    public func publish(_ message: [UInt8]) async throws {
        guard message.count <= Self.maximumPayloadSize else {
            throw SignalingBusError(
                .payloadTooLarge, "\(message.count) bytes; the limit is \(Self.maximumPayloadSize)"
            )
        }
        try Task.checkCancellation()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // Queued under the lock: the queue order is the order of the calls, and no
            // request enters after stopAccepting() finished the queue.
            let queued = state.withLock { state in
                guard state.phase == .running else { return false }
                let id = state.nextRequestID
                state.nextRequestID &+= 1
                guard case .enqueued = requestInput.yield(PublishRequest(id: id, message: message)) else {
                    return false
                }
                state.pending[id] = continuation
                return true
            }
            if !queued {
                continuation.resume(throwing: SignalingBusError(.notRunning, "the bus is not running"))
            }
        }
    }

    /// The messages other instances publish, in arrival order; it finishes when ``run()``
    /// ends. Call once: the stream has one consumer. Messages wait in it without limit
    /// until read, so its consumer should read continuously.
    public func messages() -> AsyncStream<BusMessage> {
        inbox
    }
}

// MARK: - Service

extension PostgresSignalingBus: Service {
    /// Connects, creates the spill table if needed, listens and sends queued messages until
    /// the task is cancelled or the service group shuts down gracefully. Call it once.
    ///
    /// Database failures do not end it: it logs them and tries again with backoff. When
    /// asked to stop, it first lets the queries it has under way finish (at most 10
    /// seconds), then closes its connections.
    ///
    /// - Throws: ``SignalingBusError/Code/invalidConfiguration`` for an unusable channel
    ///   or instance ID, ``SignalingBusError/Code/alreadyStarted`` when called again.
    public func run() async throws {
        try start()
        logger.info("signaling bus starting")
        // A stopping PostgresClient closes its connections at once, and postgres-nio never
        // answers a query written to a connection it has just closed: the query's caller
        // would wait forever. So the clients must stop after the bus's own work, not with
        // it: they run in a task of their own, which neither this task's cancellation nor
        // the service group's graceful shutdown reaches. It never outlives run(), which
        // cancels and awaits it.
        let clients = Task.detached { [publishClient, listenClient] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await publishClient.run() }
                group.addTask { await listenClient.run() }
            }
        }
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.listenUntilCancelled() }
                    group.addTask { await self.publishUntilCancelled() }
                    // Each child runs until cancelled; one that ends early ends them all.
                    _ = await group.next()
                    group.cancelAll()
                }
            } onCancel: {
                self.closeClientsLater(clients)
            }
        }
        state.withLock { state in
            state.workStopped = true
            return state.forcedClose.take()
        }?.cancel()
        clients.cancel()
        await clients.value
        finishRun()
        logger.info("signaling bus stopped")
    }

    /// How long the bus's own work may take to stop before its connections are closed
    /// under it.
    private static let shutdownGrace = Duration.seconds(10)

    /// Cancels `clients` after ``shutdownGrace`` unless ``run()`` gets there first (it
    /// cancels this timer), so a query stuck on an unresponsive server cannot hold the
    /// shutdown forever.
    private func closeClientsLater(_ clients: Task<Void, Never>) {
        let logger = logger
        state.withLock { state in
            guard !state.workStopped else { return }
            state.forcedClose = Task.detached {
                do { try await self.clock.sleep(for: Self.shutdownGrace) } catch { return }
                logger.warning("the bus did not stop within \(Self.shutdownGrace); closing its connections")
                clients.cancel()
            }
        }
    }
}

// MARK: - Publishing

extension PostgresSignalingBus {
    /// A key for `pg_advisory_xact_lock` that serializes creating the spill table.
    private static let spillTableLock: Int64 = 0x696E_7669_736F_0002
    private static let spillCleanupInterval = Duration.seconds(30)
    private static let initialRetryDelay = Duration.milliseconds(100)
    private static let maximumRetryDelay = Duration.seconds(5)

    /// Creates the spill table, then sends queued messages and deletes old spill rows until
    /// cancelled.
    private func publishUntilCancelled() async {
        await withTaskCancellationHandler {
            guard await createSpillTable() else { return }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.sendQueuedMessages() }
                group.addTask { await self.deleteOldSpillsPeriodically() }
                _ = await group.next()
                group.cancelAll()
            }
        } onCancel: {
            stopAccepting()
        }
    }

    /// Creates the spill table if it is missing, retrying with backoff.
    ///
    /// - Returns: `false` when cancelled first.
    private func createSpillTable() async -> Bool {
        var delay = Self.initialRetryDelay
        while !Task.isCancelled {
            do {
                // One statement, so one implicit transaction and no query after a failure.
                // An existing table needs no CREATE privilege; the advisory lock keeps
                // instances starting at once from racing on the catalog (CREATE TABLE IF
                // NOT EXISTS alone can fail for the loser).
                _ = try await publishClient.query(
                    PostgresQuery(
                        unsafeSQL: """
                            DO $$
                            BEGIN
                                IF to_regclass('inviso_bus_spill') IS NULL THEN
                                    PERFORM pg_advisory_xact_lock(\(Self.spillTableLock));
                                    CREATE TABLE IF NOT EXISTS inviso_bus_spill (
                                        id BIGSERIAL PRIMARY KEY,
                                        payload BYTEA NOT NULL,
                                        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
                                    );
                                END IF;
                            END
                            $$
                            """
                    ),
                    logger: logger
                ).collect()
                return true
            } catch {
                if Task.isCancelled { return false }
                logger.warning(
                    "cannot create the spill table; retrying",
                    metadata: ["error": "\(Self.describe(error))", "retry.in": "\(delay)"]
                )
                do { try await clock.sleep(for: delay) } catch { return false }
                delay = min(delay * 2, Self.maximumRetryDelay)
            }
        }
        return false
    }

    /// Sends the queued messages one at a time, each after the previous one committed.
    private func sendQueuedMessages() async {
        for await request in requests {
            if Task.isCancelled {
                complete(request.id, .failure(Self.stoppedError))
                continue
            }
            do {
                // Once started, a send runs to its end even when the bus is stopping, so
                // its publish is told truthfully whether the message went out (a cancelled
                // read of the result could fail a message that was sent). The connection
                // stays open until this work ends, or the shutdown grace runs out.
                let message = request.message
                try await Task { try await self.send(message) }.value
                complete(request.id, .success(()))
            } catch {
                let stopped = Task.isCancelled || state.withLock { $0.phase == .stopped }
                if !stopped {
                    logger.warning("cannot publish a message", metadata: ["error": "\(Self.describe(error))"])
                }
                complete(
                    request.id,
                    .failure(
                        stopped ? Self.stoppedError : SignalingBusError(.unavailable, "publishing: \(Self.describe(error))")
                    )
                )
            }
        }
    }

    /// One statement (one transaction) that notifies `message`, inline or spilled.
    private func send(_ message: [UInt8]) async throws {
        let inlineLength = BusNotification.inlineLength(
            originLength: instanceID.utf8.count, payloadCount: message.count
        )
        if inlineLength <= BusNotification.maximumInlineLength {
            let text = BusNotification.inline(origin: instanceID, payload: message).text
            _ = try await publishClient.query("SELECT pg_notify(\(channel), \(text))", logger: logger).collect()
        } else {
            let prefix = BusNotification.spilledPrefix(origin: instanceID)
            _ = try await publishClient.query(
                """
                WITH spilled AS (
                    INSERT INTO inviso_bus_spill (payload) VALUES (\(ByteBuffer(bytes: message))) RETURNING id
                )
                SELECT pg_notify(\(channel), \(prefix) || id::text) FROM spilled
                """,
                logger: logger
            ).collect()
        }
    }

    /// Deletes spill rows older than a minute, now and every 30 seconds.
    private func deleteOldSpillsPeriodically() async {
        while !Task.isCancelled {
            do {
                let rows = try await publishClient.query(
                    """
                    WITH gone AS (
                        DELETE FROM inviso_bus_spill WHERE created_at < now() - interval '1 minute' RETURNING 1
                    )
                    SELECT count(*) FROM gone
                    """,
                    logger: logger
                ).collect()
                if let row = rows.first, let count = try? row.decode(Int.self), count > 0 {
                    logger.debug("deleted old spilled messages", metadata: ["count": "\(count)"])
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot delete old spilled messages", metadata: ["error": "\(Self.describe(error))"])
            }
            do { try await clock.sleep(for: Self.spillCleanupInterval) } catch { return }
        }
    }
}

// MARK: - Listening

extension PostgresSignalingBus {
    private static let heartbeatInterval = Duration.seconds(15)
    private static let heartbeatTimeout = Duration.seconds(10)

    /// Listens on the channel, and again after each failure (with backoff), until cancelled.
    private func listenUntilCancelled() async {
        var delay = Self.initialRetryDelay
        while !Task.isCancelled {
            let listensBefore = state.withLock { $0.listenCount }
            let reason: String
            do {
                try await listenClient.withConnection { connection in
                    try await connection.listen(on: self.channel) { notifications in
                        try await self.consume(notifications, on: connection)
                    }
                }
                reason = "the notification stream ended"
            } catch {
                reason = Self.describe(error)
            }
            setListening(false)
            if Task.isCancelled { return }
            if state.withLock({ $0.listenCount }) != listensBefore { delay = Self.initialRetryDelay }
            logger.warning(
                "not listening; notifications sent until it listens again are lost",
                metadata: ["reason": "\(reason)", "retry.in": "\(delay)"]
            )
            do { try await clock.sleep(for: delay) } catch { return }
            delay = min(delay * 2, Self.maximumRetryDelay)
        }
    }

    /// Hands `notifications` to ``messages()`` one at a time while a heartbeat checks the
    /// connection; throws (or returns) when either stops.
    private func consume(_ notifications: PostgresNotificationSequence, on connection: PostgresConnection) async throws {
        let reconnected = state.withLock { $0.listenCount } > 0
        setListening(true)
        logger.info(reconnected ? "listening again" : "listening")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.heartbeat(connection) }
            group.addTask {
                for try await notification in notifications {
                    try await self.receive(notification.payload, on: connection)
                }
            }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    /// Queries the listening connection every 15 seconds; closes it (which fails the
    /// listen) when an answer takes more than 10 seconds, so a connection that died
    /// silently is noticed.
    private func heartbeat(_ connection: PostgresConnection) async throws {
        while true {
            try await clock.sleep(for: Self.heartbeatInterval)
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try Self.checkOpen(connection)
                    _ = try await connection.query("SELECT 1", logger: self.logger).collect()
                    return true
                }
                group.addTask {
                    try await self.clock.sleep(for: Self.heartbeatTimeout)
                    return false
                }
                let answered = try await group.next() ?? false
                // The query cannot be cancelled; closing the connection fails it.
                if !answered { try? await connection.close() }
                group.cancelAll()
                return answered
            }
            if !answered {
                throw SignalingBusError(.unavailable, "the listening connection did not answer a heartbeat")
            }
        }
    }

    /// Decodes one notification and yields its message unless it is our own; reads a
    /// spilled message's row on the listening connection, so it is yielded in order.
    private func receive(_ text: String, on connection: PostgresConnection) async throws {
        guard let notification = BusNotification(text: text) else {
            logger.debug(
                "ignoring a notification that is not a bus message", metadata: ["length": "\(text.utf8.count)"]
            )
            return
        }
        guard notification.origin != instanceID else { return }
        switch notification {
        case .inline(let origin, let payload):
            inboxInput.yield(BusMessage(origin: origin, payload: payload))
        case .spilled(let origin, let id):
            guard let payload = try await spilledPayload(id: id, on: connection) else { return }
            inboxInput.yield(BusMessage(origin: origin, payload: payload))
        }
    }

    /// The spill row `id`, or `nil` (logged) when it is gone or the database refused the
    /// read. Throws when the connection failed.
    private func spilledPayload(id: Int64, on connection: PostgresConnection) async throws -> [UInt8]? {
        let rows: [PostgresRow]
        do {
            try Self.checkOpen(connection)
            rows = try await connection.query(
                "SELECT payload FROM inviso_bus_spill WHERE id = \(id)", logger: logger
            ).collect()
        } catch let error as PSQLError where error.code == .server {
            logger.warning(
                "cannot read a spilled message; dropped it",
                metadata: ["spill.id": "\(id)", "error": "\(Self.describe(error))"]
            )
            return nil
        }
        guard let row = rows.first, let buffer = try? row.decode(ByteBuffer.self) else {
            logger.warning(
                "a spilled message is gone (rows are deleted after a minute); dropped it",
                metadata: ["spill.id": "\(id)"]
            )
            return nil
        }
        return Array(buffer.readableBytesView)
    }
}

// MARK: - Errors

extension PostgresSignalingBus {
    /// Throws when `connection` has closed. postgres-nio (1.33) never answers a query
    /// written to a connection after it closed, so every query on the connection the bus
    /// holds is checked first (which leaves only the instant between check and write).
    private static func checkOpen(_ connection: PostgresConnection) throws {
        if connection.isClosed {
            throw SignalingBusError(.unavailable, "the listening connection has closed")
        }
    }
}

extension PostgresSignalingBus {
    /// A log line for `error`: postgres-nio's error kind, SQLSTATE and server message,
    /// never the query or its bindings (which hold messages).
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as PSQLError:
            var detail = "\(error.code)"
            if let state = error.serverInfo?[.sqlState] { detail += " SQLSTATE \(state)" }
            if let message = error.serverInfo?[.message] { detail += ": \(message)" }
            return detail
        case let error as SignalingBusError:
            return error.detail
        case is CancellationError:
            return "cancelled"
        default:
            return "\(type(of: error))"
        }
    }
}
