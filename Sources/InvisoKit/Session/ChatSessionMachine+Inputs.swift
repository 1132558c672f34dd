import Crypto
import Foundation
import InvisoCrypto
public import InvisoStore
import InvisoTime
public import InvisoWire

// MARK: - Starting, events and requests

extension ChatSessionMachine {
    /// The first actions of a session: its state, the v1 warning of a bare-code join, the
    /// seat in the room (joiner, or a resumed session); for a resumed session also its
    /// security, its path, the resend timer and the direct attempt.
    public mutating func start(at time: ChatTime) -> [Action] {
        var actions: [Action] = [.emit(.state(state))]
        switch state {
        case .accepted:
            if invite == nil { warnV1(&actions) }
            if let roomID { actions.append(.joinRoom(roomID: roomID)) }
        case .active:
            if channel?.version == .v1 { warnV1(&actions) }
            if let security { actions.append(.emit(.secured(security))) }
            actions.append(.emit(.path(sendPathKind)))
            if let roomID { actions.append(.joinRoom(roomID: roomID)) }
            armRetransmit(at: time, &actions)
            startDirect(&actions)
        default:
            break
        }
        return actions
    }

    /// Handles one event.
    public mutating func handle(_ event: Event, at time: ChatTime) -> [Action] {
        guard state != .closed else { return [] }
        var actions: [Action] = []
        switch event {
        case .codeAccepted(let roomID):
            guard state == .pending else { break }
            self.roomID = roomID
            state = .accepted
            actions += [.updateSession(.accepted(roomID: roomID)), .emit(.state(.accepted)), .joinRoom(roomID: roomID)]
        case .inviteExpired:
            guard state == .pending else { break }
            actions.append(.emit(.error(.expired)))
            close(.expired, leavingRoom: false, &actions)
        case .roomReady:
            roomReady(at: time, &actions)
        case .peerLeft:
            close(.peerLeft, leavingRoom: true, &actions)
        case .peerDisconnected:
            if peerPresent, !peerAway, channel?.isEstablished == true {
                peerAway = true
                actions.append(.emit(.peer(online: false)))
            }
            peerPresent = false
        case .relayDisconnected:
            peerPresent = false
        case .connectionLost:
            actions.append(.emit(.error(.connectionLost)))
            close(.connectionLost, leavingRoom: false, &actions)
        case .signal(let object):
            receive(signal: object, at: time, &actions)
        case .frame(let frame, _):
            receive(frame: frame, at: time, &actions)
        case .pathUp(let path, let kind):
            pathUp(path, kind, &actions)
        case .pathDown(let path):
            pathDown(path, &actions)
        case .sent(let path, let count):
            sent(path: path, count: count)
        case .sendFailed(let path, let sent):
            sendFailed(path: path, sent: sent)
        case .timerFired(let timer):
            timerFired(timer, at: time, &actions)
        case .directListening(let candidates):
            directListening(candidates, at: time, &actions)
        case .directFailed:
            finishDirect(&actions)
        case .receivedStored(let id, let payload, let isNew):
            if isNew { actions.append(.emit(.message(id: id, payload: payload))) }
        }
        return actions
    }

    // MARK: Requests

    /// Queues a message and returns its id (v2: its sequence number; v1: frame counter + 1).
    ///
    /// - Throws: ``ChatError/closed`` after the session ended, ``ChatError/outboxFull``.
    public mutating func send(_ payload: ChatPayload, at time: ChatTime) throws(ChatError) -> (id: UInt64, actions: [Action]) {
        let (ids, actions) = try send(contentsOf: [payload], at: time)
        return (ids.lowerBound, actions)
    }

    /// Queues messages in order — all of them, or none when the outbox cannot take them
    /// all — and returns their ids, consecutive. One save and one sealing pass carry the
    /// lot: what a caller with many messages (a file's chunks, a pasted text) should use.
    ///
    /// - Throws: As ``send(_:at:)``; nothing was queued.
    public mutating func send(contentsOf payloads: [ChatPayload], at time: ChatTime) throws(ChatError) -> (ids: Range<UInt64>, actions: [Action]) {
        guard state != .closed else { throw .closed }
        let ids: Range<UInt64>
        do {
            ids = try link.enqueue(contentsOf: payloads.lazy.map(\.plaintext))
        } catch {
            throw .outboxFull
        }
        var actions: [Action] = []
        if configuration.persists, !payloads.isEmpty {
            actions.reserveCapacity(payloads.count + 1)
            for (id, payload) in zip(ids, payloads) { actions.append(.storeSent(id: id, payload: payload)) }
            // Saved at once, so that a message accepted here survives the process.
            actions.append(.saveSnapshot)
        }
        pump(&actions)
        return (ids, actions)
    }

