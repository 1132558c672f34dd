package import InvisoCrypto

/// The pre-key information an initiator repeats in every message until the responder
/// answers (libsignal's "unacknowledged pre-key message").
package struct PendingPreKey: Sendable {
    package var preKeyID: UInt32?
    package var signedPreKeyID: UInt32
    package var baseKey: ECPublicKey
    package var kyberPreKeyID: UInt32?
    package var kyberCiphertext: [UInt8]?
}

/// Our sending chain: our current ratchet key pair and chain key.
package struct SenderChain: Sendable {
    package var ratchetKeyPair: ECKeyPair
    package var chainKey: ChainKey
}

/// A skipped message key kept for late delivery: the index and its 32-byte seed.
package struct StoredMessageKey: Sendable {
    package var index: UInt32
    package var seed: SecretBytes
}

/// One receiving chain: the peer's ratchet key, the chain key, skipped keys (oldest first).
package struct ReceiverChain: Sendable {
    package var ratchetKey: ECPublicKey
    package var chainKey: ChainKey
    package var messageKeys: [StoredMessageKey]
}

/// The state of one Double Ratchet session (libsignal's `SessionState`), as a value.
///
/// Protocol code works on a copy and commits it only when an operation succeeds, so a
/// failed decryption leaves the stored state exactly as it was.
package struct SessionState: Sendable {
    package var sessionVersion: UInt8
    package var localIdentity: IdentityKey
    package var remoteIdentity: IdentityKey
    package var rootKey: RootKey
    package var previousCounter: UInt32
    package var senderChain: SenderChain
    package var receiverChains: [ReceiverChain]
    package var pendingPreKey: PendingPreKey?
    package var localRegistrationID: UInt32
    package var remoteRegistrationID: UInt32
    /// The initiator's base key, which identifies the session a pre-key message set up.
    package var aliceBaseKey: ECPublicKey?

    /// The index of the receiving chain for `ratchetKey`, if any.
    package func receiverChainIndex(for ratchetKey: ECPublicKey) -> Int? {
        receiverChains.firstIndex { $0.ratchetKey == ratchetKey }
    }

    /// Adds a receiving chain, dropping the oldest beyond libsignal's limit of five.
    package mutating func addReceiverChain(_ chain: ReceiverChain) {
        receiverChains.append(chain)
        if receiverChains.count > RatchetConstants.maxReceiverChains {
            receiverChains.removeFirst(receiverChains.count - RatchetConstants.maxReceiverChains)
        }
    }
}
