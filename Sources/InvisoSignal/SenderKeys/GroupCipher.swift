public import Foundation
import InvisoCrypto

/// Group messaging with sender keys, as libsignal's `group_cipher` does it.
///
/// Each member has its own sending chain per distribution. It tells the others about it
/// with a ``SenderKeyDistributionMessage`` (sent over 1:1 sessions), then encrypts each
/// group message once: AES-256-CBC under the chain's next message key, signed with the
/// chain's signing key. Receivers verify the signature and step their copy of the chain.
///
/// Every function loads the record it needs, works on a copy and stores it only when the
/// whole operation succeeded: a thrown error leaves the store as it was. Functions that
/// need randomness take a generator; the overloads without one use
/// `SystemRandomNumberGenerator`.
public enum GroupCipher {
    /// Returns the distribution message for our own chain in `distributionID`, creating the
    /// chain first if there is none (random 31-bit chain id, iteration 0, random 32-byte
    /// chain key, fresh signing key pair). An existing chain is described as it is now.
    ///
    /// - Parameters:
    ///   - sender: Our own address.
    ///   - distributionID: The distribution id.
    ///   - store: The sender-key store.
    ///   - generator: The source of the chain id, chain key and signing key; it must be
    ///     cryptographically secure outside tests.
    /// - Returns: The message to send to every member over 1:1 sessions.
    /// - Throws: Errors of the store.
    public static func createDistributionMessage(
        sender: ProtocolAddress,
        distributionID: UUID,
        store: inout some SenderKeyStore,
        using generator: inout some RandomNumberGenerator
    ) throws -> SenderKeyDistributionMessage {
        var record = try store.loadSenderKey(sender: sender, distributionID: distributionID) ?? SenderKeyRecord()
        if record.isEmpty {
            let chainID = UInt32(truncatingIfNeeded: generator.next()) >> 1
            let chainKey = SecretBytes(randomCount: SenderKeyDistributionMessage.chainKeyByteCount, using: &generator)
            let signing = ECKeyPair.generate(using: &generator)
            record.addState(
                messageVersion: SenderKeyMessage.currentVersion, chainID: chainID, iteration: 0, chainKey: chainKey,
                signingKey: signing.publicKey, signingPrivateKey: signing.privateKey)
            try store.storeSenderKey(record, sender: sender, distributionID: distributionID)
        }
        // addState above guarantees a state.
        let state = record.newestState!
        return try SenderKeyDistributionMessage(
            distributionID: distributionID, chainID: state.chainID, iteration: state.iteration,
            chainKey: state.chainKey.seed, signingKey: state.signingKey)
    }

    /// ``createDistributionMessage(sender:distributionID:store:using:)`` with the system's
    /// secure generator.
    ///
    /// - Parameters:
    ///   - sender: Our own address.
    ///   - distributionID: The distribution id.
    ///   - store: The sender-key store.
    /// - Returns: The message to send to every member over 1:1 sessions.
    /// - Throws: Errors of the store.
    public static func createDistributionMessage(
        sender: ProtocolAddress, distributionID: UUID, store: inout some SenderKeyStore
    ) throws -> SenderKeyDistributionMessage {
        var generator = SystemRandomNumberGenerator()
        return try createDistributionMessage(
            sender: sender, distributionID: distributionID, store: &store, using: &generator)
    }

    /// Records a member's chain from its distribution message as the newest state of its
    /// record. A state with the same chain id and signing key is kept (with its progress);
    /// one with the same chain id and another signing key is replaced; beyond
    /// ``SenderKeyRecord/maxStates`` states the oldest is dropped.
    ///
    /// - Parameters:
    ///   - message: The received distribution message.
    ///   - sender: The member's address.
    ///   - store: The sender-key store.
    /// - Throws: Errors of the store.
    public static func processDistributionMessage(
        _ message: SenderKeyDistributionMessage, sender: ProtocolAddress, store: inout some SenderKeyStore
    ) throws {
        var record =
            try store.loadSenderKey(sender: sender, distributionID: message.distributionID) ?? SenderKeyRecord()
        record.addState(
            messageVersion: message.messageVersion, chainID: message.chainID, iteration: message.iteration,
            chainKey: message.chainKey, signingKey: message.signingKey, signingPrivateKey: nil)
        try store.storeSenderKey(record, sender: sender, distributionID: message.distributionID)
    }

