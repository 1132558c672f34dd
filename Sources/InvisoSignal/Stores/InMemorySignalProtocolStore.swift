/// A ``SignalProtocolStore`` held in memory, as a value.
///
/// Because it is a value, a caller can snapshot it before an operation and compare after;
/// the protocol functions only write to it when they succeed.
public struct InMemorySignalProtocolStore: SignalProtocolStore, Sendable {
    /// Our identity.
    public let identity: IdentityKeyPair
    /// Our registration id.
    public let registrationID: UInt32
    /// Known peer identities.
    public private(set) var identities: [ProtocolAddress: IdentityKey] = [:]
    /// One-time pre-keys by id.
    public private(set) var preKeys: [UInt32: PreKeyRecord] = [:]
    /// Signed pre-keys by id.
    public private(set) var signedPreKeys: [UInt32: SignedPreKeyRecord] = [:]
    /// Kyber pre-keys by id.
    public private(set) var kyberPreKeys: [UInt32: KyberPreKeyRecord] = [:]
    /// Ids of last-resort Kyber pre-keys that have been used at least once.
    public private(set) var usedKyberPreKeys: Set<UInt32> = []
    /// Session records by address.
    public private(set) var sessions: [ProtocolAddress: SessionRecord] = [:]

    /// Creates an empty store for `identity`.
    public init(identity: IdentityKeyPair, registrationID: UInt32) {
        self.identity = identity
        self.registrationID = registrationID
    }

    /// Our identity key pair.
    public func identityKeyPair() throws -> IdentityKeyPair { identity }
    /// Our registration id.
    public func localRegistrationID() throws -> UInt32 { registrationID }

    /// Records `identity`; `true` when it replaced a different key.
    public mutating func saveIdentity(_ identity: IdentityKey, for address: ProtocolAddress) throws -> Bool {
        let old = identities.updateValue(identity, forKey: address)
        return old != nil && old != identity
    }

    /// Trust on first use: unknown or unchanged identities are trusted.
    public func isTrustedIdentity(_ identity: IdentityKey, for address: ProtocolAddress, direction: IdentityDirection) throws -> Bool {
        identities[address].map { $0 == identity } ?? true
    }

    /// The recorded identity of `address`.
    public func identity(for address: ProtocolAddress) throws -> IdentityKey? { identities[address] }

    /// The pre-key with `id`.
    public func loadPreKey(id: UInt32) throws -> PreKeyRecord? { preKeys[id] }
    /// Stores a pre-key.
    public mutating func storePreKey(_ record: PreKeyRecord) throws { preKeys[record.id] = record }
    /// Removes a pre-key.
    public mutating func removePreKey(id: UInt32) throws { preKeys[id] = nil }

    /// The signed pre-key with `id`.
    public func loadSignedPreKey(id: UInt32) throws -> SignedPreKeyRecord? { signedPreKeys[id] }
    /// Stores a signed pre-key.
    public mutating func storeSignedPreKey(_ record: SignedPreKeyRecord) throws { signedPreKeys[record.id] = record }

    /// The Kyber pre-key with `id`.
    public func loadKyberPreKey(id: UInt32) throws -> KyberPreKeyRecord? { kyberPreKeys[id] }
    /// Stores a Kyber pre-key.
    public mutating func storeKyberPreKey(_ record: KyberPreKeyRecord) throws { kyberPreKeys[record.id] = record }
    /// Removes a used one-time Kyber pre-key; remembers a used last-resort key.
    public mutating func markKyberPreKeyUsed(id: UInt32) throws {
        guard let record = kyberPreKeys[id] else { return }
        if record.isLastResort { usedKyberPreKeys.insert(id) } else { kyberPreKeys[id] = nil }
    }

    /// The session record for `address`.
    public func loadSession(for address: ProtocolAddress) throws -> SessionRecord? { sessions[address] }
    /// Stores a session record.
    public mutating func storeSession(_ record: SessionRecord, for address: ProtocolAddress) throws { sessions[address] = record }
}
