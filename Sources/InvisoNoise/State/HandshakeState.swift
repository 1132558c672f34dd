public import Crypto
import InvisoCrypto

/// A Noise `HandshakeState` (rev 34 §5.3) as a value-type state machine.
///
/// Call ``writeMessage(_:)`` and ``readMessage(_:)`` alternately, starting with the
/// initiator. Each call either completes and moves the state forward, or throws and leaves
/// the state exactly as it was, so a forged or corrupted message costs nothing and the
/// genuine one can still be read. When ``isComplete`` turns true, ``transport()`` returns
/// the two `Split()` cipher states and ``handshakeHash`` is the channel-binding value.
public struct HandshakeState: Sendable {
    /// The protocol being run.
    public let noiseProtocol: NoiseProtocol
    /// This party's role.
    public let role: NoiseRole
    /// The prologue both parties must agree on.
    public let prologue: [UInt8]

    private var symmetric: SymmetricState
    private var localStatic: NoiseKeyPair?
    private var localEphemeral: NoiseKeyPair?
    private var remoteStaticKey: [UInt8]?
    private var remoteEphemeralKey: [UInt8]?
    private let preSharedKeys: [SymmetricKey]
    private var preSharedKeyIndex = 0
    private var messageIndex = 0
    private var splitStates: (CipherState, CipherState)?
    private let ephemeralGenerator: @Sendable () -> NoiseKeyPair

    /// Creates and initialises a handshake (`Initialize()`, rev 34 §5.3).
    ///
    /// - Parameters:
    ///   - noiseProtocol: the parsed protocol name.
    ///   - role: initiator or responder.
    ///   - prologue: bytes both sides mix into `h` before the first message.
    ///   - localStatic: this party's static key pair, if the pattern uses one (ignored otherwise).
    ///   - localEphemeral: a fixed ephemeral key pair (test vectors, or the pre-message
    ///     ephemeral of a fallback responder); normally `nil`, and one is generated on demand.
    ///   - remoteStatic: the peer's static public key when the pattern pre-shares it.
    ///   - remoteEphemeral: the peer's ephemeral public key when the pattern pre-shares it (`fallback`).
    ///   - preSharedKeys: 32-byte keys, one per `psk` token, in token order.
    ///   - ephemeralGenerator: where fresh ephemeral key pairs come from (inject for determinism).
    /// - Throws: ``NoiseError/missingKey``, ``NoiseError/unexpectedKey``,
    ///   ``NoiseError/invalidKey``, ``NoiseError/invalidPreSharedKey``.
    public init(
        _ noiseProtocol: NoiseProtocol,
        role: NoiseRole,
        prologue: [UInt8] = [],
        localStatic: NoiseKeyPair? = nil,
        localEphemeral: NoiseKeyPair? = nil,
        remoteStatic: [UInt8]? = nil,
        remoteEphemeral: [UInt8]? = nil,
        preSharedKeys: [SymmetricKey] = [],
        ephemeralGenerator: @escaping @Sendable () -> NoiseKeyPair = NoiseKeyPair.generate
    ) throws(NoiseError) {
        let pattern = noiseProtocol.pattern
        let dhLength = noiseProtocol.dh.publicKeyLength
        guard preSharedKeys.count == pattern.preSharedKeyCount, preSharedKeys.allSatisfy({ $0.bitCount == 256 }) else {
            throw NoiseError(.invalidPreSharedKey, "the pattern takes \(pattern.preSharedKeyCount) keys of 32 bytes")
        }
        if pattern.needsLocalStatic(role), localStatic == nil {
            throw NoiseError(.missingKey, "local static key")
        }
        if pattern.preMessage(of: role).contains(.e), localEphemeral == nil {
            throw NoiseError(.missingKey, "local pre-message ephemeral key")
        }
        let remotePre = pattern.preMessage(of: role.peer)
        for (token, key) in [(NoiseToken.s, remoteStatic), (.e, remoteEphemeral)] {
            switch (remotePre.contains(token), key) {
            case (true, nil): throw NoiseError(.missingKey, "remote pre-message key \(token)")
            case (false, .some): throw NoiseError(.unexpectedKey, "remote key \(token) is not pre-shared in this pattern")
            case (true, .some(let bytes)) where bytes.count != dhLength: throw NoiseError(.invalidKey, "remote key \(token)")
            default: break
            }
        }

        self.noiseProtocol = noiseProtocol
        self.role = role
        self.prologue = prologue
        self.localStatic = localStatic
        self.localEphemeral = localEphemeral
        self.remoteStaticKey = remoteStatic
        self.remoteEphemeralKey = remoteEphemeral
        self.preSharedKeys = preSharedKeys
        self.ephemeralGenerator = ephemeralGenerator
        self.symmetric = SymmetricState(protocolName: noiseProtocol.name, cipher: noiseProtocol.cipher, hash: noiseProtocol.hash)
        symmetric.mixHash(prologue)
        for preRole in [NoiseRole.initiator, .responder] {
            for token in pattern.preMessage(of: preRole) {
                let key = (token == .e ? ephemeralPublicKey(of: preRole) : staticPublicKey(of: preRole))!
                symmetric.mixHash(key)
                if token == .e && pattern.isPSKHandshake { symmetric.mixKey(key) }
            }
        }
    }