    /// Encrypts `plaintext` for the group with our newest chain, signs it and advances the
    /// chain.
    ///
    /// - Parameters:
    ///   - plaintext: The message body.
    ///   - sender: Our own address.
    ///   - distributionID: The distribution id.
    ///   - store: The sender-key store.
    ///   - generator: The source of the signature's randomness; it must be cryptographically
    ///     secure outside tests.
    /// - Returns: The message to send to the group.
    /// - Throws: ``SignalError/noSenderKeyState`` when we have no chain in this
    ///   distribution; ``SignalError/invalidSessionState`` when the newest chain is not ours
    ///   (no private signing key) or is exhausted; errors of the store.
    public static func encrypt(
        _ plaintext: [UInt8],
        sender: ProtocolAddress,
        distributionID: UUID,
        store: inout some SenderKeyStore,
        using generator: inout some RandomNumberGenerator
    ) throws -> SenderKeyMessage {
        guard var record = try store.loadSenderKey(sender: sender, distributionID: distributionID),
            var state = record.newestState
        else {
            throw SignalError(.noSenderKeyState)
        }
        guard let signingKey = state.signingPrivateKey else {
            throw SignalError(.invalidSessionState, "the newest sender key state has no signing private key")
        }
        let messageKey = try state.nextSendingKey()
        let ciphertext = try messageKey.encrypt(plaintext)
        let message = SenderKeyMessage(
            distributionID: distributionID, chainID: state.chainID, iteration: messageKey.iteration,
            ciphertext: ciphertext, signingKey: signingKey, using: &generator)
        record.states[0] = state
        try store.storeSenderKey(record, sender: sender, distributionID: distributionID)
        return message
    }

    /// ``encrypt(_:sender:distributionID:store:using:)`` with the system's secure generator.
    ///
    /// - Parameters:
    ///   - plaintext: The message body.
    ///   - sender: Our own address.
    ///   - distributionID: The distribution id.
    ///   - store: The sender-key store.
    /// - Returns: The message to send to the group.
    /// - Throws: As ``encrypt(_:sender:distributionID:store:using:)``.
    public static func encrypt(
        _ plaintext: [UInt8], sender: ProtocolAddress, distributionID: UUID, store: inout some SenderKeyStore
    ) throws -> SenderKeyMessage {
        var generator = SystemRandomNumberGenerator()
        return try encrypt(plaintext, sender: sender, distributionID: distributionID, store: &store, using: &generator)
    }

    /// Decrypts a group message from `sender`.
    ///
    /// - Parameters:
    ///   - serialized: The ``SenderKeyMessage`` bytes.
    ///   - sender: The member that sent it.
    ///   - store: The sender-key store.
    /// - Returns: The plaintext.
    /// - Throws: As ``decrypt(_:sender:store:)-(SenderKeyMessage,_,_)``, plus any error of
    ///   ``SenderKeyMessage/init(serialized:)``.
    public static func decrypt(
        _ serialized: some Collection<UInt8>, sender: ProtocolAddress, store: inout some SenderKeyStore
    ) throws -> [UInt8] {
        try decrypt(try SenderKeyMessage(serialized: serialized), sender: sender, store: &store)
    }

    /// Decrypts a parsed group message from `sender`.
    ///
    /// - Parameters:
    ///   - message: The parsed message.
    ///   - sender: The member that sent it.
    ///   - store: The sender-key store.
    /// - Returns: The plaintext.
    /// - Throws: ``SignalError/noSenderKeyState`` when no state has the message's chain id;
    ///   ``SignalError/unrecognizedVersion`` when the message version differs from the
    ///   chain's; ``SignalError/invalidSignature`` when the signature does not verify;
    ///   ``SignalError/duplicateMessage`` for an old iteration whose key was used or
    ///   dropped; ``SignalError/tooFarIntoFuture`` for a jump of more than
    ///   ``SenderKeyState/maxForwardJumps``; ``SignalError/authenticationFailed`` when the
    ///   ciphertext does not decrypt (bad length or padding); errors of the store.
    public static func decrypt(
        _ message: SenderKeyMessage, sender: ProtocolAddress, store: inout some SenderKeyStore
    ) throws -> [UInt8] {
        guard var record = try store.loadSenderKey(sender: sender, distributionID: message.distributionID),
            let index = record.stateIndex(forChainID: message.chainID)
        else {
            throw SignalError(.noSenderKeyState)
        }
        var state = record.states[index]
        guard message.messageVersion == state.messageVersion else {
            throw SignalError(.unrecognizedVersion, "sender key message version differs from the chain's")
        }
        guard message.verifySignature(state.signingKey) else { throw SignalError(.invalidSignature) }
        let messageKey = try state.receivingKey(for: message.iteration)
        let plaintext = try messageKey.decrypt(message.ciphertext)
        record.states[index] = state
        try store.storeSenderKey(record, sender: sender, distributionID: message.distributionID)
        return plaintext
    }
}
