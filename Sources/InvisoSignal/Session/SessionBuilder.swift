import InvisoCrypto

/// Starts sessions from pre-key bundles (the initiator's side of X3DH / PQXDH).
public enum SessionBuilder {
    /// Verifies `bundle` and stores a new session with `address`, ready to send.
    ///
    /// Bundles with a Kyber pre-key give a PQXDH session (message version 4), bundles
    /// without one an X3DH session (version 3). The first messages sent are
    /// ``PreKeySignalMessage``s until the peer answers.
    ///
    /// - Throws: ``SignalError/untrustedIdentity`` when the bundle's identity differs from
    ///   the one on record, ``SignalError/invalidSignature`` when a pre-key signature does
    ///   not verify, ``SignalError/lowOrderPublicKey`` for degenerate keys, or an error
    ///   from the store. Nothing is stored on failure.
    public static func process(
        _ bundle: PreKeyBundle, for address: ProtocolAddress, store: inout some SignalProtocolStore,
        using generator: inout some RandomNumberGenerator
    ) throws {
        guard try store.isTrustedIdentity(bundle.identityKey, for: address, direction: .sending) else {
            throw SignalError(.untrustedIdentity, "\(address)")
        }
        guard bundle.identityKey.publicKey.verifySignature(bundle.signedPreKeySignature, for: bundle.signedPreKey.serialized)
        else {
            throw SignalError(.invalidSignature, "signed pre-key")
        }
        var kyber: (secret: SecretBytes, ciphertext: [UInt8])?
        if let kyberPreKey = bundle.kyberPreKey {
            guard bundle.identityKey.publicKey.verifySignature(kyberPreKey.signature, for: kyberPreKey.publicKey.serialized)
            else {
                throw SignalError(.invalidSignature, "Kyber pre-key")
            }
            do {
                let result = try kyberPreKey.publicKey.key.encapsulate()
                kyber = (result.sharedSecret, result.ciphertext)
            } catch {
                throw SignalError(.invalidKey, "Kyber encapsulation failed")
            }
        }
        let ourIdentity = try store.identityKeyPair()
        let baseKey = ECKeyPair.generate(using: &generator)
        var state = try SessionInitialization.initializeAlice(
            .init(
                ourIdentity: ourIdentity, ourBaseKey: baseKey, theirIdentity: bundle.identityKey,
                theirSignedPreKey: bundle.signedPreKey, theirOneTimePreKey: bundle.preKey?.publicKey,
                kyberSharedSecret: kyber?.secret),
            using: &generator)
        state.pendingPreKey = PendingPreKey(
            preKeyID: bundle.preKey?.id, signedPreKeyID: bundle.signedPreKeyID, baseKey: baseKey.publicKey,
            kyberPreKeyID: bundle.kyberPreKey?.id, kyberCiphertext: kyber?.ciphertext)
        state.localRegistrationID = try store.localRegistrationID()
        state.remoteRegistrationID = bundle.registrationID

        var record = try store.loadSession(for: address) ?? SessionRecord()
        record.promote(state)
        _ = try store.saveIdentity(bundle.identityKey, for: address)
        try store.storeSession(record, for: address)
    }

    /// ``process(_:for:store:using:)`` with the system's secure generator.
    public static func process(
        _ bundle: PreKeyBundle, for address: ProtocolAddress, store: inout some SignalProtocolStore
    ) throws {
        var generator = SystemRandomNumberGenerator()
        try process(bundle, for: address, store: &store, using: &generator)
    }
}
