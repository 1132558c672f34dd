import Crypto
import Foundation
public import InvisoCrypto

/// A Double Ratchet message (libsignal `SignalMessage`, ``CiphertextMessageType/whisper``).
///
/// Wire layout, byte-compatible with libsignal:
///
///     versionByte ‖ protobuf ‖ mac (8 bytes)
///
/// - `versionByte` = `(messageVersion << 4) | 4`: `0x44` for version 4 (PQXDH sessions),
///   `0x34` for version 3.
/// - `protobuf` = `1: ratchet_key` (33-byte serialized key), `2: counter`,
///   `3: previous_counter`, `4: ciphertext`, written in that order and always all four.
///   libsignal's fields 5 (`pq_ratchet`) and 6 (`addresses`) are never written; when
///   parsing they are accepted and ignored.
/// - `mac` = the first 8 bytes of HMAC-SHA256(macKey, senderIdentity (33) ‖
///   receiverIdentity (33) ‖ versionByte ‖ protobuf).
///
/// Parsing does not check the MAC (the receiver needs its session to know the key); call
/// ``verifyMAC(senderIdentityKey:receiverIdentityKey:macKey:)``.
public struct SignalMessage: Sendable, Hashable {
    /// The length of the truncated MAC at the end of the message.
    public static let macByteCount = 8
    /// The newest message version (PQXDH sessions); also the low nibble of the version byte.
    public static let currentVersion: UInt8 = 4

    /// The session's message version: 4 (PQXDH) or 3 (X3DH).
    public let messageVersion: UInt8
    /// The sender's current ratchet public key.
    public let senderRatchetKey: ECPublicKey
    /// The index of this message in the sender's current chain.
    public let counter: UInt32
    /// The length of the sender's previous sending chain.
    public let previousCounter: UInt32
    /// The AES-256-CBC ciphertext of the message body.
    public let ciphertext: [UInt8]
    /// The whole message as it goes on the wire, MAC included.
    public let serialized: [UInt8]

    /// Builds and authenticates a message.
    ///
    /// - Parameters:
    ///   - messageVersion: 3 or 4.
    ///   - macKey: The message's HMAC-SHA256 key from the chain step.
    ///   - senderRatchetKey: The sender's current ratchet public key.
    ///   - counter: The message index in the sending chain.
    ///   - previousCounter: The length of the previous sending chain.
    ///   - ciphertext: The encrypted body.
    ///   - senderIdentityKey: The sender's identity key (bound into the MAC).
    ///   - receiverIdentityKey: The receiver's identity key (bound into the MAC).
    /// - Throws: ``SignalError/invalidArgument`` for a message version other than 3 or 4.
    public init(
        messageVersion: UInt8,
        macKey: SecretBytes,
        senderRatchetKey: ECPublicKey,
        counter: UInt32,
        previousCounter: UInt32,
        ciphertext: [UInt8],
        senderIdentityKey: IdentityKey,
        receiverIdentityKey: IdentityKey
    ) throws(SignalError) {
        guard (WireVersion.oldestSupported...Self.currentVersion).contains(messageVersion) else {
            throw SignalError(.invalidArgument, "SignalMessage version must be 3 or 4")
        }
        var writer = ProtobufWriter()
        writer.writeBytes(1, senderRatchetKey.serialized)
        writer.writeUInt32(2, counter)
        writer.writeUInt32(3, previousCounter)
        writer.writeBytes(4, ciphertext)
        var serialized = [WireVersion.byte(version: messageVersion, current: Self.currentVersion)]
        serialized.append(contentsOf: writer.bytes)
        let mac = Self.mac(
            macKey: macKey, sender: senderIdentityKey, receiver: receiverIdentityKey, body: serialized[...])
        serialized.append(contentsOf: mac)

        self.messageVersion = messageVersion
        self.senderRatchetKey = senderRatchetKey
        self.counter = counter
        self.previousCounter = previousCounter
        self.ciphertext = ciphertext
        self.serialized = serialized
    }

