import InvisoCrypto
import InvisoWire
import Logging

// MARK: - The direct path, tried automatically

extension ChatClient {
    /// Where the automatic direct-path attempt of a session is (`docs/client.md`, "Direct
    /// path"). One attempt per session; it never changes the session's state and never
    /// reports errors: on any failure the session simply stays on the relay.
    enum DirectPhase: Sendable, Equatable {
        /// Not started: the channel is not secured yet, or ``Configuration/direct`` is `nil`.
        case idle
        /// The listener is being bound.
        case binding
        /// Our candidates were sent; waiting for the peer's.
        case listening
        /// The connector is racing for a connection.
        case connecting
        /// The direct connection was added as a path (it may have dropped since).
        case connected
        /// The attempt is over without a direct path (or the session closed).
        case finished
    }

    /// The automatic direct-path attempt's state (one stored property of the actor).
    struct DirectAttempt: Sendable {
        var phase = DirectPhase.idle
        var listener: DirectListener?
        /// The peer's latest `transport_candidates` (they may arrive before our listener).
        var peerCandidates: [TransportCandidates.Candidate]?
        var connection: DirectConnection?
        /// Binds, waits for the peer's candidates (with a timeout) and connects.
        var task: Task<Void, Never>?
    }

    /// The direct phase (tests).
    var directPhase: DirectPhase { direct.phase }

    /// The direct connection in use or last used (tests).
    var directConnection: DirectConnection? { direct.connection }

    /// The channel is secured: bind a listener with the path key and send our candidates.
    /// Nothing when ``Configuration/direct`` is `nil`, or when an attempt already ran.
    func startDirectPath() {
        guard direct.phase == .idle, state != .closed else { return }
        guard let directConfiguration = configuration.direct, let key = directPathKey, let role else {
            direct.phase = .finished
            return
        }
        direct.phase = .binding
        let logger = logger
        direct.task = Task { [weak self] in
            let listener: DirectListener
            do {
                listener = try await DirectListener.bind(
                    key: key, role: role, configuration: directConfiguration, logger: logger)
            } catch {
                logger.debug("direct path: no listener; staying on the relay", metadata: ["reason": "\(error)"])
                await self?.finishDirect()
                return
            }
            guard let self else {
                await listener.close()
                return
            }
            await self.listening(listener)
        }
    }

    /// The listener is up: send our candidates, then connect once the peer's are here
    /// (at once if they came first), or give up after
    /// ``Configuration/directCandidatesTimeout``.
    private func listening(_ listener: DirectListener) async {
        guard state != .closed, direct.phase == .binding, !Task.isCancelled else {
            await listener.close()
            return
        }
        direct.listener = listener
        direct.phase = .listening
        do {
            try sendTransportCandidates(listener.candidates())
        } catch {
            await finishDirect()
            return
        }
        if direct.peerCandidates != nil {
            await connectDirect()
            return
        }
        do { try await clock.sleep(configuration.directCandidatesTimeout) } catch { return }
        if direct.phase == .listening {
            logger.debug("direct path: the peer sent no candidates; staying on the relay")
            await finishDirect()
        }
    }

    /// The peer's `transport_candidates` arrived (before or after our listener).
    func receivedPeerCandidates(_ candidates: [TransportCandidates.Candidate]) {
        direct.peerCandidates = candidates
        guard direct.phase == .listening else { return }
        // Replaces the task that waits for the candidates (its sleep ends).
        direct.task?.cancel()
        direct.task = Task { [weak self] in await self?.connectDirect() }
    }

    /// A `room_ready` after a reconnect: while we still wait for the peer's candidates,
    /// send ours again (the first copy may have reached a peer that was away).
    func resendDirectCandidates() {
        guard direct.phase == .listening, let listener = direct.listener else { return }
        try? sendTransportCandidates(listener.candidates())
    }

    /// Runs the connector; on success the connection becomes the sending path.
    private func connectDirect() async {
        guard direct.phase == .listening, let listener = direct.listener, let candidates = direct.peerCandidates else {
            return
        }
        direct.phase = .connecting
        let connector = DirectConnector(listener: listener, sleep: clock.sleep, logger: logger)
        let connection: DirectConnection
        do {
            connection = try await connector.connect(to: candidates)
        } catch {
            logger.debug("direct path: no connection; staying on the relay", metadata: ["reason": "\(error)"])
            await finishDirect()
            return
        }
        direct.listener = nil
        await listener.close()
        guard state != .closed, direct.phase == .connecting else {
            await connection.close()
            return
        }
        direct.connection = connection
        direct.phase = .connected
        do {
            try addPath(connection)
        } catch {
            await connection.close()
            return
        }
        logger.debug("direct path up")
    }

    /// Ends the attempt without a direct path: the listener closes.
    private func finishDirect() async {
        if direct.phase != .connected { direct.phase = .finished }
        let listener = direct.listener
        direct.listener = nil
        await listener?.close()
    }

    /// The session closes: stop the attempt, close the listener and the connection.
    func closeDirect() async {
        direct.task?.cancel()
        direct.task = nil
        direct.phase = .finished
        let listener = direct.listener
        let connection = direct.connection
        direct.listener = nil
        await listener?.close()
        await connection?.close()
    }
}
