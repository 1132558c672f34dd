public import Foundation
import InvisoCrypto

/// A Curve25519 public key as libsignal serializes it: the type byte `0x05` followed by
/// the 32-byte Montgomery u-coordinate.
///
/// Used for identity keys, signed and one-time pre-keys, base keys and ratchet keys.
public struct ECPublicKey: Sendable {
    /// libsignal's type byte for Curve25519 ("DJB") keys.
    public static let typeByte: UInt8 = 0x05
    /// The serialized length: type byte plus 32 bytes.
    public static let serializedByteCount = 33

    /// The 32 bytes held inline (four words, no heap storage), so keys copy and compare
    /// without reference counting — sessions hold several and copy them on every message.
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// The raw 32-byte u-coordinate (a new array on each access; hot paths use
    /// ``withUnsafeRawBytes(_:)``).
    public var rawRepresentation: [UInt8] {
        withUnsafeRawBytes { Array($0) }
    }

    /// Calls `body` with the raw 32-byte u-coordinate, without copying it to the heap.
    public func withUnsafeRawBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var words = self.words
        return try Swift.withUnsafeBytes(of: &words) { raw throws(Failure) in try body(UnsafeRawBufferPointer(raw)) }
    }

    /// Creates a key from its raw 32-byte u-coordinate.
    ///
    /// - Throws: ``SignalError/invalidKey`` for any other length or a non-canonical
    ///   encoding (see ``init(serialized:)``).
    public init(rawRepresentation: some Collection<UInt8>) throws(SignalError) {
        guard rawRepresentation.count == 32 else { throw SignalError(.invalidKey, "Curve25519 key must be 32 bytes") }
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: rawRepresentation) }
        try checkCanonical()
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
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: serialized.dropFirst()) }
        try checkCanonical()
    }

    /// Rejects encodings of u that are not the canonical one: bit 255 set, or u ≥ p =
    /// 2²⁵⁵ − 19. X25519 ignores bit 255 and reduces u mod p, so each such encoding names
    /// the same point as a canonical one, and a message whose base key differs only there
    /// would still decrypt while looking like a different session (a replayed pre-key
    /// message would then set up a second session). Keys made by scalar multiplication
    /// are always canonical; libsignal does not check this (docs/signal.md).
    private func checkCanonical() throws(SignalError) {
        let canonical = withUnsafeRawBytes { raw in
            if raw[31] & 0x80 != 0 { return false }
            // u ≥ p exactly when the top byte is 0x7f, bytes 1…30 are 0xff and byte 0 ≥ 0xed.
            guard raw[31] == 0x7f, raw[0] >= 0xed else { return true }
            return !(1...30).allSatisfy { raw[$0] == 0xff }
        }
        guard canonical else { throw SignalError(.invalidKey, "non-canonical Curve25519 key") }
    }

    /// The 33-byte serialized form (`0x05 ‖ u`).
    public var serialized: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.serializedByteCount) { buffer, count in
            serialize(into: UnsafeMutableRawBufferPointer(buffer))
            count = Self.serializedByteCount
        }
    }

    /// Writes the 33-byte serialized form to the start of `output`.
    package func serialize(into output: UnsafeMutableRawBufferPointer) {
        output[0] = Self.typeByte
        withUnsafeRawBytes { UnsafeMutableRawBufferPointer(rebasing: output[1..<Self.serializedByteCount]).copyMemory(from: $0) }
    }

    /// Checks an XEdDSA signature made by the matching private key (libsignal's rule: the
    /// Edwards sign bit travels in bit 7 of the last signature byte).
    ///
    /// - Returns: `true` only for a valid 64-byte signature over `message`.
    public func verifySignature(_ signature: some ContiguousBytes, for message: some ContiguousBytes) -> Bool {
        XEdDSA.verify(signature, for: message, publicKey: rawRepresentation)
    }
}

// MARK: - Hashable

extension ECPublicKey: Hashable {
    /// Byte equality (public keys are not secret).
    public static func == (lhs: ECPublicKey, rhs: ECPublicKey) -> Bool {
        lhs.words == rhs.words
    }

    /// Hashes the 32 bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeRawBytes { hasher.combine(bytes: $0) }
    }
}

// MARK: - CustomStringConvertible

extension ECPublicKey: CustomStringConvertible {
    /// The serialized key in hex (public keys are not secret).
    public var description: String { "ECPublicKey(\(Hex.encode(serialized)))" }
}
