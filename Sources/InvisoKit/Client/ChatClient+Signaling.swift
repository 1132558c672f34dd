import Crypto
import Foundation
import InvisoStore
import InvisoWire
import Logging

// MARK: - Signaling, acceptance and the room

extension ChatClient {
    /// Opens the signaling socket, the relay path over it, and the task that reads its events.
    func startSignaling() -> SignalingClient {
        var signalingConfiguration = SignalingClient.Configuration(endpoint: configuration.server)
        signalingConfiguration.pingInterval = configuration.signaling.pingInterval
        signalingConfiguration.pongTimeout = configuration.signaling.pongTimeout
        signalingConfiguration.connectTimeout = configuration.signaling.connectTimeout
        signalingConfiguration.reconnect = configuration.signaling.reconnect
        let signaling = SignalingClient(
            configuration: signalingConfiguration, random: forkRandom(), sleep: clock.sleep, logger: logger)
        let relay = RelayTransport(
            signaling: signaling, pacing: configuration.relayPacing, now: clock.now, sleep: clock.sleep)
        self.signaling = signaling
        self.relay = relay
        sendPath = relay
        startTask { await signaling.run() }
        startTask { [weak self] in
            for await event in signaling.events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        startTask { [weak self] in await self?.retransmitLoop() }
        if store != nil { startTask { [weak self] in await self?.expiryLoop() } }
        return signaling
    }

    func handle(_ event: SignalingEvent) async {
        guard state != .closed else { return }
        switch event {
        case .binary(let frame):
            // Handled here rather than through the relay's `incoming`, so that frames and
            // signaling messages (key_exchange, peer_left after an abort) keep their order.
            handleFrame(frame, path: .relay)
        case .roomAccepted(let joinID, let roomID):
            guard joinID == joinCode else { return }
            await accepted(roomID: roomID)
        case .roomReady:
            roomReady()
        case .message(let object):
            handleSignal(object)
        case .peerLeft:
            await close(reason: .peerLeft, leaveRoom: true)
        case .roomClosed:
            // The peer deleted the room before its `leave_room` was handled (a REST call
            // can overtake a socket message), or was purged: it is gone.
            await close(reason: .peerLeft, leaveRoom: true)
        case .peerDisconnected:
            peerPresent = false
        case .disconnected(.gaveUp):
            emit(.error(.connectionLost))
            await close(reason: .connectionLost, leaveRoom: false)
        case .disconnected:
            peerPresent = false
        case .serverError:
            logger.debug("server refused a signaling message")
        case .connected, .joined, .reconnecting:
            break
        }
    }

    /// Creator: polls `check` in case the `watch_code` push never comes.
    func pollForAcceptance() async {
        while state == .pending, !Task.isCancelled {
            do { try await clock.sleep(configuration.acceptPollInterval) } catch { return }
            guard state == .pending, let joinCode, let deviceID else { return }
            do {
                if case .accepted(let roomID) = try await api.check(joinID: joinCode, deviceID: deviceID) {
                    await accepted(roomID: roomID)
                }
            } catch where error == .notFoundOrExpired {
                guard state == .pending else { return }
                emit(.error(.expired))
                await close(reason: .expired, leaveRoom: false)
            } catch {
                logger.debug("check failed; retrying")
            }
        }
    }

    /// Creator: the code was accepted; join the room.
    func accepted(roomID: String) async {
        guard state == .pending, let deviceID else { return }
        self.roomID = roomID
        state = .accepted
        updateStoredSession { $0.roomID = roomID; $0.state = .accepted }
        emit(.state(.accepted))
        try? await signaling?.join(roomID: roomID, deviceID: deviceID)
    }

    /// Both members are in the room: start the channel the first time, else resume
    /// sending on the relay (a reconnect).
    func roomReady() {
        peerPresent = true
        guard channel == nil else {
            if channel?.isEstablished == true, sendPath === relay {
                link.retransmitAll()
            }
            resendDirectCandidates()
            schedulePump()
            return
        }
        guard let roomID, let role, let staticKey else { return }
        if let invite {
            do {
                channel = try V2SecureChannel(
                    role: role, invite: invite, roomID: roomID, staticKey: staticKey, random: forkRandom())
            } catch {
                emit(.error(ChatError(.pairingFailed, error.description)))
                Task { await self.close(reason: .pairingFailed, leaveRoom: true) }
                return
            }
        } else {
            channel = makeV1Channel(role: role, roomID: roomID)
        }
        apply(channel?.start() ?? [])
        let timeout = configuration.pairingTimeout
        let sleep = clock.sleep
        pairingTimer = Task { [weak self] in
            do { try await sleep(timeout) } catch { return }
            await self?.pairingTimedOut()
        }
    }

    func makeV1Channel(role: V2Pairing.Role, roomID: String) -> V1SecureChannel {
        let key = v1Key ?? newV1Key()
        v1Key = key
        let date = clock.date
        return V1SecureChannel(
            role: role == .creator ? .initiator : .responder, roomID: roomID, privateKey: key,
            timestamp: { date().timeIntervalSince1970 })
    }

    func pairingTimedOut() async {
        guard state != .closed, channel?.isEstablished != true else { return }
        emit(.error(.pairingTimedOut))
        await close(reason: .pairingFailed, leaveRoom: true)
    }

    /// A relayed signaling message from the peer.
    func handleSignal(_ object: JSONObject) {
        let type = object["type"]?.stringValue
        if type == RelayKind.transportCandidates.rawValue {
            if let candidates = try? TransportCandidates(json: object) {
                emit(.transportCandidates(candidates.candidates))
                receivedPeerCandidates(candidates.candidates)
            }
            return
        }
        guard type == RelayKind.keyExchange.rawValue || type == RelayKind.keyExchangeComplete.rawValue else { return }
        // The creator falls back to v1 when the peer, holding only the join code, starts
        // the app's key exchange before any v2 frame of its own arrived.
        if type == RelayKind.keyExchange.rawValue, role == .creator, configuration.allowsV1Fallback,
            let v2 = channel as? V2SecureChannel, !v2.heardFromPeer, let roomID
        {
            logger.info("peer speaks v1; falling back")
            var v1 = makeV1Channel(role: .creator, roomID: roomID)
            let started = v1.start()
            channel = v1
            updateStoredSession { $0.protocolVersion = 1 }
            warnV1()
            apply(started)
        }
        guard channel != nil else { return }
        do {
            apply(try channel!.receive(signal: object))
        } catch {
            logger.debug("signaling message refused")
        }
    }

    /// Ends the session: reports, stops every task, closes the paths and the socket.
    ///
    /// A session that is suspended, or whose server connection could not be restored,
    /// stays stored with its state saved so it can be resumed (``resume(sessionID:)``);
    /// every other end leaves it and wipes its keys.
    func close(reason: ChatCloseReason, leaveRoom: Bool) async {
        guard state != .closed else { return }
        let keepsSession = (reason == .suspended || reason == .connectionLost) && resumeSnapshot() != nil
        if keepsSession { saveResumeState() }
        state = .closed
        ackTimer?.cancel()
        // A pairing failure: give the abort frame a chance to reach the peer.
        if reason == .pairingFailed, let relay {
            for case .frame(let frame) in control { try? await relay.send(frame) }
        }
        control.removeAll()
        if leaveRoom { await signaling?.leave() } else { await signaling?.close() }
        if leaveRoom, let deviceID {
            if let roomID { try? await api.deleteRoom(roomID: roomID, deviceID: deviceID) }
            _ = try? await api.purge(deviceIDs: [deviceID])
        }
        if let store, let sessionID, !keepsSession {
            try? store.leaveSession(id: sessionID)
        }
        // Cancelled only now: close() may run in one of these tasks (the pairing timer,
        // the event reader), and a cancelled task's socket writes would not go out.
        pairingTimer?.cancel()
        await closeDirect()
        for task in tasks { task.cancel() }
        pumpTask?.cancel()
        await relay?.close()
        if let sendPath, sendPath !== relay { await sendPath.close() }
        emit(.state(.closed))
        emit(.closed(reason))
        continuation.finish()
        logger.info("session closed", metadata: ["reason": "\(reason)"])
    }
}
