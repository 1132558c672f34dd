public import Foundation
public import InvisoCrypto

/// Hands a sender key to group members (libsignal `SenderKeyDistributionMessage`). It is
/// sent to each member inside a 1:1 session, never in the clear: it holds the chain key.
///
/// Wire layout, byte-compatible with libsignal:
///
///     0x33 ‖ protobuf
///
/// with `1: distribution_uuid` (16 bytes), `2: chain_id`, `3: iteration`,
/// `4: chain_key` (32 bytes), `5: signing_key` (33-byte serialized public key), in that
/// order.
///
/// The chain key is kept in ``SecretBytes``; ``serialized`` re-encodes the message each
/// time it is read (the canonical encoding, identical to libsignal's), so no long-lived
/// plain copy of the key is kept. The description is redacted.
public struct SenderKeyDistributionMessage: Sendable {
    /// The sender-key message version; also the low nibble of the version byte.
    public static let currentVersion: UInt8 = 3
    /// The length of a sender chain key.
    public static let chainKeyByteCount = 32

    /// The message version (always 3).
    public let messageVersion: UInt8
    /// The distribution (group) the sender key belongs to.
    public let distributionID: UUID
    /// The sender's chain id.
    public let chainID: UInt32
    /// The iteration of ``chainKey``.
    public let iteration: UInt32
    /// The sender's chain key at ``iteration`` (32 bytes).
    public let chainKey: SecretBytes
    /// The sender's public signing key, which verifies every ``SenderKeyMessage`` of the chain.
    public let signingKey: ECPublicKey

    /// Builds a message.
    ///
    /// - Parameters:
    ///   - distributionID: The distribution id.
    ///   - chainID: The sender's chain id.
    ///   - iteration: The iteration of `chainKey`.
    ///   - chainKey: The 32-byte chain key.
    ///   - signingKey: The sender's public signing key.
    /// - Throws: ``SignalError/invalidArgument`` when the chain key is not 32 bytes.
    public init(
        distributionID: UUID, chainID: UInt32, iteration: UInt32, chainKey: SecretBytes, signingKey: ECPublicKey
    ) throws(SignalError) {
        guard chainKey.count == Self.chainKeyByteCount else {
            throw SignalError(.invalidArgument, "sender chain key must be 32 bytes")
        }
        self.messageVersion = Self.currentVersion
        self.distributionID = distributionID
        self.chainID = chainID
        self.iteration = iteration
        self.chainKey = chainKey
        self.signingKey = signingKey
    }

    /// Parses a message received (decrypted) from a 1:1 session.
    ///
    /// - Throws: ``SignalError/invalidMessage`` for an empty input, a malformed protobuf, a
    ///   missing field, a distribution id that is not 16 bytes or a chain key that is not 32
    ///   bytes; ``SignalError/legacyVersion`` / ``SignalError/unrecognizedVersion`` for a
    ///   version below / above 3; ``SignalError/invalidKey`` /
    ///   ``SignalError/invalidKeyType`` for a signing key that does not parse.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        let bytes = Array(serialized)
        guard let first = bytes.first else {
            throw SignalError(.invalidMessage, "SenderKeyDistributionMessage is empty")
        }
        let version = try WireVersion.parse(first, current: Self.currentVersion)

        var distributionID: [UInt8]?
        var chainID: UInt32?
        var iteration: UInt32?
        var chainKey: SecretBytes?
        var signingKey: [UInt8]?
        var reader = ProtobufReader(bytes[1...])
        while let field = try reader.next() {
            switch field.field {
            case 1: distributionID = try field.value.bytes()
            case 2: chainID = try field.value.uint32()
            case 3: iteration = try field.value.uint32()
            case 4: chainKey = SecretBytes(try field.value.slice())
            case 5: signingKey = try field.value.bytes()
            default: continue
            }
        }
        guard let distributionID, let chainID, let iteration, let chainKey, let signingKey else {
            throw SignalError(.invalidMessage, "SenderKeyDistributionMessage is missing a required field")
        }
        guard let uuid = UUID(bytes: distributionID) else {
            throw SignalError(.invalidMessage, "distribution id must be 16 bytes")
        }
        guard chainKey.count == Self.chainKeyByteCount else {
            throw SignalError(.invalidMessage, "sender chain key must be 32 bytes")
        }

        self.messageVersion = version
        self.distributionID = uuid
        self.chainID = chainID
        self.iteration = iteration
        self.chainKey = chainKey
        self.signingKey = try ECPublicKey(serialized: signingKey)
    }

    /// The message's wire bytes. They contain the chain key: encrypt them for each member
    /// and do not log them.
    public var serialized: [UInt8] {
        var writer = ProtobufWriter()
        writer.writeBytes(1, distributionID.bytes)
        writer.writeUInt32(2, chainID)
        writer.writeUInt32(3, iteration)
        chainKey.withUnsafeBytes { writer.writeBytes(4, $0) }
        writer.writeBytes(5, signingKey.serialized)
        return [WireVersion.byte(version: messageVersion, current: Self.currentVersion)] + writer.bytes
    }
}

// MARK: - Equatable

extension SenderKeyDistributionMessage: Equatable {
    /// Compares every field; the chain keys in constant time.
    public static func == (lhs: SenderKeyDistributionMessage, rhs: SenderKeyDistributionMessage) -> Bool {
        lhs.messageVersion == rhs.messageVersion && lhs.distributionID == rhs.distributionID
            && lhs.chainID == rhs.chainID && lhs.iteration == rhs.iteration && lhs.signingKey == rhs.signingKey
            && lhs.chainKey == rhs.chainKey
    }
}

// MARK: - Redacted descriptions

extension SenderKeyDistributionMessage: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The public fields; the chain key is redacted.
    public var description: String {
        "SenderKeyDistributionMessage(distributionID: \(distributionID), chainID: \(chainID), "
            + "iteration: \(iteration), chainKey: <redacted>)"
    }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror without the chain key.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "distributionID": distributionID, "chainID": chainID, "iteration": iteration,
                "signingKey": signingKey,
            ], displayStyle: .struct)
    }
}