    /// Parses a message received from the wire. The MAC is not checked here.
    ///
    /// - Throws: ``SignalError/invalidMessage`` when the message is shorter than 9 bytes,
    ///   the protobuf is malformed, or `ratchet_key`, `counter` or `ciphertext` is missing;
    ///   ``SignalError/legacyVersion`` for a version below 3;
    ///   ``SignalError/unrecognizedVersion`` for a version above 4;
    ///   ``SignalError/invalidKey`` or ``SignalError/invalidKeyType`` when the ratchet key
    ///   is not a serialized Curve25519 key.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        try self.init(serialized: Array(serialized))
    }

    /// Parses the serialized form (the non-generic fast path for byte arrays).
    ///
    /// - Throws: the same errors as ``init(serialized:)-(Collection<UInt8>)``.
    public init(serialized bytes: [UInt8]) throws(SignalError) {
        guard bytes.count >= 1 + Self.macByteCount else {
            throw SignalError(.invalidMessage, "SignalMessage too short")
        }
        let version = try WireVersion.parse(bytes[0], current: Self.currentVersion)

        var ratchetKey: [UInt8]?
        var counter: UInt32?
        var previousCounter: UInt32?
        var ciphertext: [UInt8]?
        var reader = ProtobufReader(bytes[1..<(bytes.count - Self.macByteCount)])
        while let field = try reader.next() {
            switch field.field {
            case 1: ratchetKey = try field.value.bytes()
            case 2: counter = try field.value.uint32()
            case 3: previousCounter = try field.value.uint32()
            case 4: ciphertext = try field.value.bytes()
            case 5, 6: _ = try field.value.slice()  // pq_ratchet, addresses: known, ignored
            default: continue  // unknown fields are skipped
            }
        }
        guard let ratchetKey, let counter, let ciphertext else {
            throw SignalError(.invalidMessage, "SignalMessage is missing a required field")
        }

        self.messageVersion = version
        self.senderRatchetKey = try ECPublicKey(serialized: ratchetKey)
        self.counter = counter
        self.previousCounter = previousCounter ?? 0
        self.ciphertext = ciphertext
        self.serialized = bytes
    }

    /// Checks the message's MAC, comparing in constant time.
    ///
    /// - Parameters:
    ///   - senderIdentityKey: The sender's identity key.
    ///   - receiverIdentityKey: The receiver's identity key.
    ///   - macKey: The message's HMAC-SHA256 key.
    /// - Returns: `true` only when the 8-byte MAC matches.
    public func verifyMAC(senderIdentityKey: IdentityKey, receiverIdentityKey: IdentityKey, macKey: SecretBytes) -> Bool
    {
        let split = serialized.count - Self.macByteCount
        let expected = Self.mac(
            macKey: macKey, sender: senderIdentityKey, receiver: receiverIdentityKey, body: serialized[..<split])
        return ConstantTime.equals(expected, serialized[split...])
    }

    /// The first 8 bytes of HMAC-SHA256(macKey, sender ‖ receiver ‖ body).
    private static func mac(
        macKey: SecretBytes, sender: IdentityKey, receiver: IdentityKey, body: ArraySlice<UInt8>
    ) -> [UInt8] {
        // HMACSHA256 is swift-crypto's SHA256 without the generic HMAC wrapper (same bytes,
        // a fraction of the runtime overhead; this runs for every message).
        var hmac = macKey.withUnsafeBytes { HMACSHA256(key: $0) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * ECPublicKey.serializedByteCount) { identities in
            let raw = UnsafeMutableRawBufferPointer(identities)
            raw[0] = ECPublicKey.typeByte
            raw[33] = ECPublicKey.typeByte
            sender.publicKey.rawRepresentation.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: raw[1..<33]).copyMemory(from: $0)
            }
            receiver.publicKey.rawRepresentation.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: raw[34..<66]).copyMemory(from: $0)
            }
            hmac.update(UnsafeRawBufferPointer(raw))
        }
        body.withUnsafeBytes { hmac.update($0) }
        return Array(hmac.finalize().prefix(macByteCount))
    }
}
