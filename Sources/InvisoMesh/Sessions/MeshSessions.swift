public import InvisoNoise

/// The Noise sessions of one mesh node with its peers, as a value-type state machine:
/// `Noise_XX_25519_ChaChaPoly_SHA256` with an empty prologue and empty handshake payloads,
/// then BitChat's transport framing (a 4-byte big-endian nonce before each ciphertext and
/// a 1,024-message replay window — ``ExplicitNonceTransport``).
///
/// Handshake messages travel in `noiseHandshake` packets and transport messages in
/// `noiseEncrypted` packets; this type only produces and consumes their payload bytes.
///
/// Rules:
/// - A completed handshake is accepted only when SHA-256 of the peer's static key starts
///   with the peer ID the packets claimed; otherwise it is discarded (``MeshSessionError/identityMismatch``).
/// - Both sides may start at once: when a first message (32 bytes) arrives while our own
///   first message is unanswered, the side with the smaller peer ID stays initiator and
///   the other answers, so exactly one handshake completes.
/// - A new first message from a peer with an established session is run as a candidate
///   beside it; the established session keeps working until the candidate completes and
///   proves the same binding (a forged first message cannot tear a session down).
/// - A handshake that does not finish within ``handshakeTimeout`` is dropped on ``tick(now:)``.
/// - Every failed input leaves the state as it was.
public struct MeshSessions: Sendable {
    /// What the owner must do after an input.
    public enum Action: Sendable, Equatable {
        /// Send these handshake bytes to the peer in a `noiseHandshake` packet.
        case sendHandshake(PeerID, [UInt8])
        /// A session with the peer is established (or replaced); `noiseKey` is its
        /// authenticated static key.
        case established(PeerID, noiseKey: [UInt8])
    }

    /// The protocol name BitChat uses.
    public static let protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"
    /// How long a handshake may take, in milliseconds.
    public static let handshakeTimeout: UInt64 = 10_000
    /// The size of XX's first message (an ephemeral key).
    static let firstMessageLength = 32

    private struct Pending: Sendable {
        var handshake: HandshakeState
        var started: UInt64
    }

    private let identity: NoiseKeyPair
    private let localID: PeerID
    private let ephemeralGenerator: @Sendable () -> NoiseKeyPair
    private var established: [PeerID: ExplicitNonceTransport] = [:]
    private var pending: [PeerID: Pending] = [:]

    /// Creates the sessions of a node.
    /// - Parameters:
    ///   - identity: the node's Noise static key pair.
    ///   - ephemeralGenerator: where handshake ephemeral keys come from (inject for determinism).
    public init(identity: NoiseKeyPair, ephemeralGenerator: @escaping @Sendable () -> NoiseKeyPair = NoiseKeyPair.generate) {
        self.identity = identity
        self.localID = MeshIdentity.peerID(noiseKey: identity.publicKey)
        self.ephemeralGenerator = ephemeralGenerator
    }

    /// Whether a session with `peer` is established.
    public func isEstablished(with peer: PeerID) -> Bool { established[peer] != nil }

    /// Whether a handshake with `peer` is under way.
    public func isHandshaking(with peer: PeerID) -> Bool { pending[peer] != nil }

    /// The authenticated Noise static key of `peer`, once a session is established.
    public func noiseKey(of peer: PeerID) -> [UInt8]? { established[peer]?.remoteStaticPublicKey }

    /// The handshake hash of the session with `peer` (channel binding).
    public func handshakeHash(with peer: PeerID) -> [UInt8]? { established[peer]?.handshakeHash }

    /// Starts a handshake with `peer` as initiator, unless a session exists or one is under way.
    public mutating func initiate(with peer: PeerID, now: UInt64) -> [Action] {
        guard established[peer] == nil, pending[peer] == nil, peer != localID else { return [] }
        guard var handshake = try? newHandshake(.initiator), let first = try? handshake.writeMessage() else { return [] }
        pending[peer] = Pending(handshake: handshake, started: now)
        return [.sendHandshake(peer, first)]
    }

