import InvisoCrypto
import InvisoTime
import InvisoWire

// MARK: - Receiving, the channel's actions, and sending

extension ChatSessionMachine {
    /// A relayed signaling message from the peer: direct-path candidates, or the v1 key
    /// exchange (which makes a creator whose peer has only the join code fall back to v1).
    mutating func receive(signal object: JSONObject, at time: ChatTime, _ actions: inout [Action]) {
        let type = object["type"]?.stringValue
        if type == RelayKind.transportCandidates.rawValue {
            if let candidates = try? TransportCandidates(json: object) {
                actions.append(.emit(.transportCandidates(candidates.candidates)))
                receivedPeerCandidates(candidates.candidates, &actions)
            }
            return
        }
        guard type == RelayKind.keyExchange.rawValue || type == RelayKind.keyExchangeComplete.rawValue else { return }
        if type == RelayKind.keyExchange.rawValue, role == .creator, configuration.allowsV1Fallback,
            let v2 = channel as? V2SecureChannel, !v2.heardFromPeer, let roomID
        {
            var v1 = makeV1Channel(roomID: roomID, at: time)
            let started = v1.start()
            channel = v1
            actions.append(.updateSession(.protocolVersion(1)))
            warnV1(&actions)
            apply(started, at: time, &actions)
        }
        guard channel != nil else { return }
        do {
            let result = try channel!.receive(signal: object)
            apply(result, at: time, &actions)
        } catch {
            // Refused, nothing changed: dropped.
        }
    }

    /// A binary frame from the peer, on any path.
    mutating func receive(frame: [UInt8], at time: ChatTime, _ actions: inout [Action]) {
        guard channel != nil else { return }
        let result: [SecureChannelAction]
        do {
            result = try channel!.receive(frame: frame)
        } catch {
            refusedFrames[error.description, default: 0] += 1
            return
        }
        heardSinceCheck = true
        apply(result, at: time, &actions)
        if configuration.persists, channel?.isEstablished == true { actions.append(.snapshotChanged) }
    }

    /// Carries out a channel's actions in order.
    mutating func apply(_ result: [SecureChannelAction], at time: ChatTime, _ actions: inout [Action]) {
        var failure: SecureChannelError?
        for action in result {
            switch action {
            case .sendFrame(let frame):
                control.append(.frame(frame))
            case .sendSignal(let message):
                control.append(.signal(message))
            case .established:
                established(at: time, &actions)
            case .received(let record):
                handle(record, at: time, &actions)
            case .failed(let error):
                failure = error
            }
        }
        guard let failure else {
            pump(&actions)
            return
        }
        let error = failure == .invalidPeerKey ? ChatError(.invalidPeerKey) : ChatError(.pairingFailed, failure.description)
        actions.append(.emit(.error(error)))
        close(.pairingFailed, leavingRoom: true, &actions)
    }

    mutating func established(at time: ChatTime, _ actions: inout [Action]) {
        guard let channel, state != .closed, state != .active else { return }
        if let expected = configuration.expectedPeerIdentity,
            channel.peerIdentity.map({ !ConstantTime.equals($0, expected) }) ?? true
        {
            // Not the saved contact's key: whoever this is knew the call's words but not
            // the contact's private key.
            actions.append(.emit(.error(ChatError(.pairingFailed, "the peer is not the saved contact"))))
            close(.pairingFailed, leavingRoom: true, &actions)
            return
        }
        actions.append(.cancel(.pairing))
        state = .active
        if configuration.persists { actions.append(.snapshotChanged) }
        actions.append(.updateSession(.active))
        security = Self.security(of: channel)
        if let peer = channel.peerIdentity {
            actions.append(.pinIdentity(peer: peer, security: security, isVerified: channel.isVerified))
        }
        actions.append(.emit(.state(.active)))
        if let security { actions.append(.emit(.secured(security))) }
        actions.append(.emit(.path(sendPathKind)))
        armRetransmit(at: time, &actions)
        startDirect(&actions)
    }

    mutating func handle(_ record: ReliableRecord, at time: ChatTime, _ actions: inout [Action]) {
        switch record {
        case .ack(let ack):
            let acknowledged: ClosedRange<UInt64>?
            // File transfers' control messages are not the user's: their acks are no news
            // (a resumed session's included, whose driver no longer knows their ids).
            let controls = ack > link.peerAck && ack < link.nextSeq
                ? Set(((link.peerAck + 1)...ack).filter { link.unacknowledgedPayload($0).map(ChatPayload.isFileControl) ?? false })
                : []
            do {
                acknowledged = try link.acknowledge(ack)
            } catch {
                refusedFrames["\(error)", default: 0] += 1
                return
            }
            guard let acknowledged else {
                if link.unacknowledgedCount > 0 { staleAckSinceProgress = true }
                return
            }
            staleAckSinceProgress = false
            ackProgressed(at: time, &actions)
            if configuration.persists { actions.append(.markDelivered(acknowledged)) }
            for id in acknowledged where !controls.contains(id) { actions.append(.emit(.delivered(id: id))) }
        case .data(let seq, let payload):
            guard channel?.carriesAcknowledgements == true else {
                deliver(id: seq, plaintext: payload, &actions)
                return
            }
            let deliveries: [ReliableLink.Delivery]
            do {
                deliveries = try link.receive(seq: seq, payload: payload)
            } catch {
                refusedFrames["\(error)", default: 0] += 1
                return
            }
            for delivery in deliveries { deliver(id: delivery.seq, plaintext: delivery.payload, &actions) }
            if link.isAckDue {
                ackForced = true
            } else if link.isAckOwed, !ackArmed {
                ackArmed = true
                actions.append(.arm(.ack, at: time.now.advanced(by: configuration.ackDelay)))
            }
        }
    }

