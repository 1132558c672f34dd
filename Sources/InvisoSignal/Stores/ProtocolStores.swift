/// Whether an identity is being checked for sending or for receiving.
public enum IdentityDirection: Sendable {
    /// We are about to encrypt to the peer.
    case sending
    /// We decrypted a message from the peer.
    case receiving
}

/// Our identity and what we believe about peers' identities.
public protocol IdentityKeyStore {
    /// Our identity key pair.
    func identityKeyPair() throws -> IdentityKeyPair
    /// Our registration id.
    func localRegistrationID() throws -> UInt32
    /// Records `identity` for `address`. Returns `true` when it replaced a different key.
    mutating func saveIdentity(_ identity: IdentityKey, for address: ProtocolAddress) throws -> Bool
    /// Whether `identity` is trusted for `address` (trust on first use: unknown or equal).
    func isTrustedIdentity(_ identity: IdentityKey, for address: ProtocolAddress, direction: IdentityDirection) throws -> Bool
    /// The identity recorded for `address`, if any.
    func identity(for address: ProtocolAddress) throws -> IdentityKey?
}

/// One-time Curve25519 pre-keys.
public protocol PreKeyStore {
    /// The pre-key with `id`, or `nil`.
    func loadPreKey(id: UInt32) throws -> PreKeyRecord?
    /// Stores a pre-key.
    mutating func storePreKey(_ record: PreKeyRecord) throws
    /// Removes a used pre-key.
    mutating func removePreKey(id: UInt32) throws
}

/// Signed Curve25519 pre-keys.
public protocol SignedPreKeyStore {
    /// The signed pre-key with `id`, or `nil`.
    func loadSignedPreKey(id: UInt32) throws -> SignedPreKeyRecord?
    /// Stores a signed pre-key.
    mutating func storeSignedPreKey(_ record: SignedPreKeyRecord) throws
}

/// Signed Kyber1024 pre-keys (one-time and last-resort).
public protocol KyberPreKeyStore {
    /// The Kyber pre-key with `id`, or `nil`.
    func loadKyberPreKey(id: UInt32) throws -> KyberPreKeyRecord?
    /// Stores a Kyber pre-key.
    mutating func storeKyberPreKey(_ record: KyberPreKeyRecord) throws
    /// Called after a Kyber pre-key set up a session: one-time keys must be removed,
    /// last-resort keys kept.
    mutating func markKyberPreKeyUsed(id: UInt32) throws
}

/// Session records per peer device.
public protocol SessionStore {
    /// The record for `address`, or `nil`.
    func loadSession(for address: ProtocolAddress) throws -> SessionRecord?
    /// Stores the record for `address`.
    mutating func storeSession(_ record: SessionRecord, for address: ProtocolAddress) throws
}

/// Everything a one-to-one session needs.
public typealias SignalProtocolStore = IdentityKeyStore & PreKeyStore & SignedPreKeyStore & KyberPreKeyStore & SessionStore
