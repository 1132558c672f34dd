/// The message that opens a session (libsignal `PreKeySignalMessage`,
/// ``CiphertextMessageType/preKey``): the PQXDH (version 4) or X3DH (version 3) parameters
/// plus the first ``SignalMessage``.
///
/// Wire layout, byte-compatible with libsignal: `versionByte ‖ protobuf`, no MAC of its own
/// (the inner message carries one). `versionByte` = `(messageVersion << 4) | 4`.
///
/// Protobuf fields, written in ascending order, optional ones only when present:
/// `1: pre_key_id` (optional), `2: base_key` (33 bytes), `3: identity_key` (33 bytes),
/// `4: message` (a serialized ``SignalMessage``), `5: registration_id`,
/// `6: signed_pre_key_id`, `7: kyber_pre_key_id`, `8: kyber_ciphertext`
/// (`0x08 ‖ 1568 bytes`).
///
/// Version 4 messages carry both Kyber fields; version 3 messages carry neither.
public struct PreKeySignalMessage: Sendable, Hashable {
    /// The newest message version (PQXDH); also the low nibble of the version byte.
    public static let currentVersion: UInt8 = 4
    /// libsignal's key-type byte for Kyber1024, which prefixes the ciphertext on the wire.
    public static let kyberTypeByte: UInt8 = 0x08
    /// The length of a raw Kyber1024 ciphertext (without the type byte).
    public static let kyberCiphertextByteCount = 1568

    /// The session's message version: 4 (PQXDH) or 3 (X3DH).
    public let messageVersion: UInt8
    /// The sender's registration id (0 when the field is absent).
    public let registrationID: UInt32
    /// The id of the recipient's one-time pre-key that was used, if any.
    public let preKeyID: UInt32?
    /// The id of the recipient's signed pre-key that was used.
    public let signedPreKeyID: UInt32
    /// The id of the recipient's Kyber pre-key that was used (version 4 only).
    public let kyberPreKeyID: UInt32?
    /// The raw 1568-byte Kyber1024 ciphertext, without the `0x08` type byte (version 4 only).
    public let kyberCiphertext: [UInt8]?
    /// The sender's ephemeral base key.
    public let baseKey: ECPublicKey
    /// The sender's identity key.
    public let identityKey: IdentityKey
    /// The first Double Ratchet message of the session.
    public let message: SignalMessage
    /// The whole message as it goes on the wire.
    public let serialized: [UInt8]

    /// Builds a message.
    ///
    /// - Parameters:
    ///   - messageVersion: 3 or 4; must equal `message.messageVersion`.
    ///   - registrationID: The sender's registration id.
    ///   - preKeyID: The recipient's one-time pre-key id, if one was used.
    ///   - signedPreKeyID: The recipient's signed pre-key id.
    ///   - kyberPreKeyID: The recipient's Kyber pre-key id: required for version 4, absent for 3.
    ///   - kyberCiphertext: The raw 1568-byte Kyber1024 ciphertext (no type byte): required
    ///     for version 4, absent for 3.
    ///   - baseKey: The sender's ephemeral base key.
    ///   - identityKey: The sender's identity key.
    ///   - message: The inner Double Ratchet message.
    /// - Throws: ``SignalError/invalidArgument`` when the version is not 3 or 4, differs from
    ///   the inner message's, the Kyber fields do not match the version, or the Kyber
    ///   ciphertext is not 1568 bytes.
    public init(
        messageVersion: UInt8,
        registrationID: UInt32,
        preKeyID: UInt32?,
        signedPreKeyID: UInt32,
        kyberPreKeyID: UInt32?,
        kyberCiphertext: [UInt8]?,
        baseKey: ECPublicKey,
        identityKey: IdentityKey,
        message: SignalMessage
    ) throws(SignalError) {
        guard (WireVersion.oldestSupported...Self.currentVersion).contains(messageVersion) else {
            throw SignalError(.invalidArgument, "PreKeySignalMessage version must be 3 or 4")
        }
        guard message.messageVersion == messageVersion else {
            throw SignalError(.invalidArgument, "inner SignalMessage has a different version")
        }
        switch (messageVersion, kyberPreKeyID, kyberCiphertext) {
        case (4, .some, .some(let ciphertext)):
            guard ciphertext.count == Self.kyberCiphertextByteCount else {
                throw SignalError(.invalidArgument, "Kyber1024 ciphertext must be 1568 bytes")
            }
        case (3, nil, nil):
            break
        default:
            throw SignalError(.invalidArgument, "version 4 needs both Kyber fields, version 3 neither")
        }

        var writer = ProtobufWriter()
        if let preKeyID { writer.writeUInt32(1, preKeyID) }
        writer.writeBytes(2, baseKey.serialized)
        writer.writeBytes(3, identityKey.serialized)
        writer.writeBytes(4, message.serialized)
        writer.writeUInt32(5, registrationID)
        writer.writeUInt32(6, signedPreKeyID)
        if let kyberPreKeyID { writer.writeUInt32(7, kyberPreKeyID) }
        if let kyberCiphertext { writer.writeBytes(8, [Self.kyberTypeByte] + kyberCiphertext) }

        self.messageVersion = messageVersion
        self.registrationID = registrationID
        self.preKeyID = preKeyID
        self.signedPreKeyID = signedPreKeyID
        self.kyberPreKeyID = kyberPreKeyID
        self.kyberCiphertext = kyberCiphertext
        self.baseKey = baseKey
        self.identityKey = identityKey
        self.message = message
        self.serialized = [WireVersion.byte(version: messageVersion, current: Self.currentVersion)] + writer.bytes
    }