    /// Convenience: parses `protocolName` and creates the state (see the main initialiser).
    public init(
        protocolName: String,
        role: NoiseRole,
        prologue: [UInt8] = [],
        localStatic: NoiseKeyPair? = nil,
        remoteStatic: [UInt8]? = nil,
        preSharedKeys: [SymmetricKey] = []
    ) throws(NoiseError) {
        try self.init(try NoiseProtocol(protocolName), role: role, prologue: prologue, localStatic: localStatic,
                      remoteStatic: remoteStatic, preSharedKeys: preSharedKeys)
    }

    // MARK: Observers

    /// Whether every handshake message has been written or read.
    public var isComplete: Bool { splitStates != nil }

    /// Whether the next call should be ``writeMessage(_:)`` (otherwise ``readMessage(_:)``).
    public var isWriteTurn: Bool { !isComplete && (messageIndex % 2 == 0) == (role == .initiator) }

    /// The handshake hash `h`; after completion, the channel-binding value (rev 34 §11.2).
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// The peer's static public key, once known (pre-shared or received).
    public var remoteStaticPublicKey: [UInt8]? { remoteStaticKey }

    /// The peer's ephemeral public key, once known.
    public var remoteEphemeralPublicKey: [UInt8]? { remoteEphemeralKey }

    /// This party's ephemeral public key, once generated.
    public var localEphemeralPublicKey: [UInt8]? { localEphemeral?.publicKey }

    /// The index of the next handshake message.
    public var nextMessageIndex: Int { messageIndex }

    // MARK: Messages

    /// `WriteMessage(payload)`: produces the next handshake message carrying `payload`.
    /// - Throws: ``NoiseError/outOfTurn``, ``NoiseError/handshakeAlreadyComplete``,
    ///   ``NoiseError/messageTooLarge`` (the whole message would exceed 65,535 bytes),
    ///   ``NoiseError/lowOrderPublicKey``. The state is unchanged on error.
    public mutating func writeMessage(_ payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard !isComplete else { throw .handshakeAlreadyComplete }
        guard isWriteTurn else { throw .outOfTurn }
        var next = self
        var message: [UInt8] = []
        for token in noiseProtocol.pattern.messages[messageIndex] {
            try next.write(token, into: &message)
        }
        message += try next.symmetric.encryptAndHash(payload)
        guard message.count <= CipherState.maximumMessageLength else { throw .messageTooLarge }
        next.advance()
        self = next
        return message
    }

