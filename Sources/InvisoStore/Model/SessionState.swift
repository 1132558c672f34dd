/// Where a chat session is in its life: `pending` → `accepted` → `active` → `closed`.
///
/// Stored in plaintext (the `sessions.state` column) so the client can list sessions by
/// state without opening them. Moving a session to ``closed`` wipes its keys.
public enum SessionState: String, Sendable, Hashable, CaseIterable {
    /// An invite was created and is waiting for the peer.
    case pending
    /// The peer accepted the invite; the secure channel is being set up.
    case accepted
    /// The secure channel is up.
    case active
    /// The session was left or ended; its keys are gone.
    case closed
}
