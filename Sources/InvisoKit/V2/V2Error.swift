/// Why an Inviso v2 invite, pairing step or session message was refused.
///
/// Errors compare by kind. Cryptographic failures are deliberately coarse
/// (``authenticationFailed`` never says which check failed), and no description contains
/// an invite's words, a key or a plaintext: the only context ever added is a position
/// (which word of an invite) or a frame type.
public struct V2Error: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case malformedInvite
        case invalidJoinCode
        case wrongWordCount
        case unknownWord
        case missingSecret
        case invalidRoomID
        case malformedFrame
        case unexpectedFrame
        case authenticationFailed
        case invalidPeerKey
        case pairingFailed
        case notEstablished
        case duplicateMessage
        case tooFarIntoFuture
        case invalidSession
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The text is neither `NNNNNN-word-word-word`, an `inviso://join/…` link, nor a bare
    /// six-digit code.
    public static let malformedInvite = V2Error(.malformedInvite)
    /// The join code is not exactly six ASCII digits.
    public static let invalidJoinCode = V2Error(.invalidJoinCode)
    /// The invite does not carry exactly three words.
    public static let wrongWordCount = V2Error(.wrongWordCount)
    /// A word of the invite is not in ``InviteWordlist``.
    public static let unknownWord = V2Error(.unknownWord)
    /// An `inviso://join/NNNNNN` link without its `#word-word-word` secret. Links we make
    /// always carry it; one that lost it on the way is refused rather than silently
    /// joined as unauthenticated v1.
    public static let missingSecret = V2Error(.missingSecret)
    /// The room id is empty, longer than 255 bytes, or contains a NUL byte.
    public static let invalidRoomID = V2Error(.invalidRoomID)
    /// A frame is empty, has an unknown type byte, or its contents do not parse.
    public static let malformedFrame = V2Error(.malformedFrame)
    /// A well-formed frame that does not belong here: a frame of another pairing step
    /// (duplicated, reordered or reflected), a handshake frame after the pairing, or a
    /// ratchet frame before it. Nothing changed.
    public static let unexpectedFrame = V2Error(.unexpectedFrame)
    /// A handshake or ratchet message did not authenticate: a wrong invite secret, a
    /// substituted key or message, or altered bytes.
    public static let authenticationFailed = V2Error(.authenticationFailed)
    /// The peer's CPace share or ratchet key is invalid (a low-order point, or not a
    /// canonical Curve25519 key).
    public static let invalidPeerKey = V2Error(.invalidPeerKey)
    /// The pairing failed: the peer sent an abort frame, or this pairing already failed
    /// (one attempt only).
    public static let pairingFailed = V2Error(.pairingFailed)
    /// Messages cannot be sealed yet: the handshake has not produced the session.
    public static let notEstablished = V2Error(.notEstablished)
    /// This ratchet message was already received (a replay or a duplicate delivery).
    public static let duplicateMessage = V2Error(.duplicateMessage)
    /// The message counter jumps further ahead than the Double Ratchet allows (25,000).
    public static let tooFarIntoFuture = V2Error(.tooFarIntoFuture)
    /// Stored session bytes could not be decoded.
    public static let invalidSession = V2Error(.invalidSession)

    /// Errors compare by kind, not by their explanatory detail.
    public static func == (lhs: V2Error, rhs: V2Error) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation, free of secrets.
    public var description: String {
        let base =
            switch code {
            case .malformedInvite: "not an Inviso invite (NNNNNN-word-word-word or inviso://join/NNNNNN#word-word-word)"
            case .invalidJoinCode: "the join code is not six digits"
            case .wrongWordCount: "an invite carries exactly three words"
            case .unknownWord: "an invite word is not in the wordlist"
            case .missingSecret: "the invite link has no secret words"
            case .invalidRoomID: "invalid room id"
            case .malformedFrame: "malformed v2 frame"
            case .unexpectedFrame: "unexpected v2 frame"
            case .authenticationFailed: "v2 authentication failed"
            case .invalidPeerKey: "the peer's v2 key is invalid"
            case .pairingFailed: "v2 pairing failed"
            case .notEstablished: "the v2 session is not established"
            case .duplicateMessage: "duplicate or replayed v2 message"
            case .tooFarIntoFuture: "v2 message counter too far into the future"
            case .invalidSession: "stored v2 session could not be decoded"
            }
        return detail.isEmpty ? base : "\(base) (\(detail))"
    }
}
