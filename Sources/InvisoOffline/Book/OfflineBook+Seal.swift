import InvisoSignal

extension OfflineBook {
    /// A sealed message: the envelope to encode and send, and its history entry.
    public struct Sealed: Sendable {
        /// The envelope (a message, or a rotation carrying our new keys).
        public let envelope: OfflineEnvelope
        /// The history entry.
        public let message: OfflineMessage
    }

    /// Encrypts `text` for a contact.
    ///
    /// When our pre-keys rotated since the contact last got them, the envelope carries our
    /// current keys too (a rotation, as SecureChats sends one).
    ///
    /// - Throws: ``OfflineError/Code/messageTooLong`` past 10,000 bytes,
    ///   ``OfflineError/Code/contactNotFound``, ``OfflineError/Code/identityChanged`` while
    ///   a changed key waits to be trusted, ``OfflineError/Code/noSession``. On any error
    ///   the book is unchanged.
    public mutating func seal(
        _ text: String, to name: String, now: Int64, using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> Sealed {
        let plaintext = Array(text.utf8)
        guard plaintext.count <= Self.maxPlaintextByteCount else { throw OfflineError(.messageTooLong, "plaintext") }
        var next = self
        try next.rotate(now: now, using: &generator)
        let index = try next.contactIndex(named: name)
        let contact = next.contacts[index]
        guard contact.pendingIdentityKey == nil else { throw OfflineError(.identityChanged, "pending") }
        guard contact.hasSession else { throw OfflineError(.noSession, "seal") }
        let ciphertext: CiphertextMessage
        do {
            ciphertext = try SessionCipher.encrypt(plaintext, for: contact.protocolAddress, store: &next)
        } catch let error as SignalError where error.code == .untrustedIdentity {
            throw OfflineError(.identityChanged, "seal")
        } catch {
            throw OfflineError(.noSession, "seal")
        }
        var response: OfflineEnvelope.PreKeyResponse?
        if contact.knownGeneration < next.account.current.number {
            response = next.account.preKeyResponse()
            next.contacts[index].knownGeneration = next.account.current.number
        }
        let envelope = OfflineEnvelope(
            ciphertext: ciphertext.serialized, ciphertextType: Int(ciphertext.type.rawValue),
            deviceID: Int(OfflineAccount.deviceID), preKeyResponse: response, address: next.account.address, timestamp: now)
        let message = OfflineMessage(
            id: Self.messageID(envelope.ciphertext ?? [], type: envelope.ciphertextType), contactID: contact.id, direction: .sent, kind: envelope.kind, text: text,
            sentAt: now, storedAt: now, expiresAt: contact.expiry(storedAt: now))
        self = next
        return Sealed(envelope: envelope, message: message)
    }
}
