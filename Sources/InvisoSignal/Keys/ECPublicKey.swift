public import Foundation
public import InvisoCrypto

/// A Curve25519 public key as libsignal serializes it: the type byte `0x05` followed by
/// the 32-byte Montgomery u-coordinate.
///
/// Used for identity keys, signed and one-time pre-keys, base keys and ratchet keys.
public struct ECPublicKey: Hashable, Sendable {
    /// libsignal's type byte for Curve25519 ("DJB") keys.
    public static let typeByte: UInt8 = 0x05
    /// The serialized length: type byte plus 32 bytes.
    public static let serializedByteCount = 33

    /// The raw 32-byte u-coordinate.
    public let rawRepresentation: [UInt8]

    /// Creates a key from its raw 32-byte u-coordinate.
    ///
    /// - Throws: ``SignalError/invalidKey`` for any other length.
    public init(rawRepresentation: some Collection<UInt8>) throws(SignalError) {
        guard rawRepresentation.count == 32 else { throw SignalError(.invalidKey, "Curve25519 key must be 32 bytes") }
        self.rawRepresentation = Array(rawRepresentation)
    }

    /// Parses the 33-byte serialized form.
    ///
    /// - Throws: ``SignalError/invalidKey`` for a wrong length, ``SignalError/invalidKeyType``
    ///   for a type byte other than `0x05`.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        guard serialized.count == Self.serializedByteCount else {
            throw SignalError(.invalidKey, "serialized Curve25519 key must be 33 bytes")
        }
        guard serialized.first == Self.typeByte else { throw SignalError(.invalidKeyType) }
        self.rawRepresentation = Array(serialized.dropFirst())
    }

    /// The 33-byte serialized form (`0x05 ‖ u`).
    public var serialized: [UInt8] { [Self.typeByte] + rawRepresentation }

    /// Checks an XEdDSA signature made by the matching private key (libsignal's rule: the
    /// Edwards sign bit travels in bit 7 of the last signature byte).
    ///
    /// - Returns: `true` only for a valid 64-byte signature over `message`.
    public func verifySignature(_ signature: some ContiguousBytes, for message: some ContiguousBytes) -> Bool {
        XEdDSA.verify(signature, for: message, publicKey: rawRepresentation)
    }
}

// MARK: - CustomStringConvertible

extension ECPublicKey: CustomStringConvertible {
    /// The serialized key in hex (public keys are not secret).
    public var description: String { "ECPublicKey(\(Hex.encode(serialized)))" }
}
