import Foundation
import InvisoStore
import InvisoTime

// MARK: - The store: session records, messages, the resumable snapshot

extension ChatClient {
    /// The stored kind of a payload; `nil` for lifetime negotiation, which is not kept.
    static func storedKind(_ payload: ChatPayload) -> String? {
        switch payload {
        case .text: "text"
        case .location: "location"
        case .voice: "voice"
        case .lifetimeProposal, .lifetimeAccept, .lifetimeReject, .profile, .file, .contact: nil
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
                at: clock.wallClock)
        } catch where error.code == .messageExists {
            return false
        } catch {
            continuation.yield(.error(ChatError(.storage, error.description)))
        }
        return true
    }

    /// The peer's chosen name (``ChatPayload/profile(name:)``): kept as the session's peer
    /// name, and as its name unless the user gave it one.
    func storePeerName(_ name: String) {
        guard let store, let sessionID else { return }
        do {
            guard var session = try store.session(id: sessionID) else { return }
            session.peerDisplayName = name
            if session.name.isEmpty { session.name = name }
            try store.saveSession(session)
        } catch {
            continuation.yield(.error(ChatError(.storage, error.description)))
        }
    }

    /// Gives the session its id and stores its record (pending or accepted).
    func saveNewSession(_ machine: ChatSessionMachine, protocolVersion: Int) throws(ChatError) {
        let id = newDeviceID()
        sessionID = id
        guard let store else { return }
        let session = StoredSession(
            id: id, createdAt: clock.wallClock, state: machine.state == .pending ? .pending : .accepted,
            lifetime: machine.lifetime, name: configuration.name, serverURL: configuration.server.description,
            joinCode: joinCode, roomID: machine.roomID, deviceID: machine.deviceID, protocolVersion: protocolVersion)
        do {
            try store.saveSession(session)
        } catch {
            throw ChatError(.storage, error.description)
        }
    }

    func updateStoredSession(_ update: ChatSessionMachine.SessionUpdate) {
        guard let store, let sessionID else { return }
        do {
            guard var session = try store.session(id: sessionID) else { return }
            switch update {
            case .accepted(let roomID):
                session.roomID = roomID
                session.state = .accepted
            case .active:
                session.state = .active
            case .protocolVersion(let version):
                session.protocolVersion = version
            }
            try store.saveSession(session)
        } catch {
            continuation.yield(.error(ChatError(.storage, error.description)))
        }
    }

    /// Saves the machine's resumable state now (sealed, as the session's `ratchet` secret);
    /// nothing for an ephemeral session or before the channel is established.
    ///
    /// - Returns: `false` when the store refused the save (reported as an error event).
    @discardableResult
    func saveSnapshot() -> Bool {
        snapshotSavePending = false
        guard let store, let sessionID, let snapshot = machine?.resumeSnapshot() else { return true }
        do {
            try store.saveSecret(snapshot.serialized(), kind: .ratchet, sessionID: sessionID)
            return true
        } catch {
            continuation.yield(.error(ChatError(.storage, error.description)))
            return false
        }
    }
}
