public import Crypto
public import InvisoCrypto
import InvisoSignal
public import InvisoNoise
public import InvisoWire

/// The v1 ``SecureChannel``, compatible with the shipped iOS app: each side sends
/// `key_exchange {publicKey, sessionId: roomId, timestamp}` over signaling when the room is
/// ready, the responder (joiner) answers `key_exchange_complete`, then every message is a
/// ``V1Channel`` JSON frame carried as a binary frame, its plaintext the app's
/// ``ChatPayload`` bytes with no envelope (`docs/protocol.md`, "v1 in the chat engine").
///
/// Never verified: nothing authenticates the keys, so the server can sit in the middle.
/// ``safetyNumber`` (the same fingerprint as v2's, over both X25519 public keys, with the
/// ids `inviso v1 creator` and `inviso v1 joiner`) differs on the two sides when it did.
/// A peer key whose shared secret is all zero is refused and fails the channel. v1 has
/// no acks: the message id is the frame counter + 1.
public struct V1SecureChannel: SecureChannel {
    private let role: V1Channel.Role
    private let roomID: String
    private let privateKey: Curve25519.KeyAgreement.PrivateKey
    private let timestamp: @Sendable () -> Double
    private var sentKeyExchange = false
    private var channel: V1Channel?
    private var peerPublicKey: [UInt8]?
    private var failed = false
    /// `HKDF-SHA256(session key, salt = "", info = "inviso v1 direct", 32)` once established.
    public private(set) var directPathKey: SecretBytes?

    /// A channel for one room.
    ///
    /// - Parameters:
    ///   - role: ``V1Channel/Role/initiator`` for the room's creator.
    ///   - roomID: The server's room id (sent as `sessionId`, as the app does).
    ///   - privateKey: A fresh X25519 key for this session.
    ///   - timestamp: Seconds since 1970 for `key_exchange.timestamp`.
    public init(
        role: V1Channel.Role, roomID: String, privateKey: Curve25519.KeyAgreement.PrivateKey,
        timestamp: @escaping @Sendable () -> Double
    ) {
        self.role = role
        self.roomID = roomID
        self.privateKey = privateKey
        self.timestamp = timestamp
    }

    /// Restores an established channel (a resumed session, ``ChatSessionSnapshot``): the
    /// session key is derived again from `privateKey` and `peerPublicKey`; the key exchange
    /// is not sent again.
    ///
    /// - Throws: ``SecureChannelError/invalidPeerKey`` when the keys give no session key.
    public init(
        restoring role: V1Channel.Role, roomID: String, privateKey: Curve25519.KeyAgreement.PrivateKey,
        peerPublicKey: [UInt8], sentCount: UInt64, window: ReplayWindow, timestamp: @escaping @Sendable () -> Double
    ) throws(SecureChannelError) {
        self.init(role: role, roomID: roomID, privateKey: privateKey, timestamp: timestamp)
        let sessionKey: SecretBytes
        do {
            sessionKey = try V1Channel.sessionKey(privateKey: privateKey, peerPublicKey: peerPublicKey)
        } catch {
            throw .invalidPeerKey
        }
        sentKeyExchange = true
        self.peerPublicKey = peerPublicKey
        channel = V1Channel(sessionKey: sessionKey, role: role, sentCount: sentCount, window: window)
        directPathKey = Self.directPathKey(sessionKey: sessionKey)
    }

    /// What a resumed session needs besides the private key, once established: the peer's
    /// key, how many frames were sealed, which were opened.
    public var resumeState: (peerPublicKey: [UInt8], sentCount: UInt64, window: ReplayWindow)? {
        guard let channel, let peerPublicKey else { return nil }
        return (peerPublicKey, channel.sentCount, channel.replayWindow)
    }

    /// ``ChatProtocolVersion/v1``.
    public var version: ChatProtocolVersion { .v1 }
    /// Whether both keys are known.
    public var canSeal: Bool { channel != nil }
    /// Same as ``canSeal``.
    public var isEstablished: Bool { channel != nil }
    /// Always false: v1 keys are not authenticated.
    public var isVerified: Bool { false }
    /// Always false: v1 has no acks.
    public var carriesAcknowledgements: Bool { false }
    /// The peer's X25519 public key once established.
    public var peerIdentity: [UInt8]? { channel == nil ? nil : peerPublicKey }

    /// Our X25519 public key (32 bytes), as sent in `key_exchange`.
    public var localPublicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