    /// `ReadMessage(message)`: consumes the peer's next handshake message and returns its payload.
    /// - Throws: ``NoiseError/outOfTurn``, ``NoiseError/handshakeAlreadyComplete``,
    ///   ``NoiseError/messageTooLarge``, ``NoiseError/malformedMessage`` (too short),
    ///   ``NoiseError/authenticationFailed``, ``NoiseError/lowOrderPublicKey``. The state
    ///   is unchanged on error.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard !isComplete else { throw .handshakeAlreadyComplete }
        guard !isWriteTurn else { throw .outOfTurn }
        guard message.count <= CipherState.maximumMessageLength else { throw .messageTooLarge }
        var next = self
        var cursor = message[...]
        for token in noiseProtocol.pattern.messages[messageIndex] {
            try next.read(token, from: &cursor)
        }
        let payload = try next.symmetric.decryptAndHash(cursor)
        next.advance()
        self = next
        return payload
    }

    /// The transport state from `Split()`.
    /// - Throws: ``NoiseError/handshakeNotComplete`` before the last handshake message.
    public func transport() throws(NoiseError) -> NoiseTransport {
        guard let (first, second) = splitStates else { throw .handshakeNotComplete }
        let oneWay = noiseProtocol.pattern.isOneWay
        let (send, receive) = role == .initiator ? (first, second) : (second, first)
        return NoiseTransport(
            sender: oneWay && role == .responder ? nil : send,
            receiver: oneWay && role == .initiator ? nil : receive,
            handshakeHash: handshakeHash,
            remoteStaticPublicKey: remoteStaticKey)
    }

    // MARK: Tokens

    private mutating func write(_ token: NoiseToken, into message: inout [UInt8]) throws(NoiseError) {
        switch token {
        case .e:
            let pair = localEphemeral ?? ephemeralGenerator()
            localEphemeral = pair
            message += pair.publicKey
            symmetric.mixHash(pair.publicKey)
            if noiseProtocol.pattern.isPSKHandshake { symmetric.mixKey(pair.publicKey) }
        case .s:
            guard let localStatic else { throw NoiseError(.missingKey, "local static key") }
            message += try symmetric.encryptAndHash(localStatic.publicKey)
        case .ee, .es, .se, .ss:
            try mixDH(token)
        case .psk:
            mixNextPreSharedKey()
        }
    }

    private mutating func read(_ token: NoiseToken, from cursor: inout ArraySlice<UInt8>) throws(NoiseError) {
        let dhLength = noiseProtocol.dh.publicKeyLength
        switch token {
        case .e:
            guard cursor.count >= dhLength else { throw .malformedMessage }
            let key = Array(cursor.prefix(dhLength))
            cursor = cursor.dropFirst(dhLength)
            remoteEphemeralKey = key
            symmetric.mixHash(key)
            if noiseProtocol.pattern.isPSKHandshake { symmetric.mixKey(key) }
        case .s:
            let length = dhLength + (symmetric.cipherState.hasKey ? NoiseCipher.tagLength : 0)
            guard cursor.count >= length else { throw .malformedMessage }
            remoteStaticKey = try symmetric.decryptAndHash(cursor.prefix(length))
            cursor = cursor.dropFirst(length)
        case .ee, .es, .se, .ss:
            try mixDH(token)
        case .psk:
            mixNextPreSharedKey()
        }
    }

    /// Performs the DH a token names (initiator's key first) and mixes it into the chaining key.
    private mutating func mixDH(_ token: NoiseToken) throws(NoiseError) {
        let initiator = role == .initiator
        let (localIsEphemeral, remoteIsEphemeral): (Bool, Bool) = switch token {
        case .ee: (true, true)
        case .ss: (false, false)
        case .es: initiator ? (true, false) : (false, true)
        default: initiator ? (false, true) : (true, false)  // .se
        }
        guard let local = localIsEphemeral ? localEphemeral : localStatic else {
            throw NoiseError(.missingKey, "local key for \(token)")
        }
        guard let remote = remoteIsEphemeral ? remoteEphemeralKey : remoteStaticKey else {
            throw NoiseError(.missingKey, "remote key for \(token)")
        }
        let secret: SecretBytes
        do {
            secret = try X25519.sharedSecret(local.privateKey, with: remote)
        } catch {
            throw error == .allZeroSharedSecret ? .lowOrderPublicKey : .invalidKey
        }
        secret.withUnsafeBytes { symmetric.mixKey($0) }
    }

    private mutating func mixNextPreSharedKey() {
        symmetric.mixKeyAndHash(preSharedKeys[preSharedKeyIndex])
        preSharedKeyIndex += 1
    }

    private mutating func advance() {
        messageIndex += 1
        if messageIndex == noiseProtocol.pattern.messages.count {
            splitStates = symmetric.split()
        }
    }

    private func ephemeralPublicKey(of owner: NoiseRole) -> [UInt8]? {
        owner == role ? localEphemeral?.publicKey : remoteEphemeralKey
    }

    private func staticPublicKey(of owner: NoiseRole) -> [UInt8]? {
        owner == role ? localStatic?.publicKey : remoteStaticKey
    }
}