    /// Proposes a message lifetime (`lifetime_proposal`); it applies once the peer accepts.
    ///
    /// - Throws: As ``send(_:at:)``.
    public mutating func proposeLifetime(_ lifetime: MessageLifetime, at time: ChatTime) throws(ChatError) -> [Action] {
        let payload = ChatPayload.lifetimeProposal(
            sessionID: roomID ?? "", lifetime: lifetime, proposedAt: time.date.timeIntervalSince1970)
        let result = try send(payload, at: time)
        proposedLifetime = lifetime
        return result.actions
    }

    /// Accepts the peer's proposal (`lifetime_accept`) and applies it.
    ///
    /// - Throws: As ``send(_:at:)``.
    public mutating func acceptLifetime(_ lifetime: MessageLifetime, at time: ChatTime) throws(ChatError) -> [Action] {
        let payload = ChatPayload.lifetimeAccept(
            sessionID: roomID ?? "", lifetime: lifetime, acceptedAt: time.date.timeIntervalSince1970)
        var actions = try send(payload, at: time).actions
        applyLifetime(lifetime, &actions)
        return actions
    }

    /// Rejects the peer's proposal (`lifetime_reject`).
    ///
    /// - Throws: As ``send(_:at:)``.
    public mutating func rejectLifetime(reason: String?, at time: ChatTime) throws(ChatError) -> [Action] {
        try send(.lifetimeReject(sessionID: roomID ?? "", reason: reason), at: time).actions
    }

    /// Sends `transport_candidates` to the peer.
    ///
    /// - Throws: ``ChatError/closed``; ``ChatError/wrongState`` before the room is known.
    public mutating func sendTransportCandidates(_ candidates: [TransportCandidates.Candidate]) throws(ChatError) -> [Action] {
        guard state != .closed else { throw .closed }
        guard roomID != nil else { throw .wrongState }
        var actions: [Action] = []
        control.append(.signal(TransportCandidates(candidates: candidates).message))
        pump(&actions)
        return actions
    }

    /// Leaves for good: the peer sees ``ChatCloseReason/peerLeft``; the room is deleted
    /// and the device purged; the stored session is wiped.
    public mutating func leave() -> [Action] {
        var actions: [Action] = []
        close(.left, leavingRoom: true, &actions)
        return actions
    }

    /// Stops without leaving: the stored session stays, resumable.
    public mutating func suspend() -> [Action] {
        var actions: [Action] = []
        close(.suspended, leavingRoom: false, &actions)
        return actions
    }

    // MARK: Lifecycle

    /// Both members are in the room: start the channel the first time, else resume sending
    /// on the relay (a reconnect).
    mutating func roomReady(at time: ChatTime, _ actions: inout [Action]) {
        peerPresent = true
        if peerAway {
            peerAway = false
            actions.append(.emit(.peer(online: true)))
        }
        blocked.remove(.relay)
        if let channel {
            if channel.isEstablished, sendPath == .relay { link.retransmitAll() }
            resendDirectCandidates(&actions)
            pump(&actions)
            return
        }
        guard let roomID else { return }
        if let invite, let staticKey {
            do {
                channel = try V2SecureChannel(
                    role: role, invite: invite, roomID: roomID, staticKey: staticKey, random: random.fork())
            } catch {
                actions.append(.emit(.error(ChatError(.pairingFailed, error.description))))
                close(.pairingFailed, leavingRoom: true, &actions)
                return
            }
        } else {
            channel = makeV1Channel(roomID: roomID, at: time)
        }
        let started = channel?.start() ?? []
        actions.append(.arm(.pairing, at: time.now.advanced(by: configuration.pairingTimeout)))
        apply(started, at: time, &actions)
    }

    mutating func makeV1Channel(roomID: String, at time: ChatTime) -> V1SecureChannel {
        let key = v1Key ?? newV1Key()
        v1Key = key
        let timestamp = time.date.timeIntervalSince1970
        return V1SecureChannel(
            role: role == .creator ? .initiator : .responder, roomID: roomID, privateKey: key,
            timestamp: { timestamp })
    }

    mutating func newV1Key() -> Curve25519.KeyAgreement.PrivateKey {
        let secret = SecretBytes(randomCount: 32, using: &random.generator)
        do {
            return try secret.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
        } catch {
            preconditionFailure("32 bytes are always an X25519 private key")
        }
    }

    mutating func warnV1(_ actions: inout [Action]) {
        guard !warnedV1 else { return }
        warnedV1 = true
        actions.append(.emit(.warning(.unverifiedV1)))
    }

