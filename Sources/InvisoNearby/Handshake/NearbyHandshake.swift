import Crypto
public import InvisoNoise

/// The nearby connection handshake as a value-type machine: `Noise_XX_25519_ChaChaPoly_SHA256`
/// with prologue `inviso-nearby/1`, each side's ``NearbyHello`` in its encrypted payload,
/// and each hello's signature checked against the static key Noise authenticated.
///
/// ```
///   initiator (dialer)                          responder (listener)
///   start() ──▶ msg 1: -> e ───────────────────────────▶ receive: reply msg 2
///            ◀── msg 2: <- e, ee, s, es, hello(R) ◀──────┘
///   receive: verify hello(R) over R's static key
///            reply msg 3 and established(R) ──▶ msg 3: -> s, se, hello(I)
///                                                         receive: verify hello(I)
///                                                         established(I)
/// ```
///
/// Every refusal throws and leaves the machine unusable (a connection that failed its
/// handshake is closed; nothing is retried on it). Each connection uses a fresh Noise
/// static key, signed by the long-term identity: a relay that substitutes its own keys
/// cannot sign them as the victim's identity, so it must substitute the identity too,
/// which the pinned identity, the advertised fingerprint and the safety number expose.
public struct NearbyHandshake: Sendable {
    /// The Noise protocol name.
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"
    /// The prologue both sides mix in.
    public static let prologue = Array("inviso-nearby/1".utf8)

    /// The end of the connection.
    public enum Role: Sendable, Hashable {
        /// The side that dialled.
        case initiator
        /// The side that accepted.
        case responder
    }

    /// A completed handshake.
    public struct Established: Sendable {
        /// The peer's verified hello.
        public let peer: NearbyHello
        /// The transport keys.
        public var transport: NoiseTransport
        /// The handshake hash (unique per connection).
        public let handshakeHash: [UInt8]
    }

    /// What a received message produced.
    public struct Step: Sendable {
        /// A message to send back, if any.
        public let reply: [UInt8]?
        /// The result once the handshake is complete.
        public let established: Established?
    }

    private var state: HandshakeState
    private let localHello: [UInt8]
    private var failed = false

    /// A handshake for `role` under `identity`, announcing `name` and `capabilities`.
    ///
    /// - Parameters:
    ///   - staticKey: This connection's Noise static key (fresh per connection).
    ///   - ephemeralGenerator: Where the ephemeral key comes from (inject for vectors).
    /// - Throws: ``NearbyError/Code/invalidName``.
    public init(
        role: Role, identity: NearbyIdentity, name: String, capabilities: NearbyCapabilities = .all,
        staticKey: NoiseKeyPair = .generate(),
        ephemeralGenerator: @escaping @Sendable () -> NoiseKeyPair = NoiseKeyPair.generate
    ) throws(NearbyError) {
        let hello = try NearbyHello(
            identity: identity.publicKey, signature: identity.signature(overStaticKey: staticKey.publicKey),
            capabilities: capabilities, name: name)
        do {
            state = try HandshakeState(
                NoiseProtocol(Self.protocolName), role: role == .initiator ? .initiator : .responder,
                prologue: Self.prologue, localStatic: staticKey, ephemeralGenerator: ephemeralGenerator)
        } catch {
            preconditionFailure("the nearby Noise protocol name and keys are valid")
        }
        localHello = hello.encoded()
    }

    /// The initiator's first message (`-> e`, empty payload).
    ///
    /// - Throws: ``NearbyError/Code/unexpectedMessage`` when called on the responder or twice.
    public mutating func start() throws(NearbyError) -> [UInt8] {
        guard !failed, state.role == .initiator, state.nextMessageIndex == 0 else {
            throw NearbyError(.unexpectedMessage, "handshake start")
        }
        return try write([])
    }

    /// Reads the peer's next handshake message.
    ///
    /// - Throws: ``NearbyError/Code/authenticationFailed`` when Noise refuses it,
    ///   ``NearbyError/Code/malformed``/``NearbyError/Code/unsupportedVersion``/
    ///   ``NearbyError/Code/invalidName`` for a bad hello, ``NearbyError/Code/badSignature``
    ///   when the hello's identity did not sign the static key, and
    ///   ``NearbyError/Code/unexpectedMessage`` when it is not the peer's turn.
    public mutating func receive(_ message: [UInt8]) throws(NearbyError) -> Step {
        guard !failed, !state.isComplete, !state.isWriteTurn else {
            throw NearbyError(.unexpectedMessage, "handshake message out of turn")
        }
        let payload: [UInt8]
        do {
            payload = try state.readMessage(message)
        } catch {
            failed = true
            throw NearbyError(.authenticationFailed, "handshake message")
        }
        switch (state.role, state.nextMessageIndex) {
        case (.responder, 1):
            // Message 1 carries no payload.
            guard payload.isEmpty else { return try fail(NearbyError(.malformed, "handshake message 1 payload")) }
            return Step(reply: try write(localHello), established: nil)
        case (.initiator, 2):
            let peer = try verifiedHello(payload)
            let reply = try write(localHello)
            return Step(reply: reply, established: try established(peer))
        case (.responder, 3):
            let peer = try verifiedHello(payload)
            return Step(reply: nil, established: try established(peer))
        default:
            return try fail(NearbyError(.unexpectedMessage, "handshake message out of turn"))
        }
    }

    private mutating func write(_ payload: [UInt8]) throws(NearbyError) -> [UInt8] {
        do {
            return try state.writeMessage(payload)
        } catch {
            failed = true
            throw NearbyError(.authenticationFailed, "handshake write")
        }
    }

    private mutating func verifiedHello(_ payload: [UInt8]) throws(NearbyError) -> NearbyHello {
        let hello: NearbyHello
        do {
            hello = try NearbyHello(decoding: payload)
        } catch {
            return try fail(error)
        }
        guard let staticKey = state.remoteStaticPublicKey,
            hello.identity.isValidSignature(hello.signature, overStaticKey: staticKey)
        else { return try fail(NearbyError(.badSignature, "identity signature over the static key")) }
        return hello
    }

    private mutating func established(_ peer: NearbyHello) throws(NearbyError) -> Established {
        do {
            return Established(peer: peer, transport: try state.transport(), handshakeHash: state.handshakeHash)
        } catch {
            return try fail(NearbyError(.authenticationFailed, "handshake split"))
        }
    }

    private mutating func fail<T>(_ error: NearbyError) throws(NearbyError) -> T {
        failed = true
        throw error
    }
}
