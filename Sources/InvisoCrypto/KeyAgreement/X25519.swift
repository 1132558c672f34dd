public import Crypto
public import Foundation

/// X25519 Diffie–Hellman (RFC 7748) that refuses contributory failures.
///
/// swift-crypto computes the shared secret for any 32-byte public key, including the
/// low-order points that force the result to all zeros. Protocols built here must not
/// continue with such a secret (an attacker who substitutes a low-order key would know
/// the "shared" key), so ``sharedSecret(_:with:)`` throws instead.
public enum X25519 {
    /// The length of public keys, private keys and shared secrets, in bytes.
    public static let keyByteCount = 32

    /// Computes the X25519 shared secret of `privateKey` and the peer's raw public key.
    ///
    /// - Throws: ``X25519Error`` `.invalidPublicKey` when `publicKey` is not 32 bytes, and
    ///   `.allZeroSharedSecret` when the result is all zeros (a low-order peer key).
    public static func sharedSecret(
        _ privateKey: Curve25519.KeyAgreement.PrivateKey,
        with publicKey: some ContiguousBytes
    ) throws(X25519Error) -> SecretBytes {
        let peer: Curve25519.KeyAgreement.PublicKey
        do {
            peer = try publicKey.withUnsafeBytes { raw in
                guard raw.count == keyByteCount else { throw X25519Error.invalidPublicKey }
                return try Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw)
            }
        } catch {
            throw .invalidPublicKey
        }
        let shared: SharedSecret
        do {
            shared = try privateKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            // BoringSSL reports the all-zero output as a failure on some platforms.
            throw .allZeroSharedSecret
        }
        let secret = shared.withUnsafeBytes { SecretBytes($0) }
        if secret.withUnsafeBytes({ ConstantTime.isAllZero($0) }) {
            throw .allZeroSharedSecret
        }
        return secret
    }
}

/// Why an X25519 agreement was refused.
public struct X25519Error: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidPublicKey
        case allZeroSharedSecret
    }

    private let code: Code

    /// The peer's public key is not a 32-byte string.
    public static let invalidPublicKey = X25519Error(code: .invalidPublicKey)
    /// The agreement produced the all-zero secret: the peer key has low order.
    public static let allZeroSharedSecret = X25519Error(code: .allZeroSharedSecret)

    /// A short human-readable reason, free of key material.
    public var description: String {
        switch code {
        case .invalidPublicKey: "X25519 public key must be 32 bytes"
        case .allZeroSharedSecret: "X25519 agreement produced the all-zero secret (low-order public key)"
        }
    }
}