    /// Ends the session (once): timers cancelled, a pairing abort let out, then
    /// ``Action/finish(_:)`` and the closing events.
    mutating func close(_ reason: ChatCloseReason, leavingRoom: Bool, _ actions: inout [Action]) {
        guard state != .closed else { return }
        let keepsSession = (reason == .suspended || reason == .connectionLost) && resumeSnapshot() != nil
        if keepsSession, configuration.persists { actions.append(.saveSnapshot) }
        // Leaving: what arrived is acknowledged first, so that the peer's last messages
        // show as delivered (the ack timer is cancelled below); sealed before the state
        // closes, and sent on the relay ahead of `leave_room`.
        let finalAck = reason == .left ? sealOwedAckForLeaving() : nil
        state = .closed
        for timer in Timer.allCases { actions.append(.cancel(timer)) }
        // A pairing failure: the abort frame still goes out on the relay.
        let flushes = reason == .pairingFailed || finalAck != nil
        if reason == .pairingFailed {
            for case .frame(let frame) in control { actions.append(.send(.frame(frame), path: .relay)) }
        }
        if let finalAck { actions.append(.send(.frame(finalAck), path: .relay)) }
        control.removeAll()
        actions.append(.closeDirectListener)
        directPhase = .finished
        actions.append(
            .finish(Closing(reason: reason, leavesRoom: leavingRoom, keepsSession: keepsSession, flushesRelay: flushes)))
        actions += [.emit(.state(.closed)), .emit(.closed(reason))]
    }

    // MARK: Timers

    mutating func timerFired(_ timer: Timer, at time: ChatTime, _ actions: inout [Action]) {
        switch timer {
        case .pairing:
            guard channel?.isEstablished != true else { return }
            actions.append(.emit(.error(.pairingTimedOut)))
            close(.pairingFailed, leavingRoom: true, &actions)
        case .ack:
            ackArmed = false
            guard link.isAckOwed else { return }
            ackForced = true
            pump(&actions)
        case .retransmit:
            retransmitCheck(&actions)
            actions.append(.arm(.retransmit, at: time.now.advanced(by: retransmitWait)))
        case .directCandidates:
            guard directPhase == .listening else { return }
            finishDirect(&actions)
        }
    }

    /// Arms the periodic resend check (v2 only), from the channel's establishment on.
    mutating func armRetransmit(at time: ChatTime, _ actions: inout [Action]) {
        guard channel?.carriesAcknowledgements == true else { return }
        lastRetransmitAck = link.peerAck
        retransmitBackoff = 0
        actions.append(.arm(.retransmit, at: time.now.advanced(by: configuration.retransmitInterval)))
    }

    /// How long the resend check waits now: the interval, doubled for each resend in a row
    /// that brought no ack, at most ``Configuration/maxRetransmitInterval``.
    var retransmitWait: Duration {
        let base = configuration.retransmitInterval
        let limit = max(configuration.maxRetransmitInterval, base)
        var wait = base
        for _ in 0..<retransmitBackoff where wait < limit { wait *= 2 }
        return min(wait, limit)
    }

    /// Sends unacknowledged messages again when the peer's ack did not move for a whole
    /// interval, nothing is being sent on the path, the path can deliver, and the peer
    /// either sent nothing at all in that interval or, since its ack last moved, sent an
    /// ack that did not move (it got something that did not fill its gap). A peer whose
    /// frames keep coming but whose acks do not is busy getting through what is already
    /// on its way (our acks queue behind its own frames): copies would only bury them
    /// deeper. After a resend the next check waits twice as long (TCP's backoff), until an
    /// ack moves.
    mutating func retransmitCheck(_ actions: inout [Action]) {
        let heard = heardSinceCheck
        let staleAck = staleAckSinceProgress
        heardSinceCheck = false
        defer { lastRetransmitAck = link.peerAck }
        guard channel?.isEstablished == true, channel?.carriesAcknowledgements == true else { return }
        blocked.remove(sendPath)
        if link.unacknowledgedCount > 0, link.peerAck == lastRetransmitAck, inFlightCount(on: sendPath) == 0,
            peerPresent || sendPath != .relay, staleAck || !heard
        {
            link.retransmitAll()
            retransmitBackoff = min(retransmitBackoff + 1, 32)
            // The next resend needs new evidence: a stale ack after these copies.
            staleAckSinceProgress = false
        }
        pump(&actions)
    }

    /// The peer's ack moved after resends had lengthened the wait: the next check comes
    /// one plain interval from now.
    mutating func ackProgressed(at time: ChatTime, _ actions: inout [Action]) {
        guard retransmitBackoff > 0 else { return }
        retransmitBackoff = 0
        lastRetransmitAck = link.peerAck
        actions.append(.arm(.retransmit, at: time.now.advanced(by: configuration.retransmitInterval)))
    }

    // MARK: Lifetimes

    mutating func applyLifetime(_ lifetime: MessageLifetime, _ actions: inout [Action]) {
        self.lifetime = lifetime
        actions += [.setLifetime(lifetime), .emit(.lifetime(lifetime))]
    }
}

extension AnyGenerator {
    /// A generator for a component (a channel): the system's generator when that is what
    /// was injected, else a deterministic one seeded from this one (tests), so that no two
    /// components replay the same numbers.
    mutating func fork() -> Generator {
        Generator(
            base: generator.base is SystemRandomNumberGenerator
                ? SystemRandomNumberGenerator() : SplitMixGenerator(seed: generator.next()))
    }
}
