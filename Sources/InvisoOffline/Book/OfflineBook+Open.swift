import Crypto
import InvisoCrypto
import InvisoSignal

extension OfflineBook {
    /// What opening an envelope did.
    public enum Opened: Sendable {
        /// An invite: the contact was added (`added`) or, already known with the same
        /// identity, given a fresh session from the new keys.
        case invite(OfflineContact, added: Bool)
        /// A message (or one that came with the sender's rotated keys), for the history.
        /// `added`: the sender was not a contact and was added under the given name.
        case message(OfflineMessage, from: OfflineContact, added: Bool)
    }

    /// Opens an envelope: adds the contact of an invite, or decrypts a message.
    ///
    /// - Parameters:
    ///   - envelope: What was pasted.
    ///   - name: The name for a sender who is not a contact yet (needed for an invite, and
    ///     for a first message from someone who has our invite).
    ///   - now: Milliseconds since 1970 (rotation, history).
    ///   - generator: Randomness for new sessions and ids.
    /// - Throws: ``OfflineError/Code/notAnEnvelope``, ``OfflineError/Code/ownMessage``,
    ///   ``OfflineError/Code/nameNeeded``, ``OfflineError/Code/contactExists``,
    ///   ``OfflineError/Code/unknownSender``, ``OfflineError/Code/invalidKeys``,
    ///   ``OfflineError/Code/identityChanged`` (the new key is kept as pending),
    ///   ``OfflineError/Code/alreadyRead``, ``OfflineError/Code/notForUs``,
    ///   ``OfflineError/Code/malformedEnvelope``. On any error the book is unchanged but
    ///   for a pending identity.
    public mutating func open(
        _ envelope: OfflineEnvelope, as name: String? = nil, now: Int64, using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> Opened {
        guard envelope.kind != .notOurs else { throw OfflineError(.notAnEnvelope, "no keys and no ciphertext") }
        guard !Self.sameAddress(envelope.address, account.address) else {
            throw OfflineError(.ownMessage, "our own address")
        }
        var next = self
        var pending: (contact: String, key: IdentityKey)?
        do {
            try next.rotate(now: now, using: &generator)
            let opened = try next.apply(envelope, name: name, now: now, pending: &pending, using: &generator)
            self = next
            return opened
        } catch {
            if error.code == .identityChanged, let pending, let index = contacts.firstIndex(where: { $0.id == pending.contact }) {
                contacts[index].pendingIdentityKey = pending.key
            }
            throw error
        }
    }

    private mutating func apply(
        _ envelope: OfflineEnvelope, name: String?, now: Int64, pending: inout (contact: String, key: IdentityKey)?,
        using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> Opened {
        // SecureChats forces device ids into 1…127; anything else is its default, 1.
        let deviceID = (1...127).contains(envelope.deviceID) ? UInt32(envelope.deviceID) : 1
        let bundle = try envelope.preKeyResponse.map { response throws(OfflineError) in
            try Self.bundle(from: response, deviceID: deviceID)
        }
        var index = contactIndex(address: envelope.address, deviceID: deviceID)
        var added = false

        if let index, let bundle, contacts[index].identityKey != bundle.identityKey {
            // Remembered for `trust` only when the new key signed the keys it came with.
            guard bundle.identityKey.publicKey.verifySignature(bundle.signedPreKeySignature, for: bundle.signedPreKey.serialized)
            else { throw OfflineError(.invalidKeys, "signed pre-key") }
            pending = (contacts[index].id, bundle.identityKey)
            throw OfflineError(.identityChanged, "new keys")
        }
        if envelope.kind == .invite {
            if index == nil {
                index = try addContact(
                    name: name, address: envelope.address, deviceID: deviceID, identity: bundle!.identityKey, now: now,
                    using: &generator)
                added = true
            }
            try process(bundle!, for: contacts[index!].protocolAddress, using: &generator)
            contacts[index!].registrationID = bundle!.registrationID
            return .invite(contacts[index!], added: added)
        }

        // A message or a rotation.
        guard let ciphertext = envelope.ciphertext,
            let type = CiphertextMessageType(rawValue: UInt8(clamping: max(0, envelope.ciphertextType))),
            type == .whisper || type == .preKey
        else {
            throw OfflineError(.malformedEnvelope, "ciphertextType")
        }
        var preKeyMessage: PreKeySignalMessage?
        if type == .preKey {
            preKeyMessage = try authenticPreKeyMessage(ciphertext)
            if let index, let known = contacts[index].registrationID, known != preKeyMessage!.registrationID {
                throw OfflineError(.notForUs, "registration id")
            }
        }
        if index == nil {
            // Someone who has our invite (or sends their keys along) writes first.
            guard let identity = bundle?.identityKey ?? preKeyMessage?.identityKey else {
                throw OfflineError(.unknownSender, "message")
            }
            guard name != nil else { throw OfflineError(.unknownSender, "message from someone new") }
            index = try addContact(name: name, address: envelope.address, deviceID: deviceID, identity: identity, now: now, using: &generator)
            added = true
        }
        let contact = contacts[index!]
        if let bundle { try process(bundle, for: contact.protocolAddress, using: &generator) }
        let plaintext: [UInt8]
        do {
            plaintext = try SessionCipher.decrypt(
                type: type, body: ciphertext, from: contact.protocolAddress, store: &self, using: &generator)
        } catch let error as SignalError {
            switch error.code {
            case .duplicateMessage: throw OfflineError(.alreadyRead, "message")
            case .untrustedIdentity:
                if let key = preKeyMessage?.identityKey { pending = (contact.id, key) }
                throw OfflineError(.identityChanged, "message")
            default: throw OfflineError(.notForUs, "decrypt")
            }
        } catch let error as OfflineError {
            throw error
        } catch {
            throw OfflineError(.notForUs, "decrypt")
        }
        if let preKeyMessage, contacts[index!].registrationID == nil {
            contacts[index!].registrationID = preKeyMessage.registrationID
        }
        if let signedPreKeyID = preKeyMessage?.signedPreKeyID {
            // They built the session on our generation of that number: they have those keys.
            contacts[index!].knownGeneration = max(contacts[index!].knownGeneration, signedPreKeyID)
        }
        let message = OfflineMessage(
            id: Self.messageID(ciphertext, type: envelope.ciphertextType), contactID: contact.id, direction: .received, kind: envelope.kind,
            text: String(decoding: plaintext, as: UTF8.self), sentAt: envelope.timestamp, storedAt: now,
            expiresAt: contact.expiry(storedAt: now))
        return .message(message, from: contacts[index!], added: added)
    }

    /// A pre-key message whose every byte is authentic, or an error.
    ///
    /// libsignal authenticates only the inner message: its version byte's low nibble, and
    /// (when a session with the sender exists) its pre-key ids, base key and Kyber
    /// ciphertext, could be altered and the message still read. Here the version byte must
    /// be one libsignal writes, and the header must set up a session that decrypts the
    /// inner message (``SessionCipher/headerAuthenticates(_:store:)``). When the signed
    /// pre-key it names was rotated away that cannot be checked, and libsignal's rule
    /// stands (only an existing session can read it); a signed pre-key id we never issued
    /// is refused.
    private func authenticPreKeyMessage(_ ciphertext: [UInt8]) throws(OfflineError) -> PreKeySignalMessage {
        let refused = OfflineError(.notForUs, "pre-key message")
        guard let first = ciphertext.first, (3...4).contains(first & 0x0F) else { throw refused }
        let message: PreKeySignalMessage
        let authentic: Bool?
        do {
            message = try PreKeySignalMessage(serialized: ciphertext)
            authentic = try SessionCipher.headerAuthenticates(message, store: self)
        } catch {
            throw refused
        }
        switch authentic {
        case true?: return message
        case false?: throw refused
        case nil:
            let oldest = account.generations.first?.number ?? 1
            guard (1..<oldest).contains(message.signedPreKeyID) else { throw refused }
            return message
        }
    }

    /// Adds a contact; returns its index.
    private mutating func addContact(
        name: String?, address: String, deviceID: UInt32, identity: IdentityKey, now: Int64,
        using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> Int {
        guard let name else { throw OfflineError(.nameNeeded, "new contact") }
        let valid = try Self.validName(name)
        guard contact(named: valid) == nil else { throw OfflineError(.contactExists, "name") }
        contacts.append(
            OfflineContact(
                id: Self.randomID(using: &generator), name: valid, address: address, deviceID: deviceID,
                registrationID: nil, identityKey: identity, verified: false, pendingIdentityKey: nil, lifetime: nil, createdAt: now,
                knownGeneration: account.current.number, session: SessionRecord()))
        return contacts.count - 1
    }

    /// Starts a session from a contact's published keys.
    private mutating func process(
        _ bundle: PreKeyBundle, for address: ProtocolAddress, using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) {
        do {
            try SessionBuilder.process(bundle, for: address, store: &self, using: &generator)
        } catch let error as SignalError {
            if error.code == .untrustedIdentity { throw OfflineError(.identityChanged, "keys") }
            throw OfflineError(.invalidKeys, "pre-key bundle")
        } catch {
            throw OfflineError(.invalidKeys, "pre-key bundle")
        }
    }

    /// A libsignal bundle from an envelope's keys: the device `deviceID` (or the first),
    /// with the Kyber pre-key when all three Kyber fields are there.
    ///
    /// - Throws: ``OfflineError/Code/invalidKeys`` for a missing device, malformed keys or
    ///   ids, or only some of the Kyber fields. (Signatures are checked when the session
    ///   is built.)
    static func bundle(from response: OfflineEnvelope.PreKeyResponse, deviceID: UInt32) throws(OfflineError) -> PreKeyBundle {
        let invalid = OfflineError(.invalidKeys, "pre-key bundle")
        guard let device = response.devices.first(where: { $0.deviceID == Int(deviceID) }) ?? response.devices.first,
            let registrationID = UInt32(exactly: device.registrationID),
            let signedID = UInt32(exactly: device.signedPreKey.keyID)
        else { throw invalid }
        do {
            let identity = try IdentityKey(serialized: response.identityKey)
            let signedPreKey = try ECPublicKey(serialized: device.signedPreKey.publicKey)
            var preKey: (id: UInt32, publicKey: ECPublicKey)?
            if let key = device.preKey {
                guard let id = UInt32(exactly: key.keyID) else { throw invalid }
                preKey = (id, try ECPublicKey(serialized: key.publicKey))
            }
            var kyber: (id: UInt32, publicKey: KyberPublicKey, signature: [UInt8])?
            switch (response.kyberPreKeyID, response.kyberPublicKey, response.kyberSignature) {
            case (nil, nil, nil): kyber = nil
            case (let id?, let key?, let signature?):
                guard let id = UInt32(exactly: id) else { throw invalid }
                kyber = (id, try KyberPublicKey(serialized: key), signature)
            default: throw invalid
            }
            return PreKeyBundle(
                registrationID: registrationID, deviceID: deviceID, preKey: preKey, signedPreKeyID: signedID,
                signedPreKey: signedPreKey, signedPreKeySignature: device.signedPreKey.signature, identityKey: identity,
                kyberPreKey: kyber)
        } catch {
            throw invalid
        }
    }

    /// A message's id, the same on both sides and unique per message: for an ordinary
    /// message its 8-byte MAC (its last 8 bytes, a MAC over a unique message under a unique
    /// key), for a pre-key message the first 8 bytes of SHA-256 over it (its tail may be
    /// small, repeated fields); in hex. No draw from the generator.
    static func messageID(_ ciphertext: [UInt8], type: Int) -> String {
        if type == CiphertextMessageType.whisper.rawValue, ciphertext.count >= 8 {
            return Hex.encode(Array(ciphertext.suffix(8)))
        }
        return Hex.encode(Array(SHA256.hash(data: ciphertext).prefix(8)))
    }

    /// A random 64-bit id in hex (16 characters, one draw from the generator): ids name
    /// rows of one store, where 2^32 contacts would be needed for an even chance of a clash.
    static func randomID(using generator: inout some RandomNumberGenerator) -> String {
        let value = generator.next()
        return Hex.encode((0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }
}
