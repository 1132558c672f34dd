import Foundation
import InvisoStore
import InvisoWire
import Logging

// MARK: - Paths, the send pump, and received frames

extension ChatClient {
    /// Adds a path (a direct connection) and moves sending to it: frames still arriving on
    /// the old path are read and handled, every unacknowledged message is sent again on
    /// the new one (the peer drops duplicates and restores the order), and
    /// ``ChatEvent/path(_:)`` reports the change. When the new path's stream finishes,
    /// sending falls back to the relay.
    ///
    /// - Throws: ``ChatError/closed`` after the session ended.
    public func addPath(_ transport: any FrameTransport) throws(ChatError) {
        guard state != .closed else { throw .closed }
        startReader(transport)
        switchSending(to: transport)
    }

    func switchSending(to transport: any FrameTransport) {
        sendPath = transport
        emit(.path(transport.path))
        if channel?.carriesAcknowledgements == true { link.retransmitAll() }
        schedulePump()
    }

    /// Reads a path's frames until it closes.
    func startReader(_ transport: any FrameTransport) {
        startTask { [weak self] in
            for await frame in transport.incoming {
                guard let self else { return }
                await self.handleFrame(frame, path: transport.path)
            }
            await self?.pathEnded(transport)
        }
    }

    func pathEnded(_ transport: any FrameTransport) {
        guard state != .closed, sendPath === transport, let relay, transport !== relay else { return }
        switchSending(to: relay)
    }

    // MARK: Receiving

    func handleFrame(_ frame: [UInt8], path: ChatPath) {
        guard state != .closed, channel != nil else { return }
        frameTap?(path, frame)
        let actions: [SecureChannelAction]
        do {
            actions = try channel!.receive(frame: frame)
        } catch {
            logger.debug("frame refused", metadata: ["path": "\(path)"])
            return
        }
        apply(actions)
        resumeStateChanged()
    }

    /// Carries out a channel's actions in order.
    func apply(_ actions: [SecureChannelAction]) {
        for action in actions {
            switch action {
            case .sendFrame(let frame):
                control.append(.frame(frame))
                schedulePump()
            case .sendSignal(let message):
                control.append(.signal(message))
                schedulePump()
            case .established:
                established()
            case .received(let record):
                handle(record)
            case .failed(let error):
                let chatError =
                    error == .invalidPeerKey ? ChatError(.invalidPeerKey) : ChatError(.pairingFailed, error.description)
                emit(.error(chatError))
                Task { await self.close(reason: .pairingFailed, leaveRoom: true) }
            }
        }
    }

    func established() {
        guard let channel, state != .closed else { return }
        resumeStateChanged()
        pairingTimer?.cancel()
        state = .active
        updateStoredSession { $0.state = .active }
        if let store, let sessionID, let peer = channel.peerIdentity {
            try? store.savePinnedIdentity(
                PinnedIdentity(publicKey: Data(peer), safetyNumber: channel.safetyNumber, isVerified: channel.isVerified),
                sessionID: sessionID)
        }
        emit(.state(.active))
        if let security { emit(.secured(security)) }
        if let sendPath { emit(.path(sendPath.path)) }
        logger.info("secure channel established", metadata: ["protocol": "\(channel.version)"])
        schedulePump()
        startDirectPath()
    }

    func handle(_ record: ReliableRecord) {
        switch record {
        case .ack(let ack):
            let acknowledged: ClosedRange<UInt64>?
            do {
                acknowledged = try link.acknowledge(ack)
            } catch {
                logger.debug("ack refused")
                return
            }
            guard let acknowledged else { return }
            for id in acknowledged {
                if let store, let sessionID { _ = try? store.markDelivered(messageID: "s\(id)", sessionID: sessionID) }
                emit(.delivered(id: id))
            }
            schedulePump()
        case .data(let seq, let payload):
            guard channel?.carriesAcknowledgements == true else {
                deliver(id: seq, plaintext: payload)
                return
            }
            let deliveries: [ReliableLink.Delivery]
            do {
                deliveries = try link.receive(seq: seq, payload: payload)
            } catch {
                logger.debug("message refused")
                return
            }
            for delivery in deliveries { deliver(id: delivery.seq, plaintext: delivery.payload) }
            if link.isAckDue {
                ackForced = true
                schedulePump()
            } else if link.isAckOwed, ackTimer == nil {
                let delay = configuration.ackDelay
                let sleep = clock.sleep
                ackTimer = Task { [weak self] in
                    try? await sleep(delay)
                    await self?.ackTimerFired()
                }
            }
        }
    }

