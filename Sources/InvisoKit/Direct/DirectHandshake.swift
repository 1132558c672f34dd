package import InvisoCrypto

/// The authentication handshake of one direct TCP connection, as a value-type state
/// machine without I/O (docs/direct.md, "Handshake").
///
/// ```
/// dialer D                                           acceptor A
/// msg1 = "IVD1" ‖ nD                        →
///                                           ←        msg2 = nA ‖ HMAC(K, L ‖ 0x02 ‖ role(A) ‖ nD ‖ nA)
/// msg3 = HMAC(K, L ‖ 0x03 ‖ role(D) ‖ nD ‖ nA) →
/// ```
///
/// `K` is the 32-byte path key, `L` the label `inviso-direct-v1`, `nD`/`nA` fresh 32-byte
/// nonces of this connection. Each side checks the MAC with the *peer's* role and the
/// *peer's* step byte, so a side's own MAC sent back (reflection) or a recorded handshake
/// (replay: the verifier's nonce is new) fails. MACs are compared in constant time.
/// Once established, ``frameKeys()`` gives the per-direction frame keys.
package struct DirectHandshake: Sendable {
    /// Which end of the TCP connection this is.
    package enum Side: Sendable, Hashable {
        /// Opened the connection; speaks first.
        case dialer
        /// Accepted the connection on its listener.
        case acceptor
    }

    package enum State: Sendable, Hashable {
        /// Dialer before ``start()``.
        case idle
        /// Dialer: msg1 sent, waiting for msg2.
        case awaitingAccept
        /// Acceptor: waiting for msg1.
        case awaitingDial
        /// Acceptor: msg2 sent, waiting for msg3.
        case awaitingConfirm
        case established
        case failed
    }

    /// What ``receive(_:)`` asks the caller to do.
    package struct Output: Sendable {
        /// A handshake message to send, when any.
        package var reply: [UInt8]?
        /// Set when the handshake completed with this message.
        package var established: Bool
    }

    private let key: SecretBytes
    package let role: V2Pairing.Role
    package let side: Side
    package private(set) var state: State
    private let ownNonce: [UInt8]
    private var peerNonce: [UInt8] = []

    /// - Parameters:
    ///   - key: The 32-byte path key both sides derived from their secure channel.
    ///   - role: This side's role in the room.
    ///   - side: Whether this side dialled or accepted the connection.
    ///   - nonce: 32 fresh random bytes for this connection only.
    package init(key: SecretBytes, role: V2Pairing.Role, side: Side, nonce: [UInt8]) {
        precondition(nonce.count == DirectWire.nonceBytes, "a direct handshake nonce is 32 bytes")
        self.key = key
        self.role = role
        self.side = side
        self.ownNonce = nonce
        self.state = side == .dialer ? .idle : .awaitingDial
    }

    /// The dialer's first message (`nil` on the acceptor, which waits).
    package mutating func start() -> [UInt8]? {
        guard side == .dialer, state == .idle else { return nil }
        state = .awaitingAccept
        return DirectWire.magic + ownNonce
    }

    /// Takes one handshake message body from the peer.
    ///
    /// - Throws: ``DirectError/protocolViolation`` for a message of the wrong size or
    ///   magic, or any message after the handshake ended; ``DirectError/authenticationFailed``
    ///   when the peer's MAC does not verify. Either way the handshake is failed for good.
    package mutating func receive(_ body: [UInt8]) throws(DirectError) -> Output {
        switch state {
        case .awaitingDial:
            guard body.count == DirectWire.dialBytes, ConstantTime.equals(body.prefix(4), DirectWire.magic) else {
                return try fail(.protocolViolation)
            }
            peerNonce = Array(body.suffix(DirectWire.nonceBytes))
            let mac = mac(.accept, role: role)
            state = .awaitingConfirm
            return Output(reply: ownNonce + mac, established: false)
        case .awaitingAccept:
            guard body.count == DirectWire.acceptBytes else { return try fail(.protocolViolation) }
            peerNonce = Array(body.prefix(DirectWire.nonceBytes))
            let expected = mac(.accept, role: role.peer)
            guard ConstantTime.equals(body.suffix(DirectWire.macBytes), expected) else {
                return try fail(.authenticationFailed)
            }
            state = .established
            return Output(reply: mac(.confirm, role: role), established: true)
        case .awaitingConfirm:
            guard body.count == DirectWire.confirmBytes else { return try fail(.protocolViolation) }
            guard ConstantTime.equals(body, mac(.confirm, role: role.peer)) else {
                return try fail(.authenticationFailed)
            }
            state = .established
            return Output(reply: nil, established: true)
        case .idle, .established, .failed:
            return try fail(.protocolViolation)
        }
    }

    /// The frame protector of this connection; only once established.
    func frameKeys() -> DirectFrameProtector? {
        guard state == .established else { return nil }
        let creator = derivedKey(.creatorFrames)
        let joiner = derivedKey(.joinerFrames)
        return DirectFrameProtector(
            sendKey: role == .creator ? creator : joiner,
            receiveKey: role == .creator ? joiner : creator)
    }

    private mutating func fail(_ error: DirectError) throws(DirectError) -> Output {
        state = .failed
        throw error
    }

    /// The dialer's and acceptor's nonces in wire order.
    private var transcript: [UInt8] {
        side == .dialer ? ownNonce + peerNonce : peerNonce + ownNonce
    }

    /// `HMAC-SHA256(K, L ‖ step ‖ role ‖ nD ‖ nA)`: a handshake MAC.
    private func mac(_ step: DirectWire.Step, role: V2Pairing.Role) -> [UInt8] {
        let message = DirectWire.label + [step.rawValue, role.directByte] + transcript
        return key.withUnsafeBytes { key in
            message.withUnsafeBytes { HMACSHA256.authenticationCode(key: key, message: $0) }
        }
    }

    /// `HMAC-SHA256(K, L ‖ step ‖ nD ‖ nA)`: a frame key, kept in ``SecretBytes``.
    private func derivedKey(_ step: DirectWire.Step) -> SecretBytes {
        let message = DirectWire.label + [step.rawValue] + transcript
        return SecretBytes(count: HMACSHA256.byteCount) { output in
            key.withUnsafeBytes { key in
                var mac = HMACSHA256(key: key)
                mac.update(message)
                mac.finalize(into: output)
            }
        }
    }
}

// MARK: - CustomStringConvertible

extension DirectHandshake: CustomStringConvertible {
    /// Role, side and state only: never the key or nonces.
    package var description: String { "DirectHandshake(\(role), \(side), \(state))" }
}
