/// Why a ``ChatClient`` call or the session failed. Never carries secret words, keys,
/// codes or message text.
public struct ChatError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case invalidInvite
        case wrongState
        case server
        case pairingFailed
        case pairingTimedOut
        case invalidPeerKey
        case connectionLost
        case expired
        case alreadyUsed
        case outboxFull
        case storage
        case file
        case closed
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The invite text is not an invite (the detail says why, without repeating a word).
    public static let invalidInvite = ChatError(.invalidInvite)
    /// The call does not fit the session's state (e.g. ``ChatClient/invite()`` twice).
    public static let wrongState = ChatError(.wrongState)
    /// The server refused or could not be reached (the detail names the refusal).
    public static let server = ChatError(.server)
    /// The pairing failed: the secret words differ, or someone tampered with the
    /// handshake. There is one attempt; create a new invite.
    public static let pairingFailed = ChatError(.pairingFailed)
    /// The peer did not complete the handshake in time.
    public static let pairingTimedOut = ChatError(.pairingTimedOut)
    /// The peer's key is invalid (v1: all-zero shared secret).
    public static let invalidPeerKey = ChatError(.invalidPeerKey)
    /// The connection to the server was lost for good.
    public static let connectionLost = ChatError(.connectionLost)
    /// The invite expired, or the room is gone.
    public static let expired = ChatError(.expired)
    /// Too many messages wait for the peer.
    public static let outboxFull = ChatError(.outboxFull)
    /// Someone already joined with this invite (409 `already_accepted`): it is used up.
    public static let alreadyUsed = ChatError(.alreadyUsed)
    /// The local store failed (the detail is the store's fixed phrase).
    public static let storage = ChatError(.storage)
    /// A file could not be read, or the downloads folder written (the detail says which,
    /// without a path).
    public static let file = ChatError(.file)
    /// The session is closed.
    public static let closed = ChatError(.closed)

    /// Errors compare by kind.
    public static func == (lhs: ChatError, rhs: ChatError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation for people.
    public var description: String {
        let base =
            switch code {
            case .invalidInvite: "not a valid invite"
            case .wrongState: "not possible in the session's current state"
            case .server: "the server refused the request or could not be reached"
            case .pairingFailed:
                "pairing failed: the secret words do not match, or someone tampered with the connection"
            case .pairingTimedOut: "the peer did not complete the pairing in time"
            case .invalidPeerKey: "the peer sent an invalid key"
            case .connectionLost: "the connection to the server was lost"
            case .expired: "the invite expired or the room is gone"
            case .alreadyUsed: "the invite was already used: someone joined with it before you; ask for a new one"
            case .outboxFull: "too many messages are waiting for the peer"
            case .storage: "the local store failed"
            case .file: "the file transfer failed"
            case .closed: "the session is closed"
            }
        return detail.isEmpty ? base : "\(base) (\(detail))"
    }
}
