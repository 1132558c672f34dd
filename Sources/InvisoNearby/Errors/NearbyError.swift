/// Why a nearby handshake, frame or transfer was refused.
///
/// Cryptographic failures are deliberately coarse (``Code/authenticationFailed``). No error
/// carries key material, message text or file contents; the context names the step.
public struct NearbyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case malformed, unsupportedVersion, authenticationFailed, badSignature
            case identityChanged, frameTooLarge, unexpectedMessage, invalidName
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Bytes that do not parse (a wrong length, an unknown type, a bad field).
        public static let malformed = Code(.malformed)
        /// The peer speaks a protocol version this build does not.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A Noise message or sealed frame did not authenticate.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// The identity's signature over the Noise static key does not verify: the session
        /// key is not the identity's (a relay that substitutes keys).
        public static let badSignature = Code(.badSignature)
        /// The peer presented an identity other than the one pinned (or advertised) for it.
        public static let identityChanged = Code(.identityChanged)
        /// A frame longer than the limit.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// A message that has no place in the current state.
        public static let unexpectedMessage = Code(.unexpectedMessage)
        /// A display name that is empty, too long or not valid UTF-8.
        public static let invalidName = Code(.invalidName)

        public var description: String {
            switch base {
            case .malformed: "malformed"
            case .unsupportedVersion: "unsupportedVersion"
            case .authenticationFailed: "authenticationFailed"
            case .badSignature: "badSignature"
            case .identityChanged: "identityChanged"
            case .frameTooLarge: "frameTooLarge"
            case .unexpectedMessage: "unexpectedMessage"
            case .invalidName: "invalidName"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The step that refused (fixed text, never data).
    public let context: String

    /// An error with a code and a fixed context.
    public init(_ code: Code, _ context: String) {
        self.code = code
        self.context = context
    }

    public var description: String { "\(code): \(context)" }

}
