import InvisoCrypto

/// Everything we know about the sessions with one peer device: the current session and up
/// to 40 archived ones (tried in turn when a message does not decrypt under the current
/// one, as libsignal does).
///
/// Records serialize to bytes (``serialize()``) so a store can persist them; the bytes
/// contain secret keys and come back as ``SecretBytes``.
public struct SessionRecord: Sendable {
    package var current: SessionState?
    package var previous: [SessionState]

    /// An empty record (no session).
    public init() {
        self.current = nil
        self.previous = []
    }

    package init(current: SessionState?, previous: [SessionState]) {
        self.current = current
        self.previous = previous
    }

    /// Whether there is a current session that can send.
    public var hasCurrentSession: Bool { current != nil }

    /// The message version of the current session (3 for X3DH, 4 for PQXDH), if any.
    public var sessionVersion: UInt8? { current?.sessionVersion }

    /// The peer's identity key in the current session, if any.
    public var remoteIdentity: IdentityKey? { current?.remoteIdentity }

    /// The number of archived session states.
    public var archivedSessionCount: Int { previous.count }

    /// Makes `state` current and archives the old current state (at most 40 are kept).
    package mutating func promote(_ state: SessionState) {
        archiveCurrentState()
        current = state
    }

    /// Archives the current session (e.g. when the user resets it); the oldest archived
    /// states beyond libsignal's limit of 40 are dropped.
    public mutating func archiveCurrentState() {
        guard let current else { return }
        self.current = nil
        previous.insert(current, at: 0)
        if previous.count > RatchetConstants.maxArchivedStates {
            previous.removeLast(previous.count - RatchetConstants.maxArchivedStates)
        }
    }
}

// MARK: - CustomStringConvertible

extension SessionRecord: CustomStringConvertible {
    /// A summary without key material.
    public var description: String {
        "SessionRecord(current: \(current.map { "v\($0.sessionVersion)" } ?? "none"), archived: \(previous.count))"
    }
}

extension SessionRecord {
    /// If a state was set up by the pre-key message with this version and base key, makes
    /// it current and returns `true` (a repeated pre-key message reuses its session).
    package mutating func promoteMatching(version: UInt8, aliceBaseKey: ECPublicKey) -> Bool {
        if let current, current.sessionVersion == version, current.aliceBaseKey == aliceBaseKey { return true }
        guard let index = previous.firstIndex(where: { $0.sessionVersion == version && $0.aliceBaseKey == aliceBaseKey })
        else { return false }
        let state = previous.remove(at: index)
        promote(state)
        return true
    }
}
