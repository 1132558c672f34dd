public import InvisoCrypto
import InvisoSignal

/// An established Inviso v2 session: a Double Ratchet (InvisoSignal's, with libsignal's
/// KDFs, limits and out-of-order handling) seeded from the pairing's Noise handshake.
///
/// Every message is one ratchet frame: `0x03 ‖ SignalMessage` (version 3), whose MAC
/// binds both parties' Noise static keys (as identity keys `0x05 ‖ u`). The encrypted
/// plaintext starts with a kind byte: `0x01` for a message (``seal(_:)`` / ``open(_:)``),
/// `0x00` for the joiner's pairing confirmation (which only ``V2Pairing`` consumes).
///
/// Out-of-order messages open (up to 2,000 skipped keys per chain, 25,000 ahead); a
/// message that was already opened is refused (``V2Error/duplicateMessage``). Every
/// failure leaves the session exactly as it was. A value type: keep one copy, and store
/// it with ``serialized()`` after each change.
public struct V2Session: Sendable {
    /// The kind byte at the start of every ratchet plaintext.
    enum Kind: UInt8 {
        /// The joiner's pairing confirmation; nothing follows.
        case confirmation = 0x00
        /// An application message; the message follows (for the chat engine,
        /// `seq (u64 BE) ‖ payload`, see ``ReliableRecord``).
        case message = 0x01
        /// A cumulative acknowledgement; exactly 8 bytes follow (``ReliableRecord/ack(_:)``).
        case ack = 0x02
    }

    /// Our side of the room.
    public let role: V2Pairing.Role
    var state: SessionState
    /// The key that authenticates the direct path (`docs/protocol.md`, "Direct-path key");
    /// `nil` for a session restored by ``init(serialized:)`` alone, which does not keep it
    /// (``ChatSessionSnapshot`` keeps it beside the session).
    public let directPathKey: SecretBytes?

    init(role: V2Pairing.Role, state: SessionState, directPathKey: SecretBytes? = nil) {
        self.role = role
        self.state = state
        self.directPathKey = directPathKey
    }

    /// The peer's Noise static public key (32 bytes), authenticated by the handshake;
    /// pin it to recognise the peer on a reconnect.
    public var peerIdentity: [UInt8] { state.remoteIdentity.publicKey.rawRepresentation }

    /// Our Noise static public key (32 bytes).
    public var localIdentity: [UInt8] { state.localIdentity.publicKey.rawRepresentation }

    /// Encrypts `plaintext` into a ratchet frame for the peer.
    public mutating func seal(_ plaintext: [UInt8]) -> [UInt8] {
        seal(kind: .message, plaintext)
    }

    /// Decrypts a ratchet frame from the peer, drawing the key of a DH ratchet step
    /// (when the peer's ratchet key is new) from `generator`.
    ///
    /// - Throws: ``V2Error/unexpectedFrame`` for another frame type or a pairing
    ///   confirmation, ``V2Error/malformedFrame``, ``V2Error/duplicateMessage``,
    ///   ``V2Error/tooFarIntoFuture``, ``V2Error/authenticationFailed``. The session is
    ///   unchanged on every error.
    public mutating func open(
        _ frame: [UInt8], using generator: inout some RandomNumberGenerator
    ) throws(V2Error) -> [UInt8] {
        let (kind, body, next) = try Self.decrypt(frame, with: state, using: &generator)
        guard kind == .message else { throw V2Error(.unexpectedFrame, "pairing confirmation") }
        state = next
        return body
    }

