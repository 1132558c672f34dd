import Foundation
import InvisoCrypto

extension SessionState {
    /// Encrypts one message with the sending chain and advances it.
    ///
    /// Returns a ``PreKeySignalMessage`` while the peer has not answered yet (our pending
    /// pre-key information is repeated), a ``SignalMessage`` afterwards.
    package mutating func encrypt(_ plaintext: [UInt8]) throws(SignalError) -> CiphertextMessage {
        let chainKey = senderChain.chainKey
        let (keys, nextChainKey) = chainKey.step()
        try SignalMessage.checkVersion(sessionVersion)
        let body = try MessageCrypto.encrypt(plaintext, keys: keys)
        let message = keys.withKeys { _, macKey, _ in
            body.withUnsafeBytes { body in
                SignalMessage(
                    checkedVersion: sessionVersion, macKey: macKey,
                    senderRatchetKey: senderChain.ratchetKeyPair.publicKey, counter: chainKey.index,
                    previousCounter: previousCounter, ciphertext: body,
                    senderIdentityKey: localIdentity, receiverIdentityKey: remoteIdentity)
            }
        }
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
        senderChain.chainKey = nextChainKey
        return result
    }

    /// Decrypts `message` with this state, advancing it. Transactional: everything that
    /// can fail (the DH ratchet step, the key derivation, the MAC, the padding) happens
    /// before the state changes, so on any error the state is exactly as it was and
    /// callers can decrypt in place without keeping a copy.
    ///
    /// `previous_counter` is never used: like libsignal we rely only on the counter and the
    /// stored skipped keys.
    package mutating func decrypt(
        _ message: SignalMessage, using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> [UInt8] {
        guard message.messageVersion == sessionVersion else {
            throw SignalError(.invalidMessage, "message version does not match the session")
        }
        if let index = receiverChainIndex(for: message.senderRatchetKey) {
            let (keys, update) = try Self.receivingKeys(chain: receiverChains[index], counter: message.counter)
            let plaintext = try open(message, keys: keys)
            update.apply(to: &receiverChains[index])
            pendingPreKey = nil
            return plaintext
        }
        // A new ratchet key from the peer: one DH ratchet step for the receiving chain...
        let (receiverRoot, receiverChainKey) = try rootKey.createChain(
            theirRatchetKey: message.senderRatchetKey, ourRatchetKey: senderChain.ratchetKeyPair)
        var chain = ReceiverChain(ratchetKey: message.senderRatchetKey, chainKey: receiverChainKey, messageKeys: [])
        let (keys, update) = try Self.receivingKeys(chain: chain, counter: message.counter)
        let plaintext = try open(message, keys: keys)
        // ...and, once the message is authentic, one for our new sending chain.
        let ourNewRatchetKey = ECKeyPair.generate(using: &generator)
        let (senderRoot, newSenderChain) = try receiverRoot.createChain(
            theirRatchetKey: message.senderRatchetKey, ourRatchetKey: ourNewRatchetKey)
        update.apply(to: &chain)
        rootKey = senderRoot
        addReceiverChain(chain)
        let currentIndex = senderChain.chainKey.index
        previousCounter = currentIndex > 0 ? currentIndex - 1 : 0
        senderChain = SenderChain(ratchetKeyPair: ourNewRatchetKey, chainKey: newSenderChain)
        pendingPreKey = nil
        return plaintext
    }

    /// Checks the MAC, then decrypts.
    private func open(_ message: SignalMessage, keys: MessageKeys) throws(SignalError) -> [UInt8] {
        let authentic = keys.withKeys { _, macKey, _ in
            message.verifyMAC(senderIdentityKey: remoteIdentity, receiverIdentityKey: localIdentity, macKey: macKey)
        }
        guard authentic else { throw SignalError(.authenticationFailed) }
        return try MessageCrypto.decrypt(message.ciphertextBytes, keys: keys)
    }

    /// How a receiving chain changes once a message decrypts.
    private enum ChainUpdate {
        /// The message used the skipped key stored at this position.
        case consumeStored(position: Int)
        /// The chain moved past the message: keys for the skipped counters to store, and
        /// the chain key after the message.
        case advance(skipped: [StoredMessageKey], next: ChainKey)

        func apply(to chain: inout ReceiverChain) {
            switch self {
            case .consumeStored(let position):
                chain.messageKeys.remove(at: position)
            case .advance(let skipped, let next):
                if !skipped.isEmpty {
                    chain.messageKeys.append(contentsOf: skipped)
                    let overflow = chain.messageKeys.count - RatchetConstants.maxMessageKeys
                    if overflow > 0 { chain.messageKeys.removeFirst(overflow) }
                }
                chain.chainKey = next
            }
        }
    }

    /// The message keys for `counter` on `chain` — a stored skipped key for an old counter,
    /// or the chain advanced for a new one — and the change to make to the chain once the
    /// message proves authentic. Does not change anything itself.
    private static func receivingKeys(
        chain: ReceiverChain, counter: UInt32
    ) throws(SignalError) -> (MessageKeys, ChainUpdate) {
        let chainKey = chain.chainKey
        if chainKey.index > counter {
            guard let position = chain.messageKeys.firstIndex(where: { $0.index == counter }) else {
                throw SignalError(.duplicateMessage)
            }
            return (MessageKeys(seed: chain.messageKeys[position].seed, counter: counter), .consumeStored(position: position))
        }
        guard counter - chainKey.index <= RatchetConstants.maxForwardJumps else {
            throw SignalError(.tooFarIntoFuture)
        }
        var current = chainKey
        var skipped: [StoredMessageKey] = []
        if counter > chainKey.index {
            skipped.reserveCapacity(min(Int(counter - chainKey.index), RatchetConstants.maxMessageKeys))
        }
        // Only the newest 2,000 skipped keys could be kept anyway; older ones are not derived.
        let limit = UInt32(RatchetConstants.maxMessageKeys)
        let firstStored = counter > limit ? counter - limit : 0
        while current.index < counter {
            if current.index >= firstStored {
                let (seed, next) = current.advance()
                skipped.append(StoredMessageKey(index: current.index, seed: seed))
                current = next
            } else {
                current = current.next
            }
        }
        let (keys, next) = current.step()
        return (keys, .advance(skipped: skipped, next: next))
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
        // SessionState.decrypt is transactional, so states are tried in place.
        if current != nil {
            do {
                return try current!.decrypt(message, using: &generator)
            } catch {
                if error.code == .duplicateMessage { throw error }
                currentError = error
            }
        }
        for index in previous.indices {
            do {
                let plaintext = try previous[index].decrypt(message, using: &generator)
                promote(previous.remove(at: index))
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
