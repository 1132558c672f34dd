public import InvisoTime
public import InvisoWire
public import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Races every way to reach the peer directly and settles both sides on one connection.
///
/// ``connect(to:)`` dials each of the peer's candidates at once and, at the same time,
/// takes the authenticated inbound connections of the ``DirectListener``. The rule
/// (docs/direct.md, "Selection"):
///
/// - The **creator** takes the first connection that completes authentication (dialled or
///   accepted), sends the `selected` control frame on it, and closes the others.
/// - The **joiner** keeps its authenticated connections and takes the one on which
///   `selected` arrives; it closes the others.
///
/// So both sides end on the same TCP connection even when both dialled at once. On timeout,
/// failure or cancellation everything opened is closed and a ``DirectError`` is thrown: the
/// caller stays on the relay.
public struct DirectConnector: Sendable {
    private let listener: DirectListener
    private let clock: any InvisoClock
    private let logger: Logger

    /// - Parameters:
    ///   - listener: Our listener; its key, role, configuration and event loops are used for
    ///     the dialled connections too.
    ///   - clock: Measures the overall timeout; a manual clock in tests.
    ///   - logger: Receives connection-level events only; defaults to the listener's.
    public init(
        listener: DirectListener,
        clock: any InvisoClock = SystemClock(),
        logger: Logger? = nil
    ) {
        self.listener = listener
        self.clock = clock
        self.logger = logger ?? listener.logger
    }

    private enum Event: Sendable {
        /// A dialled connection authenticated.
        case dialled(DirectConnection)
        /// An inbound connection authenticated (taken from the listener).
        case accepted(DirectConnection)
        /// Joiner: `selected` arrived on this connection.
        case selected(DirectConnection)
        /// Joiner: this connection closed without `selected`.
        case unselected(DirectConnection)
        case dialFailed(DirectError)
        case inboundEnded
        case timedOut
        case cancelled

        var connection: DirectConnection? {
            switch self {
            case .dialled(let connection), .accepted(let connection), .selected(let connection),
                .unselected(let connection):
                connection
            case .dialFailed, .inboundEnded, .timedOut, .cancelled:
                nil
            }
        }
    }

    /// Connects to the peer: dials `candidates` (only `tcp` ones, at most
    /// ``DirectConfiguration/maxDialedCandidates``) and accepts inbound connections on the
    /// listener, for at most ``DirectConfiguration/connectTimeout``.
    ///
    /// - Parameter candidates: The peer's `transport_candidates`; may be empty (then only
    ///   inbound connections can win).
    /// - Returns: The selected connection, the same one the peer's connector returns.
    /// - Throws: ``DirectError/timedOut`` when no connection was authenticated and selected
    ///   in time (wrong keys, unreachable candidates and dropped handshakes all end here);
    ///   ``DirectError/cancelled`` when the task was cancelled.
    public func connect(to candidates: [TransportCandidates.Candidate]) async throws(DirectError) -> DirectConnection {
        let targets = Self.dialTargets(candidates, limit: listener.configuration.maxDialedCandidates)
        let role = listener.role
        let timeout = listener.configuration.connectTimeout
        let clock = clock
        let listener = listener
        logger.debug("direct connect started", metadata: ["candidates": "\(targets.count)", "role": "\(role)"])

        let result: Result<DirectConnection, DirectError> = await withTaskGroup(of: Event.self) { group in
            group.addTask {
                do {
                    try await clock.sleep(for: timeout)
                    return .timedOut
                } catch {
                    return .cancelled
                }
            }
            for target in targets {
                group.addTask { await Self.dial(target, listener: listener) }
            }
            group.addTask { await Self.nextInbound(listener) }

            var outcome: Result<DirectConnection, DirectError>?
            var waiting: [DirectConnection] = []  // joiner: authenticated, not yet selected
            while outcome == nil, let event = await group.next() {
                switch event {
                case .dialled(let connection), .accepted(let connection):
                    if case .accepted = event { group.addTask { await Self.nextInbound(listener) } }
                    switch role {
                    case .creator:
                        do {
                            try await connection.sendSelected()
                            outcome = .success(connection)
                        } catch {
                            await connection.close()
                        }
                    case .joiner:
                        waiting.append(connection)
                        group.addTask {
                            let selected = await withTaskCancellationHandler {
                                await connection.waitSelected()
                            } onCancel: {
                                connection.closeNow()
                            }
                            return selected ? .selected(connection) : .unselected(connection)
                        }
                    }
                case .selected(let connection):
                    outcome = .success(connection)
                case .unselected(let connection):
                    waiting.removeAll { $0 === connection }
                    await connection.close()
                case .dialFailed, .inboundEnded:
                    break
                case .timedOut:
                    outcome = .failure(.timedOut)
                case .cancelled:
                    outcome = .failure(.cancelled)
                }
            }
            group.cancelAll()
            let winner = try? outcome?.get()
            // Close whatever the cancelled tasks still produce, and every loser.
            for await event in group {
                if let connection = event.connection, connection !== winner { await connection.close() }
            }
            for connection in waiting where connection !== winner { await connection.close() }
            return outcome ?? .failure(.cancelled)
        }
        switch result {
        case .success(let connection):
            logger.debug("direct connection selected", metadata: ["role": "\(role)"])
            return connection
        case .failure(let error):
            logger.debug("direct connect failed", metadata: ["reason": "\(error)"])
            throw error
        }
    }