    func ackTimerFired() {
        ackTimer = nil
        ackForced = true
        schedulePump()
    }

    /// Hands one message to the app (and the store), and applies lifetime agreements.
    func deliver(id: UInt64, plaintext: [UInt8]) {
        let payload = ChatPayload(plaintext: plaintext)
        switch payload {
        case .lifetimeProposal(_, let proposed, _):
            emit(.lifetimeProposed(proposed))
        case .lifetimeAccept(_, let accepted, _):
            if proposedLifetime == accepted {
                proposedLifetime = nil
                applyLifetime(accepted)
            }
        case .lifetimeReject:
            proposedLifetime = nil
        default:
            break
        }
        // The store already holds it: a resumed session got it again, because the state
        // saved before the process stopped predates it (`docs/client.md`, "Resuming").
        if let kind = Self.storedKind(payload),
            !storeMessage(id: "r\(id)", direction: .received, kind: kind, payload: payload)
        {
            return
        }
        emit(.message(id: id, payload: payload))
    }

    func applyLifetime(_ lifetime: MessageLifetime) {
        self.lifetime = lifetime
        if let store, let sessionID { try? store.setLifetime(lifetime, sessionID: sessionID) }
        emit(.lifetime(lifetime))
    }

    // MARK: Sending

    func schedulePump() {
        guard state != .closed else { return }
        guard pumpTask == nil else {
            pumpAgain = true
            return
        }
        pumpTask = Task { await self.runPump() }
    }

    func runPump() async {
        repeat {
            pumpAgain = false
            await drain()
        } while pumpAgain && state != .closed && !Task.isCancelled
        pumpTask = nil
    }

    /// Sends, in order: handshake frames and signaling messages, an owed ack, then
    /// messages. Stops at the first path failure; a later `room_ready`, path change or
    /// retransmission timeout resumes.
    func drain() async {
        guard let transport = sendPath else { return }
        while let item = control.first, state != .closed {
            switch item {
            case .signal(let message):
                do { try await signaling?.send(message) } catch { return }
            case .frame(let frame):
                frameTap?(transport.path, frame)
                do { try await transport.send(frame) } catch { return }
            }
            // The sends above suspend: a close() meanwhile empties the queue (found by
            // `inviso bench chat`, which leaves right after the first message).
            guard state != .closed, !control.isEmpty else { return }
            control.removeFirst()
        }
        guard let channel, channel.canSeal, transport.path != .relay || peerPresent else { return }
        if channel.carriesAcknowledgements {
            await sendAckIfDue(on: transport)
            await sendMessagesV2(on: transport)
        } else {
            await sendMessagesV1(on: transport)
        }
    }

    /// Takes the owed ack and seals it when it is due (a burst was delivered) or its delay
    /// passed; `nil` otherwise.
    private func sealAckIfDue() -> [UInt8]? {
        guard link.isAckOwed, ackForced || link.isAckDue, let ack = link.takeAck() else { return nil }
        ackForced = false
        return try? self.channel?.seal(.ack(ack))
    }

    /// Sends the owed ack when it is due.
    private func sendAckIfDue(on transport: any FrameTransport) async {
        guard self.channel?.isEstablished == true else { return }
        if let frame = sealAckIfDue() {
            saveResumeState()
            frameTap?(transport.path, frame)
            try? await transport.send(frame)
        }
    }

    /// Seals a whole batch first (an owed ack between messages, so that a long outbox
    /// never holds acks back and the peer does not time out and resend), saves the
    /// session's state once, then sends: a frame only goes out once the ratchet state that
    /// sealed it is stored, so a resumed session never seals with the same keys again.
    private func sendMessagesV2(on transport: any FrameTransport) async {
        while state != .closed, sendPath === transport {
            let batch = link.takeTransmissions()
            guard !batch.isEmpty else { return }
            var frames: [[UInt8]] = []
            frames.reserveCapacity(batch.count)
            for message in batch {
                guard self.channel != nil else { return }
                if let frame = sealAckIfDue() { frames.append(frame) }
                do {
                    frames.append(try self.channel!.seal(.data(seq: message.seq, payload: message.payload)))
                } catch {
                    link.retransmitAll()
                    return
                }
            }
            saveResumeState()
            for frame in frames {
                guard state != .closed, sendPath === transport else {
                    link.retransmitAll()
                    return
                }
                frameTap?(transport.path, frame)
                do {
                    try await transport.send(frame)
                } catch {
                    link.retransmitAll()
                    return
                }
            }
        }
    }

