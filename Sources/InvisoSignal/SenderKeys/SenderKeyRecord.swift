package import InvisoCrypto

/// Everything we know about one sender's key in one distribution: up to ``maxStates``
/// ``SenderKeyState``s, newest first (libsignal `SenderKeyRecord`).
///
/// A sender that rotates its key sends a new distribution message; the older chains stay
/// for a while so that late messages still decrypt. Adding a sixth state drops the oldest.
///
/// Records are values: the group functions in ``GroupCipher`` work on a copy and hand it to
/// the ``SenderKeyStore`` only when they succeed. See ``serialize()`` for the stored form.
/// The description is redacted.
public struct SenderKeyRecord: Sendable {
    /// The most states a record keeps (libsignal `MAX_SENDER_KEY_STATES`).
    public static let maxStates = 5

    /// The states, newest first.
    public package(set) var states: [SenderKeyState]

    /// An empty record.
    public init() {
        self.states = []
    }

    /// Whether the record has no state.
    public var isEmpty: Bool { states.isEmpty }

    /// The newest state: the one used to send and to hand out in distribution messages.
    package var newestState: SenderKeyState? { states.first }

    /// The index of the (first) state with this chain id.
    package func stateIndex(forChainID chainID: UInt32) -> Int? {
        states.firstIndex { $0.chainID == chainID }
    }

    /// Adds a chain as the newest state, with libsignal's rules: a state with the same
    /// chain id and the same signing key is kept as it is (with its progress) and moved to
    /// the front; states with the same chain id but another signing key are dropped; the
    /// oldest states are dropped to keep at most ``maxStates``.
    package mutating func addState(
        messageVersion: UInt8,
        chainID: UInt32,
        iteration: UInt32,
        chainKey: SecretBytes,
        signingKey: ECPublicKey,
        signingPrivateKey: ECPrivateKey?
    ) {
        let existing = states.first { $0.chainID == chainID && $0.signingKey == signingKey }
        states.removeAll { $0.chainID == chainID }
        let state =
            existing
            ?? SenderKeyState(
                messageVersion: messageVersion, chainID: chainID,
                chainKey: SenderChainKey(iteration: iteration, seed: chainKey), signingKey: signingKey,
                signingPrivateKey: signingPrivateKey)
        if states.count >= Self.maxStates { states.removeLast(states.count - Self.maxStates + 1) }
        states.insert(state, at: 0)
    }
}

// MARK: - Equatable

extension SenderKeyRecord: Equatable {
    /// Two records are equal when their serialized forms are (compared in constant time).
    public static func == (lhs: SenderKeyRecord, rhs: SenderKeyRecord) -> Bool {
        lhs.serialize() == rhs.serialize()
    }
}

// MARK: - Redacted descriptions

extension SenderKeyRecord: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The chain ids and iterations; keys are redacted.
    public var description: String {
        "SenderKeyRecord(\(states.map(\.description).joined(separator: ", ")))"
    }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror whose children are the (redacted) states.
    public var customMirror: Mirror { Mirror(self, children: ["states": states], displayStyle: .struct) }
}
