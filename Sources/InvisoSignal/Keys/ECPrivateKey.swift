package import Crypto
public import Foundation
public import InvisoCrypto

/// A Curve25519 private key, used both for X25519 agreement and XEdDSA signatures.
///
/// The key stays inside swift-crypto's type; its bytes are only handed out as
/// ``SecretBytes`` for serialization into a store. The description is redacted.
public struct ECPrivateKey: Sendable {
    package let key: Curve25519.KeyAgreement.PrivateKey

    /// Creates a fresh random key from the system's secure generator.
    public init() {
        self.key = Curve25519.KeyAgreement.PrivateKey()
    }

    /// Creates a key from 32 bytes drawn from `generator` (which must be cryptographically
    /// secure outside tests).
    public init(using generator: inout some RandomNumberGenerator) {
        let seed = SecretBytes(randomCount: 32, using: &generator)
        // 32 bytes are always a valid X25519 scalar (it is clamped on use).
        self.key = seed.withUnsafeBytes { try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }

    /// Restores a key from its 32 raw bytes.
    ///
    /// - Throws: ``SignalError/invalidKey`` for any other length.
    public init(rawRepresentation: some ContiguousBytes) throws(SignalError) {
        do {
            let key = try rawRepresentation.withUnsafeBytes { raw in
                guard raw.count == 32 else { throw SignalError(.invalidKey, "private key must be 32 bytes") }
                return try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
            }
            self.key = key
        } catch {
            throw SignalError(.invalidKey, "private key must be 32 bytes")
        }
    }

    /// The 32 raw private-key bytes, for storage.
    public var rawRepresentation: SecretBytes {
        SecretBytes(key.rawRepresentation)
    }

    /// The matching public key.
    public var publicKey: ECPublicKey {
        // swift-crypto always produces 32 bytes.
        try! ECPublicKey(rawRepresentation: key.publicKey.rawRepresentation)
    }

    /// X25519 agreement with `publicKey`.
    ///
    /// - Throws: ``SignalError/lowOrderPublicKey`` when the output is all zeros.
    public func agreement(with publicKey: ECPublicKey) throws(SignalError) -> SecretBytes {
        do {
            return try X25519.sharedSecret(key, with: publicKey.rawRepresentation)
        } catch {
            throw SignalError(.lowOrderPublicKey)
        }
    }

    /// Signs `message` with XEdDSA (libsignal's sign-bit convention) using fresh system randomness.
    public func sign(_ message: some ContiguousBytes) -> [UInt8] {
        XEdDSA.sign(message, with: key)
    }

    /// Signs `message` with XEdDSA, drawing the 64 random bytes from `generator`.
    public func sign(_ message: some ContiguousBytes, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        XEdDSA.sign(message, with: key, using: &generator)
    }
}

// MARK: - Redacted descriptions

extension ECPrivateKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Always redacted.
    public var description: String { "ECPrivateKey(<redacted>)" }
    /// Always redacted.
    public var debugDescription: String { description }
    /// No children: the key never shows up in a dump.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
