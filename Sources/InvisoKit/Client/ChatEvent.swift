public import InvisoStore
public import InvisoWire

/// What a ``ChatClient`` reports, in order, on ``ChatClient/events``. A UI subscribes to
/// this stream only.
public enum ChatEvent: Sendable, Equatable {
    /// The session moved to a new lifecycle state.
    case state(ChatState)
    /// The secure channel is up: protocol, whether the peer is authenticated, and the
    /// safety number to compare (`inviso verify`).
    case secured(ChatSecurity)
    /// Messages now travel on this path (first ``ChatPath/relay``; ``ChatPath/direct``
    /// once a direct connection is added).
    case path(ChatPath)
    /// A message from the peer, exactly once and in the peer's order. `id` is the
    /// sender's id for it (v2: its sequence number; v1: frame counter + 1).
    case message(id: UInt64, payload: ChatPayload)
    /// The peer acknowledged our message `id` (v2 only: v1 has no acks).
    case delivered(id: UInt64)
    /// The peer proposes a message lifetime; answer with
    /// ``ChatClient/acceptLifetime(_:)`` or ``ChatClient/rejectLifetime(_:)``.
    case lifetimeProposed(MessageLifetime)
    /// Both sides agreed on this message lifetime; the store enforces it.
    case lifetime(MessageLifetime)
    /// The peer announced direct-path candidates (`transport_candidates`); for the direct
    /// transport.
    case transportCandidates([TransportCandidates.Candidate])
    /// The peer's connection to the server dropped (`online: false`: our messages wait in
    /// the outbox) or came back (`true`). Told only once the channel is up.
    case peer(online: Bool)
    /// A file transfer moved on (v2 sessions).
    case file(ChatFileEvent)
    /// Something the user should know that does not end the session.
    case warning(ChatWarning)
    /// Something failed; when it ends the session a ``closed(_:)`` follows.
    case error(ChatError)
    /// The session ended; the stream finishes after this event.
    case closed(ChatCloseReason)
}

/// The lifecycle of a chat session: pending → accepted → active → closed.
public enum ChatState: String, Sendable, Hashable, CustomStringConvertible {
    /// Nothing started yet.
    case idle
    /// The creator published the join code and waits for someone to accept it.
    case pending
    /// The code was accepted; the room exists and the secure channel is being set up.
    case accepted
    /// The secure channel is up; messages flow.
    case active
    /// Ended (left, failed or expired).
    case closed

    public var description: String { rawValue }
}

/// The security of an established session.
public struct ChatSecurity: Sendable, Hashable, CustomStringConvertible {
    /// The protocol.
    public var version: ChatProtocolVersion
    /// Whether the peer is authenticated (v2 pairing succeeded). v1 is never verified:
    /// compare ``safetyNumber`` out of band.
    public var isVerified: Bool
    private let number: LazySafetyNumber

    /// 60 digits, the same on both sides unless a key was substituted. Computed on the
    /// first access (10,400 SHA-512 rounds, about 4 ms) and kept: a session hands this
    /// value out as its channel comes up without making its frames wait for the digits.
    public var safetyNumber: String { number.value }

    /// A value.
    public init(version: ChatProtocolVersion, isVerified: Bool, safetyNumber: String) {
        self.version = version
        self.isVerified = isVerified
        number = LazySafetyNumber(safetyNumber)
    }

    /// A value whose digits are computed when first asked for.
    init(version: ChatProtocolVersion, isVerified: Bool, computing inputs: SafetyNumberInputs) {
        self.version = version
        self.isVerified = isVerified
        number = LazySafetyNumber(inputs)
    }

    public static func == (lhs: ChatSecurity, rhs: ChatSecurity) -> Bool {
        lhs.version == rhs.version && lhs.isVerified == rhs.isVerified && lhs.safetyNumber == rhs.safetyNumber
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(isVerified)
        hasher.combine(safetyNumber)
    }

    public var description: String {
        "ChatSecurity(version: \(version), isVerified: \(isVerified), safetyNumber: \(safetyNumber))"
    }
}

/// A notice that does not end the session.
public enum ChatWarning: String, Sendable, Hashable, CustomStringConvertible {
    /// The session uses v1 (a bare join code, or an app peer that has only the code):
    /// end-to-end encrypted but not authenticated; compare the safety number.
    case unverifiedV1
    /// The server refused something it relayed for us (its fixed message is logged, not
    /// repeated here).
    case serverRefused

    public var description: String {
        switch self {
        case .unverifiedV1: "v1 session: encrypted but unverified; compare the safety number"
        case .serverRefused: "the server refused a message"
        }
    }
}

/// Why a session ended.
public enum ChatCloseReason: String, Sendable, Hashable, CustomStringConvertible {
    /// ``ChatClient/leave()`` was called.
    case left
    /// The peer left the room.
    case peerLeft
    /// The pairing failed (wrong secret words, or tampering), or it timed out.
    case pairingFailed
    /// Nobody accepted the invite before it expired, or the room is gone.
    case expired
    /// The signaling connection could not be restored. An established session stays
    /// stored and resumable (``ChatClient/resume(sessionID:)``), as after ``suspended``.
    case connectionLost
    /// ``ChatClient/suspend()`` was called: the session stays stored and resumable.
    case suspended

    public var description: String { rawValue }
}
