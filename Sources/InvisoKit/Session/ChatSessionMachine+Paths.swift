import InvisoTime
import InvisoWire

// MARK: - Paths and the direct-path attempt

extension ChatSessionMachine {
    /// A path is up: sending moves to it, and (v2) every unacknowledged message goes out
    /// again on it (the peer drops duplicates). Frames still arriving on the old path are
    /// read as before.
    mutating func pathUp(_ path: PathID, _ kind: ChatPath, _ actions: inout [Action]) {
        paths[path] = kind
        blocked.remove(path)
        if directPhase == .connecting, kind == .direct {
            directPhase = .connected
            actions.append(.closeDirectListener)
        }
        switchSending(to: path, kind, &actions)
    }

    /// A path closed: what was in flight on it is taken back; when it was the sending
    /// path, sending falls back to the relay.
    mutating func pathDown(_ path: PathID, _ actions: inout [Action]) {
        guard path != .relay, paths.removeValue(forKey: path) != nil else { return }
        requeue(path)
        blocked.remove(path)
        if sendPath == path {
            switchSending(to: .relay, .relay, &actions)
        } else {
            pump(&actions)
        }
    }

    private mutating func switchSending(to path: PathID, _ kind: ChatPath, _ actions: inout [Action]) {
        sendPath = path
        sendPathKind = kind
        actions.append(.emit(.path(kind)))
        if channel?.carriesAcknowledgements == true { link.retransmitAll() }
        pump(&actions)
    }

    /// The channel is secured (or a session resumed): bind a listener with the path key.
    /// Once per session; nothing when the direct path is off.
    mutating func startDirect(_ actions: inout [Action]) {
        guard directPhase == .idle, state != .closed else { return }
        guard configuration.triesDirectPath, let key = directPathKey else {
            directPhase = .finished
            return
        }
        directPhase = .binding
        actions.append(.openDirectListener(key: key, role: role))
    }

    /// The listener is up: send our candidates, then connect once the peer's are here (at
    /// once if they came first), or give up after the candidates timeout.
    mutating func directListening(_ candidates: [TransportCandidates.Candidate], at time: ChatTime, _ actions: inout [Action]) {
        guard directPhase == .binding else {
            actions.append(.closeDirectListener)
            return
        }
        directPhase = .listening
        ownCandidates = candidates
        control.append(.signal(TransportCandidates(candidates: candidates).message))
        pump(&actions)
        if peerCandidates != nil {
            connectDirect(&actions)
        } else {
            actions.append(.arm(.directCandidates, at: time.now.advanced(by: configuration.directCandidatesTimeout)))
        }
    }

    /// The peer's `transport_candidates` (before or after our listener).
    mutating func receivedPeerCandidates(_ candidates: [TransportCandidates.Candidate], _ actions: inout [Action]) {
        peerCandidates = candidates
        guard directPhase == .listening else { return }
        connectDirect(&actions)
    }

    private mutating func connectDirect(_ actions: inout [Action]) {
        guard directPhase == .listening, let peerCandidates else { return }
        directPhase = .connecting
        actions += [.cancel(.directCandidates), .connectDirect(peerCandidates)]
    }

    /// A `room_ready` after a reconnect: while we still wait for the peer's candidates,
    /// send ours again (the first copy may have reached a peer that was away).
    mutating func resendDirectCandidates(_ actions: inout [Action]) {
        guard directPhase == .listening, let ownCandidates else { return }
        control.append(.signal(TransportCandidates(candidates: ownCandidates).message))
    }

    /// The attempt ends without a direct path: the listener closes.
    mutating func finishDirect(_ actions: inout [Action]) {
        guard directPhase == .binding || directPhase == .listening || directPhase == .connecting else { return }
        directPhase = .finished
        actions += [.cancel(.directCandidates), .closeDirectListener]
    }
}
