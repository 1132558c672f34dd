/// Why a Noise session operation with a mesh peer failed. Messages name the peer and the
/// reason class, never key material or plaintext.
public struct MeshSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case noSession
        case handshakeFailed
        case identityMismatch
        case authenticationFailed
        case replayed
        case tooLarge
        case exhausted
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// No established session with the peer (start a handshake first).
    public static let noSession = MeshSessionError(.noSession)
    /// A handshake message was malformed, out of turn or did not authenticate.
    public static let handshakeFailed = MeshSessionError(.handshakeFailed)
    /// The peer authenticated a static key whose hash is not the peer ID it claimed.
    public static let identityMismatch = MeshSessionError(.identityMismatch)
    /// A transport message did not authenticate.
    public static let authenticationFailed = MeshSessionError(.authenticationFailed)
    /// A transport message was a replay, or too old for the replay window.
    public static let replayed = MeshSessionError(.replayed)
    /// A message exceeded Noise's 65,535-byte limit.
    public static let tooLarge = MeshSessionError(.tooLarge)
    /// The session's nonces are used up; a new handshake is needed.
    public static let exhausted = MeshSessionError(.exhausted)

    public var description: String {
        switch code {
        case .noSession: "no established Noise session with this peer"
        case .handshakeFailed: "Noise handshake failed"
        case .identityMismatch: "peer's Noise key does not match its peer ID"
        case .authenticationFailed: "message authentication failed"
        case .replayed: "replayed or too old message"
        case .tooLarge: "message too large"
        case .exhausted: "session exhausted; a new handshake is needed"
        }
    }
}
