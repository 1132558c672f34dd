/// An error from the Signal protocol layer.
///
/// Cryptographic failures are deliberately coarse: ``invalidMessage`` and
/// ``authenticationFailed`` never say which byte or which check failed. Descriptions
/// never contain key material or plaintext. Every operation that throws leaves the
/// stores it was given unchanged.
public struct SignalError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case invalidKey
        case invalidKeyType
        case invalidSignature
        case invalidMessage
        case authenticationFailed
        case legacyVersion
        case unrecognizedVersion
        case duplicateMessage
        case tooFarIntoFuture
        case untrustedIdentity
        case sessionNotFound
        case invalidSessionState
        case invalidPreKeyID
        case invalidSignedPreKeyID
        case invalidKyberPreKeyID
        case noSenderKeyState
        case fingerprintVersionMismatch
        case fingerprintIdentityMismatch
        case fingerprintParsingError
        case invalidIterations
        case invalidArgument
        case invalidRecord
        case lowOrderPublicKey
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// A public key is malformed: wrong length or wrong key-type byte.
    public static let invalidKey = SignalError(.invalidKey)
    /// A key's type byte names a key type this library does not use.
    public static let invalidKeyType = SignalError(.invalidKeyType)
    /// A signature (signed pre-key, Kyber pre-key, sender key message) does not verify.
    public static let invalidSignature = SignalError(.invalidSignature)
    /// A message is malformed (truncated, bad protobuf, missing fields, wrong sizes).
    public static let invalidMessage = SignalError(.invalidMessage)
    /// A message did not authenticate (MAC, padding or decryption failure) under any session.
    public static let authenticationFailed = SignalError(.authenticationFailed)
    /// The message version is older than this library supports.
    public static let legacyVersion = SignalError(.legacyVersion)
    /// The message version is newer than this library understands.
    public static let unrecognizedVersion = SignalError(.unrecognizedVersion)
    /// The message's key was already used: a replay or a duplicate delivery.
    public static let duplicateMessage = SignalError(.duplicateMessage)
    /// The message counter jumps further ahead than the forward-jump limit allows.
    public static let tooFarIntoFuture = SignalError(.tooFarIntoFuture)
    /// The peer's identity key differs from the trusted one.
    public static let untrustedIdentity = SignalError(.untrustedIdentity)
    /// There is no session with this address.
    public static let sessionNotFound = SignalError(.sessionNotFound)
    /// The session exists but cannot be used for this operation.
    public static let invalidSessionState = SignalError(.invalidSessionState)
    /// The referenced one-time pre-key is unknown (already used, or never issued).
    public static let invalidPreKeyID = SignalError(.invalidPreKeyID)
    /// The referenced signed pre-key is unknown.
    public static let invalidSignedPreKeyID = SignalError(.invalidSignedPreKeyID)
    /// The referenced Kyber pre-key is unknown (or a used one-time Kyber pre-key).
    public static let invalidKyberPreKeyID = SignalError(.invalidKyberPreKeyID)
    /// No sender key state exists for this sender and distribution.
    public static let noSenderKeyState = SignalError(.noSenderKeyState)
    /// Two fingerprints of different versions were compared.
    public static let fingerprintVersionMismatch = SignalError(.fingerprintVersionMismatch)
    /// Two fingerprints were made for different identities.
    public static let fingerprintIdentityMismatch = SignalError(.fingerprintIdentityMismatch)
    /// A scannable fingerprint could not be parsed.
    public static let fingerprintParsingError = SignalError(.fingerprintParsingError)
    /// The fingerprint iteration count is out of range (must be 2 … 1,000,000).
    public static let invalidIterations = SignalError(.invalidIterations)
    /// An argument is out of range (device id, registration id, text encoding, …).
    public static let invalidArgument = SignalError(.invalidArgument)
    /// A stored record (session, pre-key, sender key) could not be decoded.
    public static let invalidRecord = SignalError(.invalidRecord)
    /// A peer public key produced the all-zero X25519 output.
    public static let lowOrderPublicKey = SignalError(.lowOrderPublicKey)

    /// Errors compare by kind, not by their explanatory detail.
    public static func == (lhs: SignalError, rhs: SignalError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation, free of secrets.
    public var description: String {
        let base: String
        switch code {
        case .invalidKey: base = "invalid public key"
        case .invalidKeyType: base = "unsupported key type"
        case .invalidSignature: base = "signature verification failed"
        case .invalidMessage: base = "malformed message"
        case .authenticationFailed: base = "message authentication failed"
        case .legacyVersion: base = "legacy message version"
        case .unrecognizedVersion: base = "unrecognized message version"
        case .duplicateMessage: base = "duplicate or replayed message"
        case .tooFarIntoFuture: base = "message counter too far into the future"
        case .untrustedIdentity: base = "untrusted identity key"
        case .sessionNotFound: base = "no session for this address"
        case .invalidSessionState: base = "session state unusable"
        case .invalidPreKeyID: base = "unknown one-time pre-key"
        case .invalidSignedPreKeyID: base = "unknown signed pre-key"
        case .invalidKyberPreKeyID: base = "unknown Kyber pre-key"
        case .noSenderKeyState: base = "no sender key state"
        case .fingerprintVersionMismatch: base = "fingerprint version mismatch"
        case .fingerprintIdentityMismatch: base = "fingerprint identity mismatch"
        case .fingerprintParsingError: base = "scannable fingerprint could not be parsed"
        case .invalidIterations: base = "fingerprint iterations out of range"
        case .invalidArgument: base = "invalid argument"
        case .invalidRecord: base = "stored record could not be decoded"
        case .lowOrderPublicKey: base = "low-order public key (all-zero X25519 output)"
        }
        return detail.isEmpty ? base : "\(base): \(detail)"
    }
}
