import InvisoCrypto

/// Encrypts and decrypts one-to-one messages, loading and saving state through the store.
///
/// Every function either succeeds and stores the new state, or throws and leaves the
/// store exactly as it was (pre-keys included).
public enum SessionCipher {
    /// Encrypts `plaintext` for `address`.
    ///
    /// - Throws: ``SignalError/sessionNotFound`` without a session,
    ///   ``SignalError/untrustedIdentity`` when the peer's identity changed, or a store error.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, for address: ProtocolAddress, store: inout some SignalProtocolStore
    ) throws -> CiphertextMessage {
        try encrypt(Array(plaintext), for: address, store: &store)
    }

    /// ``encrypt(_:for:store:)-(Collection<UInt8>,_,_)`` for a byte array (no generic copy).
    public static func encrypt(
        _ plaintext: [UInt8], for address: ProtocolAddress, store: inout some SignalProtocolStore
    ) throws -> CiphertextMessage {
        guard var record = try store.loadSession(for: address), let remoteIdentity = record.current?.remoteIdentity else {
            throw SignalError(.sessionNotFound, "\(address)")
        }
        guard try store.isTrustedIdentity(remoteIdentity, for: address, direction: .sending) else {
            throw SignalError(.untrustedIdentity, "\(address)")
        }
        // In place: `record` is our copy, and the store sees it only if this succeeds.
        let message = try record.current!.encrypt(plaintext)
        // The identity was recorded when the session was built; it cannot change within it.
        try store.storeSession(record, for: address)
        return message
    }

    /// Decrypts a ``SignalMessage`` (type 2) from `address`.
    ///
    /// - Throws: ``SignalError/sessionNotFound``, ``SignalError/duplicateMessage``,
    ///   ``SignalError/tooFarIntoFuture``, ``SignalError/authenticationFailed``,
    ///   ``SignalError/untrustedIdentity``, or a store error.
    public static func decrypt(
        _ message: SignalMessage, from address: ProtocolAddress, store: inout some SignalProtocolStore,
        using generator: inout some RandomNumberGenerator
    ) throws -> [UInt8] {
        guard var record = try store.loadSession(for: address) else {
            throw SignalError(.sessionNotFound, "\(address)")
        }
        let plaintext = try record.decrypt(message, using: &generator)
        guard let remote = record.current?.remoteIdentity else { throw SignalError(.invalidSessionState) }
        guard try store.isTrustedIdentity(remote, for: address, direction: .receiving) else {
            throw SignalError(.untrustedIdentity, "\(address)")
        }
        _ = try store.saveIdentity(remote, for: address)
        try store.storeSession(record, for: address)
        return plaintext
    }

    /// Decrypts a ``PreKeySignalMessage`` (type 3) from `address`, setting up the session
    /// it announces (X3DH for version 3, PQXDH for version 4) unless it already exists.
    /// The one-time pre-key is removed and a one-time Kyber pre-key marked used only after
    /// the message decrypts.
    ///
    /// - Throws: ``SignalError/untrustedIdentity``, ``SignalError/invalidPreKeyID``,
    ///   ``SignalError/invalidSignedPreKeyID``, ``SignalError/invalidKyberPreKeyID``, the
    ///   errors of ``decrypt(_:from:store:using:)-(SignalMessage,_,_,_)``, or a store error.
    public static func decrypt(
        _ message: PreKeySignalMessage, from address: ProtocolAddress, store: inout some SignalProtocolStore,
        using generator: inout some RandomNumberGenerator
    ) throws -> [UInt8] {
        guard try store.isTrustedIdentity(message.identityKey, for: address, direction: .receiving) else {
            throw SignalError(.untrustedIdentity, "\(address)")
        }
        var record = try store.loadSession(for: address) ?? SessionRecord()
        var usedPreKeyID: UInt32?
        var usedKyberPreKeyID: UInt32?
        if !record.promoteMatching(version: message.messageVersion, aliceBaseKey: message.baseKey) {
            var state = try bobState(for: message, store: store)
            usedPreKeyID = message.preKeyID
            usedKyberPreKeyID = message.messageVersion >= 4 ? message.kyberPreKeyID : nil
            state.localRegistrationID = try store.localRegistrationID()
            state.remoteRegistrationID = message.registrationID
            record.promote(state)
        }
        let plaintext = try record.decrypt(message.message, using: &generator)
        _ = try store.saveIdentity(message.identityKey, for: address)
        try store.storeSession(record, for: address)
        if let usedPreKeyID { try store.removePreKey(id: usedPreKeyID) }
        if let usedKyberPreKeyID { try store.markKyberPreKeyUsed(id: usedKyberPreKeyID) }
        return plaintext
    }

    /// Decrypts a serialized message of the given type (2 or 3).
    ///
    /// - Throws: ``SignalError/invalidMessage`` for other types or malformed bytes, and the
    ///   errors of the typed functions.
    public static func decrypt(
        type: CiphertextMessageType, body: some Collection<UInt8>, from address: ProtocolAddress,
        store: inout some SignalProtocolStore, using generator: inout some RandomNumberGenerator
    ) throws -> [UInt8] {
        let body = Array(body)
        switch type {
        case .whisper:
            return try decrypt(try SignalMessage(serialized: body), from: address, store: &store, using: &generator)
        case .preKey:
            return try decrypt(try PreKeySignalMessage(serialized: body), from: address, store: &store, using: &generator)
        default:
            throw SignalError(.invalidMessage, "not a one-to-one message type")
        }
    }

    /// ``decrypt(type:body:from:store:using:)`` with the system's secure generator.
    public static func decrypt(
        type: CiphertextMessageType, body: some Collection<UInt8>, from address: ProtocolAddress,
        store: inout some SignalProtocolStore
    ) throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return try decrypt(type: type, body: body, from: address, store: &store, using: &generator)
    }
}
