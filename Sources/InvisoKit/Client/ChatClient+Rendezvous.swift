import InvisoStore
import InvisoTime
import InvisoWire
import Logging

// MARK: - The server: signaling events, acceptance polling, the store's expiry sweep

extension ChatClient {
    /// Opens the signaling socket, the relay path over it, and the task that reads its events.
    func startSignaling() {
        var signalingConfiguration = SignalingClient.Configuration(endpoint: configuration.server)
        signalingConfiguration.pingInterval = configuration.signaling.pingInterval
        signalingConfiguration.pongTimeout = configuration.signaling.pongTimeout
        signalingConfiguration.connectTimeout = configuration.signaling.connectTimeout
        signalingConfiguration.reconnect = configuration.signaling.reconnect
        let clock = clock
        let signaling = SignalingClient(
            configuration: signalingConfiguration, random: random.fork(), clock: clock, group: executorLoop,
            connector: signalingConnector, logger: logger)
        let relay = RelayTransport(signaling: signaling, pacing: configuration.relayPacing, clock: clock)
        self.signaling = signaling
        self.relay = relay
        register(relay, as: .relay)
        spawn { await signaling.run() }
        spawn { [weak self] in
            for await event in signaling.events {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    /// Maps a signaling event to the machine's.
    func handle(_ event: SignalingEvent) async {
        if case .binary = event {} else { counters.signalingEvents[event.kind, default: 0] += 1 }
        switch event {
        case .binary(let frame):
            // Handled here rather than through the relay's `incoming`, so that frames and
            // signaling messages (key_exchange, peer_left after an abort) keep their order.
            await received(frame, on: .relay, kind: .relay)
        case .roomAccepted(let joinID, let roomID):
            guard joinID == joinCode else { return }
            await feed(.codeAccepted(roomID: roomID))
        case .roomReady:
            await feed(.roomReady)
        case .message(let object):
            await feed(.signal(object))
        case .peerLeft, .roomClosed:
            // roomClosed: the peer deleted the room before its `leave_room` was handled (a
            // REST call can overtake a socket message), or was purged: it is gone.
            await feed(.peerLeft)
        case .peerDisconnected:
            await feed(.peerDisconnected)
        case .disconnected(.gaveUp):
            await feed(.connectionLost)
        case .disconnected:
            await feed(.relayDisconnected)
        case .serverError(let text):
            // One of the server's fixed messages (`docs/server.md`): no ids, no content.
            logger.debug("server refused a signaling message", metadata: ["error": "\(text)"])
        case .connected(_, let limits):
            logger.debug("signaling connected")
            if let limits, configuration.relayPacingFollowsServer { relay?.adopt(limits) }
        case .joined, .reconnecting:
            break
        }
    }

    /// Creator: polls `check` in case the `watch_code` push never comes.
    func pollForAcceptance() async {
        while state == .pending, !Task.isCancelled {
            do { try await clock.sleep(for: configuration.acceptPollInterval) } catch { return }
            guard state == .pending, let joinCode, let deviceID else { return }
            do {
                if case .accepted(let roomID) = try await api.check(joinID: joinCode, deviceID: deviceID) {
                    await feed(.codeAccepted(roomID: roomID))
                }
            } catch where error == .notFoundOrExpired {
                await feed(.inviteExpired)
            } catch {
                logger.debug("check failed; retrying")
            }
        }
    }

    /// Deletes expired messages now and then.
    func expiryLoop() async {
        while state != .closed, !Task.isCancelled {
            _ = try? store?.deleteExpired(now: clock.wallClock)
            do { try await clock.sleep(for: configuration.expiryInterval) } catch { return }
        }
    }
}
