/// Why an Inviso v1 key exchange or frame was refused. Carries no secret-dependent detail.
/// Compare with the static members (`error == .replayed`).
public struct V1Error: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: Sendable, Hashable {
        case invalidPublicKey, allZeroSharedSecret, malformedFrame, unsupportedVersion
        case authenticationFailed, replayed, reflected, counterExhausted
    }

    package let code: Code

    package init(_ code: Code) { self.code = code }

    /// The peer's `key_exchange` public key is not 32 bytes of base64.
    public static let invalidPublicKey = V1Error(.invalidPublicKey)
    /// The peer's public key is a low-order point: the shared secret would be all zeros,
    /// a key anyone knows.
    public static let allZeroSharedSecret = V1Error(.allZeroSharedSecret)
    /// The frame is not the app's JSON frame (`v`, `c`, `n`, `d`, `t`), or is too large.
    public static let malformedFrame = V1Error(.malformedFrame)
    /// The frame's `v` is not 1.
    public static let unsupportedVersion = V1Error(.unsupportedVersion)
    /// The tag did not verify: wrong key, or the frame was altered.
    public static let authenticationFailed = V1Error(.authenticationFailed)
    /// This counter was already received, or is too far behind the newest one.
    public static let replayed = V1Error(.replayed)
    /// The frame is one of our own, sent back to us: in v1 both directions share the key
    /// for each counter, so it would otherwise decrypt as if the peer wrote it.
    public static let reflected = V1Error(.reflected)
    /// This side has sent 2^53 messages (the largest counter JSON carries exactly).
    public static let counterExhausted = V1Error(.counterExhausted)

    public var description: String {
        switch code {
        case .invalidPublicKey: "the peer's v1 public key is not a 32-byte X25519 key"
        case .allZeroSharedSecret: "the peer's v1 public key is a low-order point (all-zero shared secret)"
        case .malformedFrame: "not an Inviso v1 frame"
        case .unsupportedVersion: "unsupported v1 frame version"
        case .authenticationFailed: "a v1 frame failed authentication"
        case .replayed: "a v1 frame was replayed"
        case .reflected: "one of our own v1 frames was sent back to us"
        case .counterExhausted: "the v1 message counter is exhausted"
        }
    }
}