    /// Parses a message received from the wire. The inner message's MAC is not checked here.
    ///
    /// - Throws: ``SignalError/invalidMessage`` for an empty input, a malformed protobuf, a
    ///   missing `base_key`, `identity_key`, `message` or `signed_pre_key_id`, Kyber fields
    ///   that do not match the version (version 4 needs both, version 3 neither), a Kyber
    ///   ciphertext that is not `0x08 ‖ 1568 bytes`, or an inner message of another version;
    ///   ``SignalError/legacyVersion`` / ``SignalError/unrecognizedVersion`` for a version
    ///   below 3 / above 4; any error of ``SignalMessage/init(serialized:)`` for the inner
    ///   message; ``SignalError/invalidKey`` / ``SignalError/invalidKeyType`` for a key that
    ///   does not parse.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        try self.init(serialized: Array(serialized))
    }

    /// Parses the serialized form (the non-generic fast path for byte arrays).
    ///
    /// - Throws: the same errors as ``init(serialized:)-(Collection<UInt8>)``.
    public init(serialized bytes: [UInt8]) throws(SignalError) {
        guard let first = bytes.first else { throw SignalError(.invalidMessage, "PreKeySignalMessage is empty") }
        let version = try WireVersion.parse(first, current: Self.currentVersion)

        var preKeyID: UInt32?
        var baseKey: [UInt8]?
        var identityKey: [UInt8]?
        var message: [UInt8]?
        var registrationID: UInt32?
        var signedPreKeyID: UInt32?
        var kyberPreKeyID: UInt32?
        var kyberCiphertext: [UInt8]?
        var reader = ProtobufReader(bytes[1...])
        while let field = try reader.next() {
            switch field.field {
            case 1: preKeyID = try field.value.uint32()
            case 2: baseKey = try field.value.bytes()
            case 3: identityKey = try field.value.bytes()
            case 4: message = try field.value.bytes()
            case 5: registrationID = try field.value.uint32()
            case 6: signedPreKeyID = try field.value.uint32()
            case 7: kyberPreKeyID = try field.value.uint32()
            case 8: kyberCiphertext = try field.value.bytes()
            default: continue
            }
        }
        guard let baseKey, let identityKey, let message, let signedPreKeyID else {
            throw SignalError(.invalidMessage, "PreKeySignalMessage is missing a required field")
        }
        var rawKyberCiphertext: [UInt8]?
        switch (version, kyberPreKeyID, kyberCiphertext) {
        case (4, .some, .some(let ciphertext)):
            guard ciphertext.count == 1 + Self.kyberCiphertextByteCount, ciphertext[0] == Self.kyberTypeByte else {
                throw SignalError(.invalidMessage, "Kyber ciphertext must be 0x08 followed by 1568 bytes")
            }
            rawKyberCiphertext = Array(ciphertext.dropFirst())
        case (3, nil, nil):
            break
        default:
            throw SignalError(.invalidMessage, "Kyber fields do not match the message version")
        }
        let inner = try SignalMessage(serialized: message)
        guard inner.messageVersion == version else {
            throw SignalError(.invalidMessage, "inner SignalMessage has a different version")
        }

        self.messageVersion = version
        self.registrationID = registrationID ?? 0
        self.preKeyID = preKeyID
        self.signedPreKeyID = signedPreKeyID
        self.kyberPreKeyID = kyberPreKeyID
        self.kyberCiphertext = rawKyberCiphertext
        self.baseKey = try ECPublicKey(serialized: baseKey)
        self.identityKey = try IdentityKey(serialized: identityKey)
        self.message = inner
        self.serialized = bytes
    }
}
