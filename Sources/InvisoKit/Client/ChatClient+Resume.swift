import InvisoCrypto
import InvisoStore
import Logging

// MARK: - Resuming a stored session

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
        do {
            snapshot = try ChatSessionSnapshot(serialized: secret, linkConfiguration: configuration.reliable)
        } catch {
            throw ChatError(.storage, "stored session state: \(error)")
        }
        let machine = try ChatSessionMachine(
            resuming: snapshot, lifetime: stored.lifetime, configuration: machineConfiguration, random: random.fork(),
            at: now)
        sessionID = id
        joinCode = stored.joinCode
        await begin(machine)
        logger.info("session resumed")
    }
}
