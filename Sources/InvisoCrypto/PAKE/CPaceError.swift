/// Why a ``CPace`` step was refused.
///
/// The cases are deliberately coarse: they say which input was rejected, never anything
/// that depends on the password, the scalars or the key, and no description contains
/// secret material. A wrong password is *not* an error here: CPace has no key
/// confirmation, so the two parties simply derive different keys, which the protocol run
/// on top of the key (Noise `XXpsk3` in Inviso) detects.
public struct CPaceError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case malformedMessage
        case invalidPeerShare
        case invalidGenerator
        case alreadyFinished
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The peer's message does not parse: it is not `prepend_len(Y) ‖ prepend_len(AD)`
    /// with minimal LEB128 lengths and nothing after, or Y is not 32 bytes.
    public static let malformedMessage = CPaceError(.malformedMessage)
    /// The peer's share Y gives the neutral element: scalar_mult_vfy returned
    /// G.I = 32 zero bytes (a low-order point on the curve or its twist). The draft says
    /// the party MUST abort.
    public static let invalidPeerShare = CPaceError(.invalidPeerShare)
    /// Our own share came out as the neutral element: the generator has low order. This
    /// happens only for a negligible set of hash values.
    public static let invalidGenerator = CPaceError(.invalidGenerator)
    /// The exchange already derived its key; a scalar is used for one peer share only.
    public static let alreadyFinished = CPaceError(.alreadyFinished)

    /// A short explanation, free of key material.
    public var description: String {
        switch code {
        case .malformedMessage: "CPaceError: the peer's message is malformed"
        case .invalidPeerShare: "CPaceError: the peer's share is invalid (neutral element)"
        case .invalidGenerator: "CPaceError: the generator has low order"
        case .alreadyFinished: "CPaceError: the exchange has already finished"
        }
    }
}
