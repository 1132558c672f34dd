/// A Noise transport for unreliable links (rev 34 §11.4): each message carries its nonce in the clear.
///
/// Wire layout (BitChat's): a 4-byte big-endian nonce, then the AEAD ciphertext and tag
/// produced under the standard Noise nonce for that counter. The receiver accepts messages
/// out of order and drops replays and messages ``ReplayWindow/size`` (1,024) or more
/// behind the newest, recording a nonce only after its message authenticates.
///
/// Build it from a fresh ``NoiseTransport`` and then use only this value: the two share
/// keys, so sending from both (or from two copies of either) would reuse nonces.
public struct ExplicitNonceTransport: Sendable {
    /// Bytes of the explicit nonce prefix.
    public static let noncePrefixLength = 4
    /// The largest explicit nonce a 4-byte prefix can carry.
    public static let maximumNonce = UInt64(UInt32.max)

    private var sender: CipherState?
    private var receiver: CipherState?
    private var nextNonce: UInt64 = 0
    private var window: ReplayWindow
    /// The handshake hash, for channel binding.
    public let handshakeHash: [UInt8]
    /// The peer's static public key, if the pattern authenticated one.
    public let remoteStaticPublicKey: [UInt8]?

    /// Wraps the cipher states of a finished handshake.
    /// - Parameters:
    ///   - transport: the transport from ``HandshakeState/transport()``; do not keep using it.
    ///   - windowSize: how many recent nonces to remember (default 1,024).
    public init(_ transport: NoiseTransport, windowSize: Int = 1024) {
        sender = transport.sender
        receiver = transport.receiver
        handshakeHash = transport.handshakeHash
        remoteStaticPublicKey = transport.remoteStaticPublicKey
        window = ReplayWindow(size: windowSize)
    }

    /// Seals `plaintext` as `nonce(4, BE) ‖ ciphertext ‖ tag`.
    /// - Throws: ``NoiseError/sendNotAllowed``, ``NoiseError/messageTooLarge``,
    ///   ``NoiseError/nonceExhausted`` (after 2^32 messages).
    public mutating func seal(_ plaintext: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let sender else { throw .sendNotAllowed }
        guard nextNonce <= Self.maximumNonce else { throw .nonceExhausted }
        guard plaintext.count <= CipherState.maximumPlaintextLength - Self.noncePrefixLength else { throw .messageTooLarge }
        let nonce = nextNonce
        var message: [UInt8] = [UInt8(truncatingIfNeeded: nonce >> 24), UInt8(truncatingIfNeeded: nonce >> 16),
                                UInt8(truncatingIfNeeded: nonce >> 8), UInt8(truncatingIfNeeded: nonce)]
        message += try sender.encrypt(plaintext, nonce: nonce, ad: ad)
        nextNonce += 1
        return message
    }

    /// Opens a message produced by ``seal(_:ad:)``.
    /// - Throws: ``NoiseError/receiveNotAllowed``, ``NoiseError/malformedMessage`` (shorter
    ///   than nonce + tag), ``NoiseError/messageTooLarge``, ``NoiseError/replayedMessage``,
    ///   ``NoiseError/authenticationFailed``; the state is unchanged on error.
    public mutating func open(_ message: [UInt8], ad: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let receiver else { throw .receiveNotAllowed }
        guard message.count <= CipherState.maximumMessageLength else { throw .messageTooLarge }
        guard message.count >= Self.noncePrefixLength + NoiseCipher.tagLength else { throw .malformedMessage }
        let nonce = message.prefix(Self.noncePrefixLength).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard window.check(nonce) else { throw .replayedMessage }
        let plaintext = try receiver.decrypt(message.dropFirst(Self.noncePrefixLength), nonce: nonce, ad: ad)
        window.accept(nonce)
        return plaintext
    }
}
