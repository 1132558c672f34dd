/// What a stored secret is: the `secrets.kind` column, in plaintext, one secret of each kind
/// per session.
public struct SecretKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kind's name as stored.
    public let rawValue: String

    /// A kind named `rawValue`.
    ///
    /// - Parameter rawValue: The name; keep it short and free of personal data (it is stored
    ///   in plaintext).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The serialized ratchet (Double Ratchet) state.
    public static let ratchet = SecretKind(rawValue: "ratchet")
    /// The secure channel's state (handshake results, v1 keys).
    public static let channel = SecretKind(rawValue: "channel")
    /// This device's private identity key for the session.
    public static let identityKey = SecretKind(rawValue: "identity-key")

    /// The raw name (a kind is not secret; the value it labels is).
    public var description: String { rawValue }
}