    /// Hands one message to the driver to store and report, and applies lifetime agreements.
    mutating func deliver(id: UInt64, plaintext: [UInt8], _ actions: inout [Action]) {
        let payload = ChatPayload(plaintext: plaintext)
        switch payload {
        case .lifetimeProposal(_, let proposed, _):
            actions.append(.emit(.lifetimeProposed(proposed)))
        case .lifetimeAccept(_, let accepted, _):
            if proposedLifetime == accepted {
                proposedLifetime = nil
                applyLifetime(accepted, &actions)
            }
        case .lifetimeReject:
            proposedLifetime = nil
        default:
            break
        }
        // Nothing is stored: the message is new (repeats come only from a resumed session,
        // which needs a store), so it is reported in this step rather than after a round
        // trip through the driver.
        actions.append(configuration.persists ? .storeReceived(id: id, payload: payload) : .emit(.message(id: id, payload: payload)))
    }

    // MARK: Sending

    /// Sends what can go now, in order: handshake frames and signaling messages, an owed
    /// ack, then messages.
    mutating func pump(_ actions: inout [Action]) {
        guard state != .closed else { return }
        while let item = control.first {
            let path: PathID
            if case .signal = item { path = .relay } else { path = sendPath }
            guard !blocked.contains(path) else { return }
            control.removeFirst()
            send(item, on: path, as: .control(item), &actions)
        }
        guard let channel, channel.canSeal, !blocked.contains(sendPath), sendPath != .relay || peerPresent else { return }
        if channel.carriesAcknowledgements {
            sendMessagesV2(&actions)
        } else {
            sendMessagesV1(&actions)
        }
    }

    private mutating func send(_ item: Outgoing, on path: PathID, as record: InFlight, _ actions: inout [Action]) {
        inFlight[path, default: []].append(record)
        actions.append(.send(item, path: path))
    }

    /// Takes the owed ack and seals it when it is due (a burst was delivered) or its delay
    /// passed; `nil` otherwise.
    private mutating func sealAckIfDue() -> [UInt8]? {
        guard link.isAckOwed, ackForced || link.isAckDue, let ack = link.takeAck() else { return nil }
        ackForced = false
        return try? channel?.seal(.ack(ack))
    }

    /// The owed ack, sealed at once, for a side that leaves; `nil` when none is owed or the
    /// relay cannot carry it to the peer now.
    mutating func sealOwedAckForLeaving() -> [UInt8]? {
        guard let channel, channel.isEstablished, channel.carriesAcknowledgements, peerPresent, !blocked.contains(.relay),
            link.isAckOwed
        else { return nil }
        ackForced = true
        return sealAckIfDue()
    }

    /// Seals the ack (when due) and every message the window allows, an owed ack between
    /// messages so that a long outbox never holds acks back; asks for the state to be saved,
    /// then sends: a frame only goes out once the state that sealed it is stored.
    private mutating func sendMessagesV2(_ actions: inout [Action]) {
        var frames: [[UInt8]] = []
        if channel?.isEstablished == true, let ack = sealAckIfDue() { frames.append(ack) }
        let batch = link.takeTransmissions()
        frames.reserveCapacity(frames.count + batch.count)
        for message in batch {
            if let ack = sealAckIfDue() { frames.append(ack) }
            do {
                frames.append(try channel!.seal(.data(seq: message.seq, payload: message.payload)))
            } catch {
                link.retransmitAll()
                break
            }
        }
        guard !frames.isEmpty else { return }
        if configuration.persists { actions.append(.saveSnapshot) }
        for frame in frames { send(.frame(frame), on: sendPath, as: .sealed, &actions) }
    }

    /// v1 has no acks: each message is sealed once (its counter is its id), and a sealed
    /// frame the path refused is sent again unchanged later; the peer's replay window drops
    /// a copy it already has.
    private mutating func sendMessagesV1(_ actions: inout [Action]) {
        for message in link.takeTransmissions() {
            guard let frame = try? channel!.seal(.data(seq: message.seq, payload: message.payload)) else { break }
            _ = try? link.acknowledge(message.seq)
            v1Unsent.append(frame)
            if configuration.persists { actions.append(.snapshotChanged) }
        }
        for frame in v1Unsent { send(.frame(frame), on: sendPath, as: .v1Frame(frame), &actions) }
        v1Unsent.removeAll()
    }

    /// The oldest `count` items on `path` went out.
    mutating func sent(path: PathID, count: Int) {
        // In place: a copy taken out of the dictionary would copy the whole array.
        guard let held = inFlight[path]?.count else { return }
        inFlight[path]!.removeFirst(min(count, held))
    }

    /// `path` refused an item after `sent` went out; the driver dropped the rest. Handshake
    /// frames, signals and v1 frames are queued again in order; sealed v2 messages are
    /// sealed anew later. Nothing more goes to the path until it is back.
    mutating func sendFailed(path: PathID, sent count: Int) {
        sent(path: path, count: count)
        requeue(path)
        blocked.insert(path)
    }

    /// Takes back everything in flight on `path`.
    mutating func requeue(_ path: PathID) {
        guard let items = inFlight.removeValue(forKey: path) else { return }
        var controls: [Outgoing] = []
        var frames: [[UInt8]] = []
        var sealed = false
        for item in items {
            switch item {
            case .control(let outgoing): controls.append(outgoing)
            case .v1Frame(let frame): frames.append(frame)
            case .sealed: sealed = true
            }
        }
        control.insert(contentsOf: controls, at: 0)
        v1Unsent.insert(contentsOf: frames, at: 0)
        if sealed { link.retransmitAll() }
    }
}
