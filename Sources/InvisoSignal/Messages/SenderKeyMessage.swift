public import Foundation

/// A group message encrypted with a sender key (libsignal `SenderKeyMessage`,
/// ``CiphertextMessageType/senderKey``).
///
/// Wire layout, byte-compatible with libsignal:
///
///     0x33 ‖ protobuf ‖ signature (64 bytes)
///
/// - `0x33` = `(3 << 4) | 3`: sender-key message version 3.
/// - `protobuf` = `1: distribution_uuid` (16 bytes), `2: chain_id`, `3: iteration`,
///   `4: ciphertext`, in that order.
/// - `signature` = an XEdDSA signature by the sender's signing key over every byte before it.
public struct SenderKeyMessage: Sendable, Hashable {
    /// The length of the trailing XEdDSA signature.
    public static let signatureByteCount = 64
    /// The sender-key message version; also the low nibble of the version byte.
    public static let currentVersion: UInt8 = 3

    /// The message version (always 3).
    public let messageVersion: UInt8
    /// The distribution (group) the sender key belongs to.
    public let distributionID: UUID
    /// The sender's chain id (31 bits when made by this library).
    public let chainID: UInt32
    /// The position of this message in the sender's chain.
    public let iteration: UInt32
    /// The AES-256-CBC ciphertext.
    public let ciphertext: [UInt8]
    /// The whole message as it goes on the wire, signature included.
    public let serialized: [UInt8]

    /// Builds and signs a message, drawing the signature's randomness from `generator`.
    ///
    /// - Parameters:
    ///   - distributionID: The distribution id.
    ///   - chainID: The sender's chain id.
    ///   - iteration: The message's iteration.
    ///   - ciphertext: The encrypted body.
    ///   - signingKey: The sender's private signing key.
    ///   - generator: The source of the 64 random bytes of the XEdDSA signature; it must be
    ///     cryptographically secure outside tests.
    public init(
        distributionID: UUID,
        chainID: UInt32,
        iteration: UInt32,
        ciphertext: [UInt8],
        signingKey: ECPrivateKey,
        using generator: inout some RandomNumberGenerator
    ) {
        var writer = ProtobufWriter()
        writer.writeBytes(1, distributionID.bytes)
        writer.writeUInt32(2, chainID)
        writer.writeUInt32(3, iteration)
        writer.writeBytes(4, ciphertext)
        var serialized = [WireVersion.byte(version: Self.currentVersion, current: Self.currentVersion)]
        serialized.append(contentsOf: writer.bytes)
        serialized.append(contentsOf: signingKey.sign(serialized, using: &generator))

        self.messageVersion = Self.currentVersion
        self.distributionID = distributionID
        self.chainID = chainID
        self.iteration = iteration
        self.ciphertext = ciphertext
        self.serialized = serialized
    }

    /// Builds and signs a message with randomness from the system's secure generator.
    ///
    /// - Parameters:
    ///   - distributionID: The distribution id.
    ///   - chainID: The sender's chain id.
    ///   - iteration: The message's iteration.
    ///   - ciphertext: The encrypted body.
    ///   - signingKey: The sender's private signing key.
    public init(distributionID: UUID, chainID: UInt32, iteration: UInt32, ciphertext: [UInt8], signingKey: ECPrivateKey)
    {
        var generator = SystemRandomNumberGenerator()
        self.init(
            distributionID: distributionID, chainID: chainID, iteration: iteration, ciphertext: ciphertext,
            signingKey: signingKey, using: &generator)
    }

    /// Parses a message received from the wire. The signature is not checked here (see
    /// ``verifySignature(_:)``).
    ///
    /// - Throws: ``SignalError/invalidMessage`` when the message is shorter than 65 bytes,
    ///   the protobuf is malformed, a field is missing or the distribution id is not 16
    ///   bytes; ``SignalError/legacyVersion`` / ``SignalError/unrecognizedVersion`` for a
    ///   version below / above 3.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        let bytes = Array(serialized)
        guard bytes.count >= 1 + Self.signatureByteCount else {
            throw SignalError(.invalidMessage, "SenderKeyMessage too short")
        }
        let version = try WireVersion.parse(bytes[0], current: Self.currentVersion)

        var distributionID: [UInt8]?
        var chainID: UInt32?
        var iteration: UInt32?
        var ciphertext: [UInt8]?
        var reader = ProtobufReader(bytes[1..<(bytes.count - Self.signatureByteCount)])
        while let field = try reader.next() {
            switch field.field {
            case 1: distributionID = try field.value.bytes()
            case 2: chainID = try field.value.uint32()
            case 3: iteration = try field.value.uint32()
            case 4: ciphertext = try field.value.bytes()
            default: continue
            }
        }
        guard let distributionID, let chainID, let iteration, let ciphertext else {
            throw SignalError(.invalidMessage, "SenderKeyMessage is missing a required field")
        }
        guard let uuid = UUID(bytes: distributionID) else {
            throw SignalError(.invalidMessage, "distribution id must be 16 bytes")
        }

        self.messageVersion = version
        self.distributionID = uuid
        self.chainID = chainID
        self.iteration = iteration
        self.ciphertext = ciphertext
        self.serialized = bytes
    }

    /// Checks the trailing XEdDSA signature against the sender's signing key.
    ///
    /// - Parameter signingKey: The public signing key from the sender's distribution message.
    /// - Returns: `true` only when the signature is valid for every preceding byte.
    public func verifySignature(_ signingKey: ECPublicKey) -> Bool {
        let split = serialized.count - Self.signatureByteCount
        return signingKey.verifySignature(Array(serialized[split...]), for: Array(serialized[..<split]))
    }
}