    // MARK: - Tasks

    /// The `tcp` candidates with a usable host and port, without duplicates, at most `limit`.
    static func dialTargets(
        _ candidates: [TransportCandidates.Candidate], limit: Int
    ) -> [TransportCandidates.Candidate] {
        var seen: Set<String> = []
        var targets: [TransportCandidates.Candidate] = []
        for candidate in candidates where targets.count < limit {
            guard candidate.transport.lowercased() == "tcp", !candidate.host.isEmpty, candidate.host.utf8.count <= 255,
                (1...65_535).contains(candidate.port), seen.insert("\(candidate.host)|\(candidate.port)").inserted
            else { continue }
            targets.append(candidate)
        }
        return targets
    }

    /// The next authenticated inbound connection of the listener.
    private static func nextInbound(_ listener: DirectListener) async -> Event {
        guard let connection = await listener.inbox.next() else { return .inboundEnded }
        return .accepted(connection)
    }

    /// Opens a TCP connection to `target` and authenticates it as the dialer.
    private static func dial(_ target: TransportCandidates.Candidate, listener: DirectListener) async -> Event {
        let attempt = DialAttempt()
        let configuration = listener.configuration
        let key = listener.key
        let role = listener.role
        let logger = listener.logger
        return await withTaskCancellationHandler {
            let setup: DirectChannelSetup
            do {
                setup = try await ClientBootstrap(group: listener.group)
                    .connectTimeout(configuration.dialTimeout.timeAmount)
                    .connect(host: target.host, port: target.port) { channel in
                        guard attempt.register(channel) else {
                            return channel.eventLoop.makeFailedFuture(DirectError.cancelled)
                        }
                        return channel.eventLoop.makeCompletedFuture {
                            try DirectPipeline.configure(
                                channel, side: .dialer, key: key, role: role, configuration: configuration,
                                logger: logger)
                        }
                    }
            } catch {
                logger.debug("direct dial failed", metadata: ["reason": "\(DirectError.connectFailed)"])
                return .dialFailed(.connectFailed)
            }
            do {
                try await setup.established.get()
            } catch {
                setup.channel.close(promise: nil)
                return .dialFailed((error as? DirectError) ?? .connectionClosed)
            }
            return .dialled(DirectConnection(setup, maxFrameBytes: configuration.maxFrameBytes))
        } onCancel: {
            attempt.cancel()
        }
    }
}

/// The channels one dial created, so that cancelling the dial closes them (NIO's connect
/// and handshake futures do not follow task cancellation).
private final class DialAttempt: Sendable {
    private struct State {
        var cancelled = false
        var channels: [any Channel] = []
    }

    private let state = Mutex(State())

    /// Records a new channel; `false` when the dial was already cancelled.
    func register(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.channels.append(channel)
            return true
        }
    }

    /// Marks the dial cancelled and closes its channels.
    func cancel() {
        let channels = state.withLock { state in
            state.cancelled = true
            return state.channels
        }
        for channel in channels { channel.close(promise: nil) }
    }
}
