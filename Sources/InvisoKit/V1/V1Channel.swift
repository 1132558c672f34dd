public import Crypto
public import InvisoCrypto
public import InvisoNoise

/// Inviso E2EE v1 exactly as the shipped iOS app speaks it, with the fixes that keep its
/// bytes (see `docs/protocol.md`, "v1"):
///
/// - session key = HKDF-SHA256(X25519 shared secret, salt: empty, info:
///   `inviso-session-v1`, 32 bytes); a low-order peer key (all-zero secret) is refused;
/// - message key for counter `c` = HKDF-SHA256(session key, salt: empty, info:
///   `inviso-msg-v1` ‖ 0x01 ‖ `c` as 8 bytes big-endian); **both** directions use 0x01, as
///   the app does, so our message `c` and the peer's message `c` share a key;
/// - AES-256-GCM without associated data; the frame is ``V1Frame``'s JSON.
///
/// Fixes: received counters go through a 1,024-message replay window, checked only after
/// the tag verifies (a failure changes nothing); a frame that is one of our own sent back
/// is refused (``V1Error/reflected``). Our nonces are `role ‖ 0x000000 ‖ counter` instead of
/// random: unique for every key (each key serves one message per direction and the two
/// directions' role bytes differ), free of system calls, and they let us recognise our
/// own frames; the app accepts any nonce.
///
/// The HKDF extract step depends only on the session key, so it is done once; each message
/// key then costs one HMAC.
public struct V1Channel: Sendable {
    /// Which side of the room this is (the creator is the initiator); it only selects our
    /// nonce prefix.
    public enum Role: UInt8, Sendable {
        case initiator = 0x01
        case responder = 0x02
    }

    static let sessionInfo = Array("inviso-session-v1".utf8)
    static let messageInfo = Array("inviso-msg-v1".utf8)

    private let role: Role
    /// HMAC keyed with HKDF's PRK for the message keys.
    private let expander: HMACSHA256
    private var sendCounter: UInt64 = 0
    private var window = ReplayWindow(size: 1_024)

    /// The session key of the app's key exchange: our X25519 private key and the peer's
    /// `key_exchange.publicKey` (raw 32 bytes).
    /// - Throws: ``V1Error/invalidPublicKey``, ``V1Error/allZeroSharedSecret``.
    public static func sessionKey(
        privateKey: Curve25519.KeyAgreement.PrivateKey, peerPublicKey: [UInt8]
    ) throws(V1Error) -> SecretBytes {
        let shared: SecretBytes
        do {
            shared = try X25519.sharedSecret(privateKey, with: peerPublicKey)
        } catch .allZeroSharedSecret {
            throw .allZeroSharedSecret
        } catch {
            throw .invalidPublicKey
        }
        return SecretBytes(count: 32) { output in
            shared.withUnsafeBytes { ikm in
                sessionInfo.withUnsafeBytes { info in
                    HKDFSHA256.derive(inputKeyMaterial: ikm, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info, into: output)
                }
            }
        }
    }

    /// A channel on an established session key.
    public init(sessionKey: SecretBytes, role: Role) {
        self.role = role
        // HKDF-Extract with an empty salt: PRK = HMAC(key: 32 zero bytes, IKM).
        let prk = sessionKey.withUnsafeBytes { ikm in
            [UInt8](repeating: 0, count: 32).withUnsafeBytes { salt in
                HMACSHA256.authenticationCode(key: salt, message: ikm)
            }
        }
        expander = prk.withUnsafeBytes { HMACSHA256(key: $0) }
    }

    /// A channel on an established session key, restored with its counters (a resumed
    /// session): `sentCount` messages already sealed, `window` the frames already opened.
    public init(sessionKey: SecretBytes, role: Role, sentCount: UInt64, window: ReplayWindow) {
        self.init(sessionKey: sessionKey, role: role)
        sendCounter = sentCount
        self.window = window
    }

    /// The counters of the frames already opened (for storage).
    public var replayWindow: ReplayWindow { window }

    /// How many messages this side has sealed.
    public var sentCount: UInt64 { sendCounter }

    /// Encrypts one message into the app's JSON frame.
    /// - Throws: ``V1Error/counterExhausted`` after 2^53 messages.
    public mutating func seal(_ plaintext: [UInt8]) throws(V1Error) -> [UInt8] {
        guard sendCounter < V1Frame.maximumCounter else { throw .counterExhausted }
        let counter = sendCounter
        let nonce = Self.nonce(role: role, counter: counter)
        let key = messageKey(counter)
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce))
        } catch {
            throw .malformedFrame  // unreachable: a 32-byte key and a 12-byte nonce always seal
        }
        sendCounter += 1
        return V1Frame(counter: counter, nonce: nonce, ciphertext: Array(box.ciphertext), tag: Array(box.tag)).json()
    }

    /// Decrypts one frame from the peer.
    /// - Throws: ``V1Error``; the channel is unchanged on every error.
    public mutating func open(_ json: [UInt8]) throws(V1Error) -> [UInt8] {
        try openCounted(json).plaintext
    }

    /// Decrypts one frame from the peer and returns its counter with the plaintext (the
    /// chat engine shows counter + 1 as the message id).
    /// - Throws: ``V1Error``; the channel is unchanged on every error.
    public mutating func openCounted(_ json: [UInt8]) throws(V1Error) -> (counter: UInt64, plaintext: [UInt8]) {
        let frame = try V1Frame(json: json)
        guard frame.nonce != Self.nonce(role: role, counter: frame.counter) else { throw .reflected }
        guard window.check(frame.counter) else { throw .replayed }
        let plaintext: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: frame.nonce), ciphertext: frame.ciphertext, tag: frame.tag)
            plaintext = Array(try AES.GCM.open(box, using: messageKey(frame.counter)))
        } catch {
            throw .authenticationFailed
        }
        window.accept(frame.counter)
        return (frame.counter, plaintext)
    }

    /// The message key for `counter` (HKDF-Expand, first block).
    func messageKey(_ counter: UInt64) -> SymmetricKey {
        var hmac = expander
        var suffix = [UInt8](repeating: 0, count: 10)
        suffix[0] = 0x01  // the app's direction byte, the same both ways
        for index in 0..<8 { suffix[1 + index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        suffix[9] = 0x01  // HKDF-Expand's block counter T(1)
        hmac.update(Self.messageInfo)
        hmac.update(suffix)
        return SymmetricKey(data: hmac.finalize())
    }

    static func nonce(role: Role, counter: UInt64) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        nonce[0] = role.rawValue
        for index in 0..<8 { nonce[4 + index] = UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64(index))) }
        return nonce
    }
}