    /// Handles a handshake message from `peer`.
    /// - Throws: ``MeshSessionError/handshakeFailed`` or ``MeshSessionError/identityMismatch``;
    ///   the state is unchanged on error except that a handshake proven bad is dropped.
    public mutating func receiveHandshake(_ message: [UInt8], from peer: PeerID, now: UInt64) throws(MeshSessionError) -> [Action] {
        guard peer != localID else { throw .handshakeFailed }
        if message.count == Self.firstMessageLength {
            if let current = pending[peer], current.handshake.role == .initiator, current.handshake.nextMessageIndex == 1,
                localID < peer
            {
                return []  // both started: the smaller ID stays initiator; the peer answers ours
            }
            guard var responder = try? newHandshake(.responder) else { throw .handshakeFailed }
            do {
                _ = try responder.readMessage(message)
                let second = try responder.writeMessage()
                pending[peer] = Pending(handshake: responder, started: now)
                return [.sendHandshake(peer, second)]
            } catch {
                throw .handshakeFailed
            }
        }
        guard var current = pending[peer] else { throw .handshakeFailed }
        var actions: [Action] = []
        do {
            _ = try current.handshake.readMessage(message)
            if !current.handshake.isComplete {
                actions.append(.sendHandshake(peer, try current.handshake.writeMessage()))
            }
        } catch {
            throw .handshakeFailed
        }
        guard current.handshake.isComplete else {
            pending[peer] = current
            return actions
        }
        pending[peer] = nil
        guard let transport = try? current.handshake.transport(), let key = transport.remoteStaticPublicKey else {
            throw .handshakeFailed
        }
        guard MeshIdentity.peerID(noiseKey: key) == peer else { throw .identityMismatch }
        established[peer] = ExplicitNonceTransport(transport)
        actions.append(.established(peer, noiseKey: key))
        return actions
    }

    /// Encrypts a transport message for `peer`: `nonce(4) ‖ ciphertext ‖ tag`.
    /// - Throws: ``MeshSessionError/noSession``, ``MeshSessionError/tooLarge``, ``MeshSessionError/exhausted``.
    public mutating func seal(_ plaintext: [UInt8], for peer: PeerID) throws(MeshSessionError) -> [UInt8] {
        guard var transport = established[peer] else { throw .noSession }
        do {
            let sealed = try transport.seal(plaintext)
            established[peer] = transport
            return sealed
        } catch {
            throw error == .nonceExhausted ? .exhausted : .tooLarge
        }
    }

    /// Decrypts a transport message from `peer`.
    /// - Throws: ``MeshSessionError/noSession``, ``MeshSessionError/replayed``,
    ///   ``MeshSessionError/authenticationFailed``; the state is unchanged on error.
    public mutating func open(_ message: [UInt8], from peer: PeerID) throws(MeshSessionError) -> [UInt8] {
        guard var transport = established[peer] else { throw .noSession }
        do {
            let plaintext = try transport.open(message)
            established[peer] = transport
            return plaintext
        } catch {
            throw error == .replayedMessage ? .replayed : .authenticationFailed
        }
    }

    /// When the oldest handshake under way times out, for the owner's timer.
    public var nextDeadline: UInt64? { pending.values.map { $0.started &+ Self.handshakeTimeout }.min() }

    /// Drops handshakes older than ``handshakeTimeout``; returns the peers they were with.
    public mutating func tick(now: UInt64) -> [PeerID] {
        let expired = pending.filter { now >= $0.value.started &+ Self.handshakeTimeout }.map(\.key).sorted()
        for peer in expired { pending[peer] = nil }
        return expired
    }

    /// Forgets everything about `peer` (session and handshake).
    public mutating func remove(_ peer: PeerID) {
        established[peer] = nil
        pending[peer] = nil
    }

    /// ``protocolName`` parsed once: a mesh node starts a handshake with every peer it meets.
    private static let noiseProtocol = Result { () throws(NoiseError) in try NoiseProtocol(protocolName) }

    private func newHandshake(_ role: NoiseRole) throws(NoiseError) -> HandshakeState {
        try HandshakeState(
            Self.noiseProtocol.get(), role: role, localStatic: identity, ephemeralGenerator: ephemeralGenerator)
    }
}
