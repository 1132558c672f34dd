import InvisoCrypto

extension SessionCipher {
    /// Whether a ``PreKeySignalMessage``'s header is authentic: a session set up afresh from
    /// it (our pre-keys it names, its base key, identity key and Kyber ciphertext) decrypts
    /// its inner message. Nothing is stored.
    ///
    /// libsignal authenticates only the inner ``SignalMessage``. When a session with the
    /// peer exists, ``decrypt(_:from:store:using:)-(PreKeySignalMessage,_,_,_)`` reuses it
    /// for a repeated header and, for a header it does not recognise, builds a new state
    /// and then falls back to the older ones — so a header with a flipped pre-key id, base
    /// key or Kyber ciphertext still "decrypts" (and leaves a useless state behind). A
    /// caller that must refuse every altered byte (pasted text) checks the header first.
    ///
    /// - Returns: `true` or `false`; `nil` when the signed pre-key the header names is gone
    ///   (rotated away), so it cannot be checked. A one-time or Kyber pre-key that is
    ///   missing while its signed pre-key is there gives `false`: this is for stores that
    ///   keep those keys as long as their signed pre-key (the offline book does; a store
    ///   that deletes one-time keys on use would see its peer's repeated headers refused).
    /// - Throws: A store error (any other failure is `false`).
    package static func headerAuthenticates(
        _ message: PreKeySignalMessage, store: some SignalProtocolStore
    ) throws -> Bool? {
        do {
            var state = try bobState(for: message, store: store)
            // The generator only makes the ratchet key of a state that is thrown away.
            var generator = SystemRandomNumberGenerator()
            _ = try state.decrypt(message.message, using: &generator)
            return true
        } catch let error as SignalError {
            return error.code == .invalidSignedPreKeyID ? nil : false
        }
    }

    /// The receiving side's new session from a pre-key message: our signed, one-time and
    /// (version 4) Kyber pre-keys it names, its base key, identity key and Kyber ciphertext.
    /// Nothing is stored; the registration ids are left for the caller.
    ///
    /// - Throws: ``SignalError/invalidSignedPreKeyID``, ``SignalError/invalidPreKeyID``,
    ///   ``SignalError/invalidKyberPreKeyID`` for a pre-key we do not have,
    ///   ``SignalError/invalidMessage`` for a Kyber ciphertext that does not decapsulate,
    ///   the errors of the key agreement, or a store error.
    static func bobState(for message: PreKeySignalMessage, store: some SignalProtocolStore) throws -> SessionState {
        guard let signedPreKey = try store.loadSignedPreKey(id: message.signedPreKeyID) else {
            throw SignalError(.invalidSignedPreKeyID)
        }
        var oneTime: ECKeyPair?
        if let id = message.preKeyID {
            guard let record = try store.loadPreKey(id: id) else { throw SignalError(.invalidPreKeyID) }
            oneTime = record.keyPair
        }
        var kyberSecret: SecretBytes?
        if message.messageVersion >= 4 {
            guard let id = message.kyberPreKeyID, let ciphertext = message.kyberCiphertext,
                let kyberRecord = try store.loadKyberPreKey(id: id)
            else {
                throw SignalError(.invalidKyberPreKeyID)
            }
            do {
                kyberSecret = try kyberRecord.keyPair.privateKey.decapsulate(ciphertext)
            } catch {
                throw SignalError(.invalidMessage, "Kyber ciphertext")
            }
        }
        return try SessionInitialization.initializeBob(
            .init(
                ourIdentity: try store.identityKeyPair(), ourSignedPreKey: signedPreKey.keyPair,
                ourOneTimePreKey: oneTime, theirIdentity: message.identityKey, theirBaseKey: message.baseKey,
                kyberSharedSecret: kyberSecret))
    }
}
