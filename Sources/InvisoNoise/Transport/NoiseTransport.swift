/// The transport phase of a Noise session: one cipher state per direction, implicit nonces.
///
/// Messages must arrive in order and exactly once (a reliable, ordered link such as TCP).
/// For lossy links use ``ExplicitNonceTransport``.
public struct NoiseTransport: Sendable {
    /// Encrypts outgoing messages; `nil` for the responder of a one-way pattern.
    public private(set) var sender: CipherState?
    /// Decrypts incoming messages; `nil` for the initiator of a one-way pattern.
    public private(set) var receiver: CipherState?
    /// The handshake hash, for channel binding.
    public let handshakeHash: [UInt8]
    /// The peer's static public key, if the pattern authenticated one.
    public let remoteStaticPublicKey: [UInt8]?

    /// Assembles a transport from cipher states (normally obtained from ``HandshakeState/transport()``).
    public init(sender: CipherState?, receiver: CipherState?, handshakeHash: [UInt8], remoteStaticPublicKey: [UInt8]?) {
        self.sender = sender
        self.receiver = receiver
        self.handshakeHash = handshakeHash
        self.remoteStaticPublicKey = remoteStaticPublicKey
    }

    /// Encrypts one transport message (plaintext at most 65,519 bytes).
    /// - Throws: ``NoiseError/sendNotAllowed``, ``NoiseError/messageTooLarge``,
    ///   ``NoiseError/nonceExhausted``; the state is unchanged on error.
    public mutating func encrypt(_ plaintext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard sender != nil else { throw .sendNotAllowed }
        return try sender!.encrypt(plaintext, ad: ad)
    }

    /// Decrypts the next transport message.
    /// - Throws: ``NoiseError/receiveNotAllowed``, ``NoiseError/authenticationFailed``,
    ///   ``NoiseError/messageTooLarge``, ``NoiseError/nonceExhausted``; the state is
    ///   unchanged on error, so the next genuine message still decrypts.
    public mutating func decrypt(_ ciphertext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard receiver != nil else { throw .receiveNotAllowed }
        return try receiver!.decrypt(ciphertext, ad: ad)
    }

    /// Rekeys the sending direction (rev 34 §11.3). Both sides must agree when.
    public mutating func rekeySender() { sender?.rekey() }

    /// Rekeys the receiving direction (rev 34 §11.3).
    public mutating func rekeyReceiver() { receiver?.rekey() }
}

// MARK: - Redacted description

extension NoiseTransport: CustomStringConvertible {
    /// Names the directions and nonces; never keys.
    public var description: String {
        "NoiseTransport(send: \(sender.map { String($0.nonce) } ?? "none"), receive: \(receiver.map { String($0.nonce) } ?? "none"))"
    }
}