    /// What the safety number is computed from, once established: both X25519 keys as
    /// identities (`0x05 ‖ key`) with the stable ids `inviso v1 creator` / `inviso v1
    /// joiner`, for libsignal's displayable fingerprint (version 2, 5,200 iterations): 60
    /// digits, the same on both sides unless someone substituted a key.
    public var safetyNumberInputs: SafetyNumberInputs? {
        guard channel != nil, let peerPublicKey,
            let local = try? ECPublicKey(rawRepresentation: localPublicKey),
            let remote = try? ECPublicKey(rawRepresentation: peerPublicKey)
        else { return nil }
        let ids = (creator: Array("inviso v1 creator".utf8), joiner: Array("inviso v1 joiner".utf8))
        let (localID, remoteID) = role == .initiator ? (ids.creator, ids.joiner) : (ids.joiner, ids.creator)
        return SafetyNumberInputs(
            localStableID: localID, localIdentity: IdentityKey(local), remoteStableID: remoteID,
            remoteIdentity: IdentityKey(remote))
    }

    /// Sends our `key_exchange` once.
    public mutating func start() -> [SecureChannelAction] {
        guard !sentKeyExchange, !failed else { return [] }
        sentKeyExchange = true
        return [.sendSignal(keyExchange)]
    }

    private var keyExchange: ClientMessage {
        KeyExchange(publicKey: Base64.encodeString(localPublicKey), sessionId: roomID, timestamp: timestamp()).message
    }

    /// Opens a v1 frame; its plaintext comes back as `.data(seq: counter + 1, payload)`.
    public mutating func receive(frame: [UInt8]) throws(SecureChannelError) -> [SecureChannelAction] {
        guard var channel else { throw .notEstablished }
        let opened: (counter: UInt64, plaintext: [UInt8])
        do {
            opened = try channel.openCounted(frame)
        } catch {
            throw SecureChannelError(refusing: error)
        }
        self.channel = channel
        return [.received(.data(seq: opened.counter + 1, payload: opened.plaintext))]
    }

    /// Takes the peer's `key_exchange` (and ignores `key_exchange_complete`).
    ///
    /// - Throws: ``SecureChannelError/refused`` for another message, a `key_exchange` for
    ///   another room, or a second, different key once established (the same key again is
    ///   ignored).
    public mutating func receive(signal: JSONObject) throws(SecureChannelError) -> [SecureChannelAction] {
        guard !failed else { throw .pairingFailed }
        switch signal["type"]?.stringValue {
        case RelayKind.keyExchangeComplete.rawValue?:
            return []
        case RelayKind.keyExchange.rawValue?:
            break
        default:
            throw SecureChannelError(.refused, "unexpected signaling message")
        }
        guard let message = try? KeyExchange(json: signal), message.sessionId == roomID else {
            throw SecureChannelError(.refused, "key_exchange for another session")
        }
        guard let key = Base64.decode(message.publicKey), key.count == 32 else {
            failed = true
            return [.failed(.invalidPeerKey)]
        }
        if channel != nil {
            guard key == peerPublicKey else { throw SecureChannelError(.refused, "a second key_exchange") }
            return []
        }
        let sessionKey: SecretBytes
        do {
            sessionKey = try V1Channel.sessionKey(privateKey: privateKey, peerPublicKey: key)
        } catch {
            failed = true
            return [.failed(SecureChannelError(refusing: error))]
        }
        peerPublicKey = key
        channel = V1Channel(sessionKey: sessionKey, role: role)
        directPathKey = Self.directPathKey(sessionKey: sessionKey)
        var actions: [SecureChannelAction] = []
        if !sentKeyExchange {
            sentKeyExchange = true
            actions.append(.sendSignal(keyExchange))
        }
        if role == .responder {
            actions.append(.sendSignal(KeyExchangeComplete(sessionId: roomID, timestamp: timestamp()).message))
        }
        actions.append(.established)
        return actions
    }

    /// Seals `.data(seq, payload)` with seq = the next counter + 1.
    ///
    /// - Throws: ``SecureChannelError/notEstablished``, ``SecureChannelError/unsupported``
    ///   for an ack or a seq out of step, ``SecureChannelError/exhausted``.
    public mutating func seal(_ record: ReliableRecord) throws(SecureChannelError) -> [UInt8] {
        guard var channel else { throw .notEstablished }
        guard case .data(let seq, let payload) = record, seq == channel.sentCount + 1 else { throw .unsupported }
        do {
            let frame = try channel.seal(payload)
            self.channel = channel
            return frame
        } catch {
            throw SecureChannelError(refusing: error)
        }
    }

    static let directInfo = Array("inviso v1 direct".utf8)

    /// `HKDF-SHA256(IKM = session key, salt = "", info = "inviso v1 direct", L = 32)`.
    static func directPathKey(sessionKey: SecretBytes) -> SecretBytes {
        SecretBytes(count: 32) { output in
            sessionKey.withUnsafeBytes { ikm in
                directInfo.withUnsafeBytes { info in
                    HKDFSHA256.derive(
                        inputKeyMaterial: ikm, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info, into: output)
                }
            }
        }
    }
}

// MARK: - Redacted description

extension V1SecureChannel: CustomStringConvertible, CustomReflectable {
    /// Whether it is established; never a key.
    public var description: String { "V1SecureChannel(established: \(isEstablished))" }
    /// No children, so reflection shows no key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