// MARK: - Fallback (Noise Pipes, rev 34 §10)

extension HandshakeState {
    /// Derives the fallback handshake after a failed first message (Noise Pipes).
    ///
    /// - For the party that *wrote* the failed first message (Alice): returns the
    ///   responder of `fallbackProtocol`, keeping her static key and reusing her ephemeral
    ///   key as the pre-message.
    /// - For the party that *failed to read* it (Bob): pass the received bytes as
    ///   `firstMessage`; returns the initiator of `fallbackProtocol` with Alice's ephemeral
    ///   (the message's first 32 bytes) as the pre-shared remote ephemeral.
    ///
    /// - Parameters:
    ///   - fallbackProtocol: defaults to `XXfallback` with this state's DH, cipher and hash.
    ///   - firstMessage: Bob's copy of Alice's failed first message.
    ///   - preSharedKeys: keys for a `fallback+pskN` pattern.
    /// - Throws: ``NoiseError/fallbackNotPossible`` if this state is not at that point, or
    ///   the fallback pattern does not take exactly the initiator's ephemeral as pre-message.
    public func fallback(
        to fallbackProtocol: NoiseProtocol? = nil,
        firstMessage: [UInt8]? = nil,
        preSharedKeys: [SymmetricKey] = []
    ) throws(NoiseError) -> HandshakeState {
        let target: NoiseProtocol
        if let fallbackProtocol {
            target = fallbackProtocol
        } else {
            target = try NoiseProtocol(
                "Noise_XXfallback_\(noiseProtocol.dh.rawValue)_\(noiseProtocol.cipher.rawValue)_\(noiseProtocol.hash.rawValue)")
        }
        guard target.pattern.responderPreMessage == [.e], target.pattern.initiatorPreMessage.isEmpty else {
            throw NoiseError(.fallbackNotPossible, "the fallback pattern must pre-share only Alice's ephemeral key")
        }
        switch role {
        case .initiator:
            guard messageIndex == 1, let localEphemeral else {
                throw NoiseError(.fallbackNotPossible, "Alice falls back after writing the first message")
            }
            return try HandshakeState(target, role: .responder, prologue: prologue, localStatic: localStatic,
                                      localEphemeral: localEphemeral, preSharedKeys: preSharedKeys,
                                      ephemeralGenerator: ephemeralGenerator)
        case .responder:
            let dhLength = noiseProtocol.dh.publicKeyLength
            guard messageIndex == 0, let firstMessage, firstMessage.count >= dhLength else {
                throw NoiseError(.fallbackNotPossible, "Bob falls back with the first message he failed to read")
            }
            return try HandshakeState(target, role: .initiator, prologue: prologue, localStatic: localStatic,
                                      localEphemeral: localEphemeral, remoteEphemeral: Array(firstMessage.prefix(dhLength)),
                                      preSharedKeys: preSharedKeys, ephemeralGenerator: ephemeralGenerator)
        }
    }
}

// MARK: - Redacted description

extension HandshakeState: CustomStringConvertible {
    /// Names the protocol, role and progress; never keys.
    public var description: String {
        "HandshakeState(\(noiseProtocol.name), \(role), message \(messageIndex)\(isComplete ? ", complete" : ""))"
    }
}
