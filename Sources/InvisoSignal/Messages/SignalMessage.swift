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
    /// The whole message as it goes on the wire, MAC included.
    public let serialized: [UInt8]
    /// Where the ciphertext lies in ``serialized``.
    private let ciphertextRange: Range<Int>

    /// The AES-256-CBC ciphertext of the message body.
    public var ciphertext: [UInt8] { Array(serialized[ciphertextRange]) }

    /// The ciphertext as a view into ``serialized`` (no copy).
    package var ciphertextBytes: ArraySlice<UInt8> { serialized[ciphertextRange] }

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
        try Self.checkVersion(messageVersion)
        self = macKey.withUnsafeBytes { macKey in
            ciphertext.withUnsafeBytes { ciphertext in
                Self(
                    checkedVersion: messageVersion, macKey: macKey, senderRatchetKey: senderRatchetKey,
                    counter: counter, previousCounter: previousCounter, ciphertext: ciphertext,
                    senderIdentityKey: senderIdentityKey, receiverIdentityKey: receiverIdentityKey)
            }
        }
    }

    /// Writes versionByte ‖ protobuf ‖ MAC into one buffer sized up front: the public
    /// initializer after ``checkVersion(_:)``, with the MAC key as a view into the message
    /// keys and the ciphertext as a view into the cipher's output (neither is copied).
    package init(
        checkedVersion messageVersion: UInt8, macKey: UnsafeRawBufferPointer, senderRatchetKey: ECPublicKey,
        counter: UInt32, previousCounter: UInt32, ciphertext: UnsafeRawBufferPointer, senderIdentityKey: IdentityKey,
        receiverIdentityKey: IdentityKey
    ) {
        // version 1, key 2 + 33, two varint fields ≤ 6 each, ciphertext tag/length ≤ 6, MAC 8.
        var writer = ProtobufWriter(capacity: 1 + 35 + 12 + 6 + ciphertext.count + Self.macByteCount)
        writer.appendRaw(WireVersion.byte(version: messageVersion, current: Self.currentVersion))
        writer.writeKey(1, senderRatchetKey)
        writer.writeUInt32(2, counter)
        writer.writeUInt32(3, previousCounter)
        writer.writeBytes(4, ciphertext)
        let ciphertextEnd = writer.count
        var serialized = writer.finish()
        Self.withMAC(macKey: macKey, sender: senderIdentityKey, receiver: receiverIdentityKey, body: serialized[...]) {
            serialized.append(contentsOf: $0)
        }
        self.messageVersion = messageVersion
        self.senderRatchetKey = senderRatchetKey
        self.counter = counter
        self.previousCounter = previousCounter
        self.serialized = serialized
        self.ciphertextRange = (ciphertextEnd - ciphertext.count)..<ciphertextEnd
    }

    /// Throws ``SignalError/invalidArgument`` unless `messageVersion` is 3 or 4.
    package static func checkVersion(_ messageVersion: UInt8) throws(SignalError) {
        guard (WireVersion.oldestSupported...Self.currentVersion).contains(messageVersion) else {
            throw SignalError(.invalidArgument, "SignalMessage version must be 3 or 4")
        }
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

        var ratchetKey: ArraySlice<UInt8>?
        var counter: UInt32?
        var previousCounter: UInt32?
        var ciphertext: ArraySlice<UInt8>?
        var reader = ProtobufReader(bytes[1..<(bytes.count - Self.macByteCount)])
        while let field = try reader.next() {
            switch field.field {
            case 1: ratchetKey = try field.value.slice()
            case 2: counter = try field.value.uint32()
            case 3: previousCounter = try field.value.uint32()
            case 4: ciphertext = try field.value.slice()
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
        self.serialized = bytes
        // The reader's slices keep the indices of `bytes`.
        self.ciphertextRange = ciphertext.startIndex..<ciphertext.endIndex
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
        macKey.withUnsafeBytes {
            verifyMAC(senderIdentityKey: senderIdentityKey, receiverIdentityKey: receiverIdentityKey, macKey: $0)
        }
    }

    /// ``verifyMAC(senderIdentityKey:receiverIdentityKey:macKey:)-(_,_,SecretBytes)`` with
    /// the MAC key as a view into the message keys.
    package func verifyMAC(
        senderIdentityKey: IdentityKey, receiverIdentityKey: IdentityKey, macKey: UnsafeRawBufferPointer
    ) -> Bool {
        let split = serialized.count - Self.macByteCount
        return Self.withMAC(
            macKey: macKey, sender: senderIdentityKey, receiver: receiverIdentityKey, body: serialized[..<split]
        ) { expected in
            serialized.withUnsafeBytes { ConstantTime.equals(expected, UnsafeRawBufferPointer(rebasing: $0[split...])) }
        }
    }

    /// Calls `body` with the first 8 bytes of HMAC-SHA256(macKey, sender ‖ receiver ‖ body),
    /// held in a stack buffer that is wiped afterwards.
    private static func withMAC<Result>(
        macKey: UnsafeRawBufferPointer, sender: IdentityKey, receiver: IdentityKey, body: ArraySlice<UInt8>,
        _ use: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        // HMACSHA256 is swift-crypto's SHA256 without the generic HMAC wrapper (same bytes,
        // a fraction of the runtime overhead; this runs for every message).
        var hmac = HMACSHA256(key: macKey)
        return withUnsafeTemporaryAllocation(byteCount: 2 * ECPublicKey.serializedByteCount, alignment: 16) { raw in
            sender.publicKey.serialize(into: raw)
            receiver.publicKey.serialize(into: UnsafeMutableRawBufferPointer(rebasing: raw[33...]))
            hmac.update(UnsafeRawBufferPointer(raw))
            body.withUnsafeBytes { hmac.update($0) }
            // The 66-byte identities buffer is reused for the 32-byte tag.
            let tag = UnsafeMutableRawBufferPointer(rebasing: raw[0..<HMACSHA256.byteCount])
            hmac.finalize(into: tag)
            defer { SecureWipe.wipe(tag) }
            return use(UnsafeRawBufferPointer(rebasing: tag[0..<macByteCount]))
        }
    }
}
