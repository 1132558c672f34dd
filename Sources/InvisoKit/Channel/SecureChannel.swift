public import InvisoCrypto
public import InvisoWire

/// Which end-to-end protocol a chat session speaks.
public enum ChatProtocolVersion: String, Sendable, Hashable, CustomStringConvertible {
    /// Inviso v1, as the shipped iOS app speaks it: unauthenticated X25519, unverified.
    case v1
    /// Inviso v2: CPace on the invite's secret words, Noise XXpsk3, Double Ratchet.
    case v2

    public var description: String { rawValue }
}

/// The end-to-end channel of one chat session as a value-type state machine: it drives
/// its handshake with the peer and then seals and opens message-layer records. No I/O:
/// a driver carries out the returned ``SecureChannelAction``s (binary frames go over the
/// current ``FrameTransport``, signaling messages over the signaling socket).
///
/// Two implementations: ``V2SecureChannel`` (binary frames only; verified once the
/// pairing succeeds) and ``V1SecureChannel`` (the app's `key_exchange` over signaling,
/// then v1 frames; never verified, but its ``safetyNumber`` lets people compare keys).
public protocol SecureChannel: Sendable {
    /// The protocol.
    var version: ChatProtocolVersion { get }
    /// Whether messages can be sealed now.
    var canSeal: Bool { get }
    /// Whether the handshake finished (for v2: the peer proved it holds the keys).
    var isEstablished: Bool { get }
    /// Whether the peer is authenticated: v2 after a successful pairing, never v1.
    var isVerified: Bool { get }
    /// Whether the protocol carries message-layer acks (v2 yes, v1 no).
    var carriesAcknowledgements: Bool { get }
    /// What the safety number is computed from, once established.
    var safetyNumberInputs: SafetyNumberInputs? { get }
    /// The peer's public key for this session (32 bytes), once established; pin it.
    var peerIdentity: [UInt8]? { get }
    /// The 32-byte key that authenticates a direct path, once established.
    var directPathKey: SecretBytes? { get }

    /// Starts the handshake when both members are in the room (`room_ready`). Returns no
    /// action when already started.
    mutating func start() -> [SecureChannelAction]
    /// Handles a binary frame from the peer (on any path).
    ///
    /// - Throws: ``SecureChannelError`` when the frame is refused and nothing changed
    ///   (the driver drops it); a failure of the handshake is returned as
    ///   ``SecureChannelAction/failed(_:)`` instead.
    mutating func receive(frame: [UInt8]) throws(SecureChannelError) -> [SecureChannelAction]
    /// Handles a relayed signaling message from the peer (`key_exchange`, …).
    ///
    /// - Throws: As ``receive(frame:)``.
    mutating func receive(signal: JSONObject) throws(SecureChannelError) -> [SecureChannelAction]
    /// Seals one record into a binary frame for the peer.
    ///
    /// - Throws: ``SecureChannelError/notEstablished`` before ``canSeal``;
    ///   ``SecureChannelError/unsupported`` for a record the protocol cannot carry.
    mutating func seal(_ record: ReliableRecord) throws(SecureChannelError) -> [UInt8]
}

/// What a driver must do after a ``SecureChannel`` input, in order.
public enum SecureChannelAction: Sendable {
    /// Send this binary frame to the peer.
    case sendFrame([UInt8])
    /// Send this signaling message to the peer.
    case sendSignal(ClientMessage)
    /// The handshake finished: messages can flow, the safety number is known.
    case established
    /// A record from the peer (v1: `.data(seq: counter + 1, payload)`).
    case received(ReliableRecord)
    /// The handshake failed for good; any abort frame to send came just before.
    case failed(SecureChannelError)
}

extension SecureChannel {
    /// The 60-digit safety number both people compare, once established (computed on each
    /// access: 10,400 SHA-512 rounds).
    public var safetyNumber: String? { safetyNumberInputs?.digits() }
}
