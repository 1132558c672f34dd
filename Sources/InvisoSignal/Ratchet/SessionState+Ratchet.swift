import InvisoCrypto

extension SessionState {
    /// Encrypts one message with the sending chain and advances it.
    ///
    /// Returns a ``PreKeySignalMessage`` while the peer has not answered yet (our pending
    /// pre-key information is repeated), a ``SignalMessage`` afterwards.
    package mutating func encrypt(_ plaintext: [UInt8]) throws(SignalError) -> CiphertextMessage {
        let chainKey = senderChain.chainKey
        let keys = chainKey.messageKeys
        let body = try MessageCrypto.encrypt(plaintext, keys: keys)
        let message = try SignalMessage(
            messageVersion: sessionVersion, macKey: keys.macKey,
            senderRatchetKey: senderChain.ratchetKeyPair.publicKey, counter: chainKey.index,
            previousCounter: previousCounter, ciphertext: body,
            senderIdentityKey: localIdentity, receiverIdentityKey: remoteIdentity)
        let result: CiphertextMessage
        if let pending = pendingPreKey {
            result = .preKey(
                try PreKeySignalMessage(
                    messageVersion: sessionVersion, registrationID: localRegistrationID, preKeyID: pending.preKeyID,
                    signedPreKeyID: pending.signedPreKeyID, kyberPreKeyID: pending.kyberPreKeyID,
                    kyberCiphertext: pending.kyberCiphertext, baseKey: pending.baseKey, identityKey: localIdentity,
                    message: message))
        } else {
            result = .whisper(message)
        }
        senderChain.chainKey = chainKey.next
        return result
    }

    /// Decrypts `message` with this state, advancing it. On any error the caller must
    /// discard the mutated copy (``SessionRecord`` does).
    ///
    /// `previous_counter` is never used: like libsignal we rely only on the counter and the
    /// stored skipped keys.
    package mutating func decrypt(
        _ message: SignalMessage, using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> [UInt8] {
        guard message.messageVersion == sessionVersion else {
            throw SignalError(.invalidMessage, "message version does not match the session")
        }
        let chainIndex = try receiverChainIndex(creatingFor: message.senderRatchetKey, using: &generator)
        let keys = try messageKeys(chain: chainIndex, counter: message.counter)
        guard message.verifyMAC(senderIdentityKey: remoteIdentity, receiverIdentityKey: localIdentity, macKey: keys.macKey)
        else {
            throw SignalError(.authenticationFailed)
        }
        let plaintext = try MessageCrypto.decrypt(message.ciphertext, keys: keys)
        pendingPreKey = nil
        return plaintext
    }

    /// The receiving chain for `theirRatchetKey`; a new one (with a DH ratchet step and a
    /// fresh sending ratchet key) when the key is new.
    private mutating func receiverChainIndex(
        creatingFor theirRatchetKey: ECPublicKey, using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> Int {
        if let index = receiverChainIndex(for: theirRatchetKey) { return index }
        let (receiverRoot, receiverChain) = try rootKey.createChain(
            theirRatchetKey: theirRatchetKey, ourRatchetKey: senderChain.ratchetKeyPair)
        let ourNewRatchetKey = ECKeyPair.generate(using: &generator)
        let (senderRoot, newSenderChain) = try receiverRoot.createChain(
            theirRatchetKey: theirRatchetKey, ourRatchetKey: ourNewRatchetKey)
        rootKey = senderRoot
        addReceiverChain(ratchetKey: theirRatchetKey, chainKey: receiverChain)
        let currentIndex = senderChain.chainKey.index
        previousCounter = currentIndex > 0 ? currentIndex - 1 : 0
        senderChain = SenderChain(ratchetKeyPair: ourNewRatchetKey, chainKey: newSenderChain)
        return receiverChains.count - 1
    }

    /// The message keys for `counter` on receiving chain `chain`: a stored skipped key for
    /// an old counter, or the chain advanced (storing the skipped keys) for a new one.
    private mutating func messageKeys(chain: Int, counter: UInt32) throws(SignalError) -> MessageKeys {
        let chainKey = receiverChains[chain].chainKey
        if chainKey.index > counter {
            guard let position = receiverChains[chain].messageKeys.firstIndex(where: { $0.index == counter }) else {
                throw SignalError(.duplicateMessage)
            }
            let stored = receiverChains[chain].messageKeys.remove(at: position)
            return MessageKeys(seed: stored.seed, counter: counter)
        }
        guard counter - chainKey.index <= RatchetConstants.maxForwardJumps else {
            throw SignalError(.tooFarIntoFuture)
        }
        var current = chainKey
        var skipped: [StoredMessageKey] = []
        skipped.reserveCapacity(min(Int(counter - chainKey.index), RatchetConstants.maxMessageKeys))
        // Only the newest 2,000 skipped keys could be kept anyway; older ones are not derived.
        let limit = UInt32(RatchetConstants.maxMessageKeys)
        let firstStored = counter > limit ? counter - limit : 0
        while current.index < counter {
            if current.index >= firstStored {
                skipped.append(StoredMessageKey(index: current.index, seed: current.messageKeySeed))
            }
            current = current.next
        }
        if !skipped.isEmpty {
            receiverChains[chain].messageKeys.append(contentsOf: skipped)
            let overflow = receiverChains[chain].messageKeys.count - RatchetConstants.maxMessageKeys
            if overflow > 0 { receiverChains[chain].messageKeys.removeFirst(overflow) }
        }
        receiverChains[chain].chainKey = current.next
        return current.messageKeys
    }
}

extension SessionRecord {
    /// Decrypts with the current state, then (trial decryption) with each archived state;
    /// a state that succeeds becomes current. On failure the record is unchanged.
    package mutating func decrypt(
        _ message: SignalMessage, using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> [UInt8] {
        guard current != nil || !previous.isEmpty else { throw SignalError(.sessionNotFound) }
        var currentError: SignalError?
        if var state = current {
            do {
                let plaintext = try state.decrypt(message, using: &generator)
                current = state
                return plaintext
            } catch {
                if error.code == .duplicateMessage { throw error }
                currentError = error
            }
        }
        for index in previous.indices {
            var state = previous[index]
            do {
                let plaintext = try state.decrypt(message, using: &generator)
                previous.remove(at: index)
                promote(state)
                return plaintext
            } catch {
                if error.code == .duplicateMessage { throw error }
            }
        }
        if let currentError, currentError.code == .tooFarIntoFuture || currentError.code == .invalidMessage {
            throw currentError
        }
        throw SignalError(.authenticationFailed)
    }
}
