/// An error from the Noise layer.
///
/// Cryptographic failures are deliberately coarse (``authenticationFailed`` says nothing
/// about which check failed). Descriptions never contain key material or plaintext.
public struct NoiseError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case invalidProtocolName
        case unsupportedAlgorithm
        case invalidPattern
        case missingKey
        case unexpectedKey
        case invalidKey
        case invalidPreSharedKey
        case outOfTurn
        case handshakeAlreadyComplete
        case handshakeNotComplete
        case messageTooLarge
        case malformedMessage
        case authenticationFailed
        case nonceExhausted
        case lowOrderPublicKey
        case replayedMessage
        case sendNotAllowed
        case receiveNotAllowed
        case fallbackNotPossible
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The protocol name is malformed (unknown token, bad modifier, too long, …).
    public static let invalidProtocolName = NoiseError(.invalidProtocolName)
    /// The name is well formed but names an algorithm this library does not implement (e.g. DH `448`).
    public static let unsupportedAlgorithm = NoiseError(.unsupportedAlgorithm)
    /// The pattern and its modifiers do not form a valid handshake (e.g. `fallback` on a pattern whose first message cannot be a pre-message).
    public static let invalidPattern = NoiseError(.invalidPattern)
    /// A key the pattern needs (local static, remote static, pre-message ephemeral) was not supplied.
    public static let missingKey = NoiseError(.missingKey)
    /// A remote key was supplied that the pattern does not pre-share.
    public static let unexpectedKey = NoiseError(.unexpectedKey)
    /// A supplied key has the wrong length.
    public static let invalidKey = NoiseError(.invalidKey)
    /// The pre-shared keys do not match the pattern (wrong count, or not 32 bytes).
    public static let invalidPreSharedKey = NoiseError(.invalidPreSharedKey)
    /// `writeMessage` or `readMessage` was called when it is the other party's turn.
    public static let outOfTurn = NoiseError(.outOfTurn)
    /// The handshake has already finished.
    public static let handshakeAlreadyComplete = NoiseError(.handshakeAlreadyComplete)
    /// Transport keys were requested before the handshake finished.
    public static let handshakeNotComplete = NoiseError(.handshakeNotComplete)
    /// A message or plaintext exceeds the 65,535-byte Noise message limit.
    public static let messageTooLarge = NoiseError(.messageTooLarge)
    /// A message is too short for what the pattern says it carries.
    public static let malformedMessage = NoiseError(.malformedMessage)
    /// Decryption failed: wrong key, tampered bytes, wrong prologue, wrong PSK, or replay.
    public static let authenticationFailed = NoiseError(.authenticationFailed)
    /// The nonce space is used up (2^64−1 is reserved); the session must be replaced.
    public static let nonceExhausted = NoiseError(.nonceExhausted)
    /// A peer public key produced the all-zero Diffie–Hellman output.
    public static let lowOrderPublicKey = NoiseError(.lowOrderPublicKey)
    /// An explicit-nonce transport message reused a nonce or fell behind the replay window.
    public static let replayedMessage = NoiseError(.replayedMessage)
    /// This side may not send (the responder of a one-way pattern).
    public static let sendNotAllowed = NoiseError(.sendNotAllowed)
    /// This side may not receive (the initiator of a one-way pattern).
    public static let receiveNotAllowed = NoiseError(.receiveNotAllowed)
    /// A fallback handshake cannot be derived from this state.
    public static let fallbackNotPossible = NoiseError(.fallbackNotPossible)

    /// Errors compare by kind, not by their explanatory detail.
    public static func == (lhs: NoiseError, rhs: NoiseError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation, free of secrets.
    public var description: String {
        let base: String = switch code {
        case .invalidProtocolName: "invalid Noise protocol name"
        case .unsupportedAlgorithm: "unsupported Noise algorithm"
        case .invalidPattern: "invalid handshake pattern"
        case .missingKey: "a key required by the pattern is missing"
        case .unexpectedKey: "a key was supplied that the pattern does not use"
        case .invalidKey: "a key has the wrong length"
        case .invalidPreSharedKey: "pre-shared keys do not match the pattern"
        case .outOfTurn: "not this party's turn"
        case .handshakeAlreadyComplete: "handshake already complete"
        case .handshakeNotComplete: "handshake not complete"
        case .messageTooLarge: "message exceeds 65535 bytes"
        case .malformedMessage: "malformed message"
        case .authenticationFailed: "authentication failed"
        case .nonceExhausted: "nonce space exhausted"
        case .lowOrderPublicKey: "low-order public key (all-zero DH output)"
        case .replayedMessage: "replayed or too old message"
        case .sendNotAllowed: "this party cannot send in a one-way pattern"
        case .receiveNotAllowed: "this party cannot receive in a one-way pattern"
        case .fallbackNotPossible: "fallback not possible from this state"
        }
        return detail.isEmpty ? base : "\(base): \(detail)"
    }
}
