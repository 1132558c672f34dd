/// Why a ``SecureChannel`` refused an input or failed. Deliberately coarse, and free of
/// keys, words and plaintexts.
public struct SecureChannelError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case pairingFailed
        case invalidPeerKey
        case refused
        case notEstablished
        case unsupported
        case exhausted
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The pairing failed: for v2 the invite's secret words differ on the two sides, or
    /// someone altered or substituted the handshake (there is one attempt); or the peer
    /// aborted.
    public static let pairingFailed = SecureChannelError(.pairingFailed)
    /// The peer's key is invalid (v1: a low-order point, whose shared secret is all zero).
    public static let invalidPeerKey = SecureChannelError(.invalidPeerKey)
    /// A frame or message was refused (malformed, unexpected here, a duplicate, or it did
    /// not authenticate); nothing changed.
    public static let refused = SecureChannelError(.refused)
    /// Nothing can be sealed or opened before the handshake.
    public static let notEstablished = SecureChannelError(.notEstablished)
    /// The protocol cannot carry this record (v1 has no acks).
    public static let unsupported = SecureChannelError(.unsupported)
    /// The message counter is exhausted.
    public static let exhausted = SecureChannelError(.exhausted)

    /// Errors compare by kind, not by their detail.
    public static func == (lhs: SecureChannelError, rhs: SecureChannelError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation.
    public var description: String {
        let base =
            switch code {
            case .pairingFailed:
                "pairing failed: the secret words do not match, or the handshake was tampered with"
            case .invalidPeerKey: "the peer's key is invalid"
            case .refused: "frame refused"
            case .notEstablished: "the secure channel is not established"
            case .unsupported: "not supported by this protocol version"
            case .exhausted: "message counter exhausted"
            }
        return detail.isEmpty ? base : "\(base) (\(detail))"
    }
}

extension SecureChannelError {
    /// The channel error for a refused v2 input, keeping the v2 reason as detail.
    init(refusing error: V2Error) {
        self.init(error == .pairingFailed ? .pairingFailed : .refused, error.description)
    }

    /// The channel error for a refused v1 input.
    init(refusing error: V1Error) {
        switch error {
        case .allZeroSharedSecret, .invalidPublicKey: self.init(.invalidPeerKey, error.description)
        case .counterExhausted: self.init(.exhausted)
        default: self.init(.refused, error.description)
        }
    }
}
