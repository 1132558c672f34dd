public import Foundation

/// The peer identity pinned for a session: its public key and what the user verified.
///
/// Sealed whole in the `identities` table; only the session ID is plaintext.
public struct PinnedIdentity: Sendable, Hashable, Codable {
    /// The peer's static public key, as the channel presents it.
    public var publicKey: Data
    /// The safety number shown to the user for comparison, if one was computed.
    public var safetyNumber: String?
    /// Whether the user confirmed the safety number (or the channel authenticated the peer).
    public var isVerified: Bool

    /// Creates a pinned identity.
    ///
    /// - Parameters:
    ///   - publicKey: The peer's static public key.
    ///   - safetyNumber: The safety number shown to the user, if any.
    ///   - isVerified: Whether the peer is verified.
    public init(publicKey: Data, safetyNumber: String? = nil, isVerified: Bool = false) {
        self.publicKey = publicKey
        self.safetyNumber = safetyNumber
        self.isVerified = isVerified
    }
}
