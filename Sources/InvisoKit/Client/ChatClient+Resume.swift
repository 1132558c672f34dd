import Crypto
import Foundation
import InvisoCrypto
import InvisoNoise
import InvisoStore
import Logging

// MARK: - Keeping the session resumable, and resuming it

extension ChatClient {
    /// Resumes a stored session in this (new, idle) client, e.g. after the process
    /// restarted: loads its ``ChatSessionSnapshot`` (the `ratchet` secret the session
    /// kept), restores the secure channel and the reliable link, rejoins the room over
    /// signaling with the same device id, and — once the peer is in the room — sends every
    /// unacknowledged message again (the peer drops duplicates). The session is
    /// ``ChatState/active`` at once; messages sent meanwhile wait in the outbox.
    ///
    /// Needs the store the session was created with; an ephemeral session keeps nothing
    /// and cannot be resumed, nor can one that was left (its keys are wiped).
    ///
    /// - Throws: ``ChatError/wrongState`` unless idle, ``ChatError/storage`` when there is
    ///   no store, no such session, nothing to resume or the stored state does not parse.
    public func resume(sessionID id: String) async throws(ChatError) {
        guard state == .idle else { throw .wrongState }
        guard let store else { throw ChatError(.storage, "no store to resume from") }
        let stored: StoredSession?
        let secret: SecretBytes?
        do {
            stored = try store.session(id: id)
            secret = try store.secret(kind: .ratchet, sessionID: id)
        } catch {
            throw ChatError(.storage, error.description)
        }
        guard let stored, stored.state != .closed, let secret else {
            throw ChatError(.storage, "no resumable state for this session")
        }
        let snapshot: ChatSessionSnapshot
        let restoredLink: ReliableLink
        let restoredChannel: any SecureChannel
        do {
            snapshot = try ChatSessionSnapshot(serialized: secret, linkConfiguration: configuration.reliable)
            restoredLink = try ReliableLink(configuration: configuration.reliable, restoring: snapshot.link)
            switch snapshot.channel {
            case .v2(let session):
                staticKey = try snapshot.identity.withUnsafeBytes { raw throws(NoiseError) in
                    try NoiseKeyPair(rawPrivateKey: raw)
                }
                restoredChannel = V2SecureChannel(restoring: session, random: forkRandom())
            case .v1(let peer, let sentCount, let window):
                let key = try snapshot.identity.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
                v1Key = key
                let date = clock.date
                restoredChannel = try V1SecureChannel(
                    restoring: snapshot.role == .creator ? .initiator : .responder, roomID: snapshot.roomID,
                    privateKey: key, peerPublicKey: peer, sentCount: sentCount, window: window,
                    timestamp: { date().timeIntervalSince1970 })
            }
        } catch {
            staticKey = nil
            v1Key = nil
            throw ChatError(.storage, "stored session state: \(error)")
        }
        sessionID = id
        role = snapshot.role
        roomID = snapshot.roomID
        deviceID = snapshot.deviceID
        joinCode = stored.joinCode
        lifetime = stored.lifetime
        link = restoredLink
        // The peer may have missed our last ack: send it with the first pump pass.
        ackForced = link.isAckOwed
        channel = restoredChannel
        state = .active
        emit(.state(.active))
        if restoredChannel.version == .v1 { warnV1() }
        if let security { emit(.secured(security)) }
        let signaling = startSignaling()
        if let sendPath { emit(.path(sendPath.path)) }
        try? await signaling.join(roomID: snapshot.roomID, deviceID: snapshot.deviceID)
        startDirectPath()
        logger.info("session resumed", metadata: ["protocol": "\(restoredChannel.version)"])
    }

    /// Stops this client's networking without leaving: no `leave_room`, nothing purged,
    /// the stored session and its state stay, so that another ``ChatClient`` on the same
    /// store can ``resume(sessionID:)`` it (the peer sees this device disconnect, not leave).
    /// Ends the events with ``ChatCloseReason/suspended``. Idempotent.
    public func suspend() async {
        saveResumeState()
        await close(reason: .suspended, leaveRoom: false)
    }

    // MARK: Saving

    /// The state to store now; `nil` before the channel is established (nothing to resume).
    func resumeSnapshot() -> ChatSessionSnapshot? {
        guard let channel, channel.isEstablished, let roomID, let deviceID, let role else { return nil }
        if let v2 = channel as? V2SecureChannel, let session = v2.session, let staticKey {
            return ChatSessionSnapshot(
                role: role, roomID: roomID, deviceID: deviceID,
                identity: SecretBytes(staticKey.privateKey.rawRepresentation), channel: .v2(session),
                link: link.snapshot)
        }
        if let v1 = channel as? V1SecureChannel, let resume = v1.resumeState, let v1Key {
            return ChatSessionSnapshot(
                role: role, roomID: roomID, deviceID: deviceID, identity: SecretBytes(v1Key.rawRepresentation),
                channel: .v1(peerPublicKey: resume.peerPublicKey, sentCount: resume.sentCount, window: resume.window),
                link: link.snapshot)
        }
        return nil
    }

    /// Something a resumed session needs changed (a frame opened, a message queued, an
    /// ack taken): saves once the actor is free, so a burst is saved once.
    func resumeStateChanged() {
        guard store != nil, sessionID != nil, state != .closed, !resumeSavePending else { return }
        resumeSavePending = true
        Task { self.saveResumeState() }
    }

    /// Saves the state now (sealed, as the session's `ratchet` secret); nothing for an
    /// ephemeral session, before the channel is established, or after the session closed
    /// (leaving wiped it).
    func saveResumeState() {
        resumeSavePending = false
        guard state != .closed, let store, let sessionID, let snapshot = resumeSnapshot() else { return }
        do {
            try store.saveSecret(snapshot.serialized(), kind: .ratchet, sessionID: sessionID)
        } catch {
            emit(.error(ChatError(.storage, error.description)))
        }
    }
}
