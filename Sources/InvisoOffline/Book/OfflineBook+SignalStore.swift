public import InvisoSignal

// The book is the Signal protocol store of its own sessions: our identity and pre-keys
// from the account, peers' identities and sessions from the contacts. Only contacts have
// sessions: an operation adds the contact before it builds one.

// MARK: - IdentityKeyStore

extension OfflineBook: IdentityKeyStore {
    /// Our identity key pair.
    public func identityKeyPair() throws -> IdentityKeyPair { account.identity }

    /// Our registration id.
    public func localRegistrationID() throws -> UInt32 { account.registrationID }

    /// Records `identity` for the contact at `address` (only an unchanged key reaches here:
    /// a changed one is refused first).
    public mutating func saveIdentity(_ identity: IdentityKey, for address: ProtocolAddress) throws -> Bool {
        guard let index = contactIndex(address: address.name, deviceID: address.deviceID) else { return false }
        let changed = contacts[index].identityKey != identity
        contacts[index].identityKey = identity
        return changed
    }

    /// A contact's key is trusted only if it is the one on record; an unknown address is
    /// (the contact is being added).
    public func isTrustedIdentity(_ identity: IdentityKey, for address: ProtocolAddress, direction: IdentityDirection) throws -> Bool {
        guard let index = contactIndex(address: address.name, deviceID: address.deviceID) else { return true }
        return contacts[index].identityKey == identity
    }

    /// The identity key on record for `address`.
    public func identity(for address: ProtocolAddress) throws -> IdentityKey? {
        contactIndex(address: address.name, deviceID: address.deviceID).map { contacts[$0].identityKey }
    }
}

// MARK: - PreKeyStore, SignedPreKeyStore, KyberPreKeyStore

extension OfflineBook: PreKeyStore, SignedPreKeyStore, KyberPreKeyStore {
    /// A one-time pre-key of any kept generation.
    public func loadPreKey(id: UInt32) throws -> PreKeyRecord? {
        for generation in account.generations {
            if let key = generation.oneTimePreKeys.first(where: { $0.id == id }) { return key }
        }
        return nil
    }

    /// Pre-keys are made by rotation only.
    public mutating func storePreKey(_ record: PreKeyRecord) throws {}

    /// Kept: an invite may be opened by several people (see ``PreKeyGeneration``).
    public mutating func removePreKey(id: UInt32) throws {}

    /// The signed pre-key of a kept generation.
    public func loadSignedPreKey(id: UInt32) throws -> SignedPreKeyRecord? {
        account.generations.first { $0.signedPreKey.id == id }?.signedPreKey
    }

    /// Signed pre-keys are made by rotation only.
    public mutating func storeSignedPreKey(_ record: SignedPreKeyRecord) throws {}

    /// The Kyber pre-key of a kept generation.
    public func loadKyberPreKey(id: UInt32) throws -> KyberPreKeyRecord? {
        account.generations.first { $0.kyberPreKey.id == id }?.kyberPreKey
    }

    /// Kyber pre-keys are made by rotation only.
    public mutating func storeKyberPreKey(_ record: KyberPreKeyRecord) throws {}

    /// Kept, like a last-resort key, until its generation goes.
    public mutating func markKyberPreKeyUsed(id: UInt32) throws {}
}

// MARK: - SessionStore

extension OfflineBook: SessionStore {
    /// The session with the contact at `address`.
    public func loadSession(for address: ProtocolAddress) throws -> SessionRecord? {
        guard let index = contactIndex(address: address.name, deviceID: address.deviceID) else { return nil }
        let session = contacts[index].session
        return session.hasCurrentSession || session.archivedSessionCount > 0 ? session : nil
    }

    /// Stores the session with the contact at `address`.
    ///
    /// - Throws: ``OfflineError/Code/unknownSender`` for an address that is not a contact
    ///   (operations add the contact first, so this does not happen).
    public mutating func storeSession(_ record: SessionRecord, for address: ProtocolAddress) throws {
        guard let index = contactIndex(address: address.name, deviceID: address.deviceID) else {
            throw OfflineError(.unknownSender, "session for an unknown address")
        }
        contacts[index].session = record
    }
}
