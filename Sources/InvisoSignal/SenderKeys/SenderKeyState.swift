/// One sender-key chain of one sender in one distribution, as libsignal keeps it.
///
/// It holds the chain id, the chain key and its iteration, the sender's public signing key
/// (and the private one when the chain is our own), and the message keys of iterations
/// that were skipped and may still arrive (at most ``maxMessageKeys``, oldest dropped
/// first). A message may jump at most ``maxForwardJumps`` iterations ahead of the chain.
///
/// The description is redacted.
public struct SenderKeyState: Sendable {
    /// The most skipped message keys kept (libsignal `MAX_MESSAGE_KEYS`).
    public static let maxMessageKeys = 2000
    /// The furthest a message's iteration may be ahead of the chain (libsignal
    /// `MAX_FORWARD_JUMPS`).
    public static let maxForwardJumps: UInt32 = 25_000

    /// The sender-key message version (3).
    public let messageVersion: UInt8
    /// The chain id that ``SenderKeyMessage``s name.
    public let chainID: UInt32
    /// The public key that verifies the chain's messages.
    public let signingKey: ECPublicKey
    /// The private signing key; present only for our own chains.
    package let signingPrivateKey: ECPrivateKey?
    /// The current chain key.
    package private(set) var chainKey: SenderChainKey
    /// Keys of skipped iterations, oldest first, iterations strictly increasing.
    package private(set) var messageKeys: [SenderMessageKey]

    /// Creates a state.
    package init(
        messageVersion: UInt8,
        chainID: UInt32,
        chainKey: SenderChainKey,
        signingKey: ECPublicKey,
        signingPrivateKey: ECPrivateKey?,
        messageKeys: [SenderMessageKey] = []
    ) {
        self.messageVersion = messageVersion
        self.chainID = chainID
        self.chainKey = chainKey
        self.signingKey = signingKey
        self.signingPrivateKey = signingPrivateKey
        self.messageKeys = messageKeys
    }

    /// The iteration of the current chain key: the next message to send or expect.
    public var iteration: UInt32 { chainKey.iteration }

    /// Whether this state can sign messages (it is one of our own chains).
    public var canSign: Bool { signingPrivateKey != nil }

    /// The number of stored message keys of skipped iterations.
    public var storedMessageKeyCount: Int { messageKeys.count }

    /// The key for the next message we send, advancing the chain.
    ///
    /// - Throws: ``SignalError/invalidSessionState`` when the chain is exhausted.
    package mutating func nextSendingKey() throws(SignalError) -> SenderMessageKey {
        let key = chainKey.messageKey
        chainKey = try chainKey.next()
        return key
    }

    /// The key for a received message at `iteration` (libsignal's rules): a stored key for
    /// an older iteration (removed once used), or the chain advanced to `iteration`, storing
    /// the keys of the iterations it skips.
    ///
    /// - Throws: ``SignalError/duplicateMessage`` for an older iteration whose key is gone;
    ///   ``SignalError/tooFarIntoFuture`` for a jump of more than ``maxForwardJumps``;
    ///   ``SignalError/invalidSessionState`` when the chain would pass `UInt32.max`.
    package mutating func receivingKey(for iteration: UInt32) throws(SignalError) -> SenderMessageKey {
        let current = chainKey.iteration
        if iteration < current {
            guard let index = messageKeys.firstIndex(where: { $0.iteration == iteration }) else {
                throw SignalError(.duplicateMessage, "sender key iteration \(iteration), chain at \(current)")
            }
            return messageKeys.remove(at: index)
        }
        guard iteration - current <= Self.maxForwardJumps else {
            throw SignalError(.tooFarIntoFuture, "sender key jump of \(iteration - current)")
        }
        // Only the newest maxMessageKeys skipped keys survive, so older ones are not stored.
        let skipped = Int(iteration - current)
        let firstKept = skipped > Self.maxMessageKeys ? iteration - UInt32(Self.maxMessageKeys) : current
        var chain = chainKey
        var stored = messageKeys
        while chain.iteration < iteration {
            if chain.iteration >= firstKept { stored.append(chain.messageKey) }
            chain = try chain.next()
        }
        if stored.count > Self.maxMessageKeys { stored.removeFirst(stored.count - Self.maxMessageKeys) }
        let key = chain.messageKey
        chainKey = try chain.next()
        messageKeys = stored
        return key
    }
}

// MARK: - Redacted descriptions

extension SenderKeyState: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The chain id and iteration; keys are redacted.
    public var description: String {
        "SenderKeyState(chainID: \(chainID), iteration: \(iteration), storedMessageKeys: \(messageKeys.count), "
            + "keys: <redacted>)"
    }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror without secrets.
    public var customMirror: Mirror {
        Mirror(self, children: ["chainID": chainID, "iteration": iteration], displayStyle: .struct)
    }
}