    /// ``open(_:using:)`` with the system's secure generator.
    public mutating func open(_ frame: [UInt8]) throws(V2Error) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return try open(frame, using: &generator)
    }

    /// The 60-digit safety number both people see (the same on both sides) and compare
    /// out of band: libsignal's displayable fingerprint (version 2, 5,200 iterations of
    /// SHA-512) over both Noise static keys, with the stable ids `inviso v2 creator` and
    /// `inviso v2 joiner`. Computed on each access (10,400 hashes).
    public var safetyNumber: String { safetyNumberInputs.digits() }

    /// What ``safetyNumber`` is computed from (public keys and ids only).
    var safetyNumberInputs: SafetyNumberInputs {
        let remote: V2Pairing.Role = role == .creator ? .joiner : .creator
        return SafetyNumberInputs(
            localStableID: role.stableID, localIdentity: state.localIdentity, remoteStableID: remote.stableID,
            remoteIdentity: state.remoteIdentity)
    }

    // MARK: Message-layer records

    /// Seals one record of the message layer (its kind byte is the ratchet plaintext's).
    mutating func seal(record: ReliableRecord) -> [UInt8] {
        let bytes = record.encoded
        return seal(kind: bytes[0] == ReliableRecord.ackKind ? .ack : .message, Array(bytes.dropFirst()))
    }

    /// Opens a ratchet frame into a message-layer record.
    ///
    /// - Throws: the errors of ``open(_:using:)``; ``V2Error/malformedFrame`` also for a
    ///   message whose body is not `seq ‖ payload` with seq ≥ 1. The session is unchanged
    ///   on every error.
    mutating func openRecord(_ frame: [UInt8], using generator: inout some RandomNumberGenerator) throws(V2Error)
        -> ReliableRecord
    {
        let (kind, body, next) = try Self.decrypt(frame, with: state, using: &generator)
        guard kind != .confirmation else { throw V2Error(.unexpectedFrame, "pairing confirmation") }
        guard let record = try? ReliableRecord(decoding: [kind.rawValue] + body) else { throw .malformedFrame }
        state = next
        return record
    }

    // MARK: Ratchet frames

    /// Seals `kind ‖ body` into a ratchet frame.
    mutating func seal(kind: Kind, _ body: [UInt8]) -> [UInt8] {
        do {
            return V2FrameType.ratchet.frame(try state.encrypt([kind.rawValue] + body).serialized)
        } catch {
            // A version-3 session without a pending pre-key always encrypts: AES-CBC with
            // a 32-byte key and a 16-byte IV cannot fail.
            preconditionFailure("a v2 ratchet encryption failed")
        }
    }

    /// Opens a ratchet frame with a copy of `state` and splits the plaintext into its kind
    /// and body; returns them with the advanced state, for the caller to keep or drop.
    static func decrypt(
        _ frame: [UInt8], with state: SessionState, using generator: inout some RandomNumberGenerator
    ) throws(V2Error) -> (Kind, [UInt8], SessionState) {
        guard let type = V2FrameType(frame: frame) else { throw .malformedFrame }
        guard type == .ratchet else { throw V2Error(.unexpectedFrame, "type \(type.rawValue)") }
        var next = state
        let plaintext: [UInt8]
        do {
            let message = try SignalMessage(serialized: Array(frame.dropFirst()))
            plaintext = try next.decrypt(message, using: &generator)
        } catch {
            throw V2Error(ratchetFailure: error)
        }
        guard let first = plaintext.first, let kind = Kind(rawValue: first) else { throw .malformedFrame }
        switch kind {
        case .confirmation: guard plaintext.count == 1 else { throw .malformedFrame }
        case .ack: guard plaintext.count == 9 else { throw .malformedFrame }
        case .message: break
        }
        return (kind, Array(plaintext.dropFirst()), next)
    }
}

extension V2Error {
    /// The v2 error for a ratchet failure: coarse, as InvisoSignal's own errors.
    init(ratchetFailure error: SignalError) {
        switch error.code {
        case .duplicateMessage: self = .duplicateMessage
        case .tooFarIntoFuture: self = .tooFarIntoFuture
        case .invalidMessage, .legacyVersion, .unrecognizedVersion, .invalidKey, .invalidKeyType: self = .malformedFrame
        default: self = .authenticationFailed
        }
    }
}

extension V2Pairing.Role {
    /// The stable id of this side in the safety number.
    var stableID: [UInt8] {
        Array((self == .creator ? "inviso v2 creator" : "inviso v2 joiner").utf8)
    }
}

// MARK: - Redacted descriptions

extension V2Session: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The role and the peer's public key; never a ratchet key.
    public var description: String { "V2Session(role: \(role), peer: \(Hex.encode(peerIdentity)))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show no key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