    /// v1 has no acks: each message is sealed once (its counter is its id), and a sealed
    /// frame the path refused is sent again unchanged later; the peer's replay window
    /// drops a copy it already has.
    private func sendMessagesV1(on transport: any FrameTransport) async {
        for message in link.takeTransmissions() {
            guard self.channel != nil, let frame = try? self.channel!.seal(.data(seq: message.seq, payload: message.payload))
            else { break }
            _ = try? link.acknowledge(message.seq)
            v1Unsent.append(frame)
            resumeStateChanged()
        }
        while let frame = v1Unsent.first, state != .closed, sendPath === transport {
            frameTap?(transport.path, frame)
            do { try await transport.send(frame) } catch { return }
            guard !v1Unsent.isEmpty else { return }
            v1Unsent.removeFirst()
        }
    }

    /// Sends unacknowledged messages again when the peer's ack has not moved for a whole
    /// ``Configuration/retransmitInterval``.
    func retransmitLoop() async {
        var lastAck = link.peerAck
        while state != .closed, !Task.isCancelled {
            do { try await clock.sleep(configuration.retransmitInterval) } catch { return }
            guard channel?.isEstablished == true, channel?.carriesAcknowledgements == true else { continue }
            // Only while nothing is being sent: a paced first transmission is no loss.
            if link.unacknowledgedCount > 0, link.peerAck == lastAck, pumpTask == nil, peerPresent || sendPath !== relay {
                link.retransmitAll()
                schedulePump()
            }
            lastAck = link.peerAck
        }
    }

    /// Deletes expired messages now and then.
    func expiryLoop() async {
        while state != .closed, !Task.isCancelled {
            _ = try? store?.deleteExpired(now: clock.date())
            do { try await clock.sleep(configuration.expiryInterval) } catch { return }
        }
    }

    // MARK: Store

    /// The stored kind of a payload; `nil` for lifetime negotiation, which is not kept.
    static func storedKind(_ payload: ChatPayload) -> String? {
        switch payload {
        case .text: "text"
        case .location: "location"
        case .voice: "voice"
        case .lifetimeProposal, .lifetimeAccept, .lifetimeReject: nil
        }
    }

    /// Stores a message (nothing without a store).
    ///
    /// - Returns: `false` when the store already holds a message with this id (reported
    ///   nowhere: the caller decides), `true` otherwise, also after a reported failure.
    @discardableResult
    func storeMessage(id: String, direction: MessageDirection, kind: String, payload: ChatPayload) -> Bool {
        guard let store, let sessionID else { return true }
        do {
            try store.appendMessage(
                id: id, sessionID: sessionID, direction: direction, kind: kind, body: Data(payload.plaintext),
                at: clock.date())
        } catch where error.code == .messageExists {
            return false
        } catch {
            emit(.error(ChatError(.storage, error.description)))
        }
        return true
    }

    func saveNewSession(state: SessionState, protocolVersion: Int) throws(ChatError) {
        let id = newDeviceID()
        sessionID = id
        guard let store else { return }
        let session = StoredSession(
            id: id, createdAt: clock.date(), state: state, lifetime: lifetime, name: configuration.name,
            serverURL: configuration.server.description, joinCode: joinCode, roomID: roomID, deviceID: deviceID,
            protocolVersion: protocolVersion)
        do {
            try store.saveSession(session)
        } catch {
            throw ChatError(.storage, error.description)
        }
    }

    func updateStoredSession(_ change: (inout StoredSession) -> Void) {
        guard let store, let sessionID else { return }
        do {
            guard var session = try store.session(id: sessionID) else { return }
            change(&session)
            try store.saveSession(session)
        } catch {
            emit(.error(ChatError(.storage, error.description)))
        }
    }
}
