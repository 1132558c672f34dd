public import Crypto
public import Foundation

/// A Curve25519 key pair for Noise, with its public key cached as bytes.
public struct NoiseKeyPair: Sendable {
    /// The private key (kept in swift-crypto's type, which wipes itself).
    public let privateKey: Curve25519.KeyAgreement.PrivateKey
    /// The 32-byte public key.
    public let publicKey: [UInt8]

    /// Wraps an existing private key.
    public init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = Array(privateKey.publicKey.rawRepresentation)
    }

    /// Imports a raw 32-byte private key.
    /// - Throws: ``NoiseError/invalidKey`` if `rawPrivateKey` is not 32 bytes.
    public init(rawPrivateKey: some ContiguousBytes) throws(NoiseError) {
        let key: Curve25519.KeyAgreement.PrivateKey
        do {
            key = try rawPrivateKey.withUnsafeBytes { raw in
                guard raw.count == 32 else { throw NoiseError.invalidKey }
                return try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
            }
        } catch {
            throw .invalidKey
        }
        self.init(privateKey: key)
    }

    /// Generates a fresh key pair from the system's secure random source.
    public static func generate() -> NoiseKeyPair {
        NoiseKeyPair(privateKey: Curve25519.KeyAgreement.PrivateKey())
    }
}

// MARK: - Redacted description

extension NoiseKeyPair: CustomStringConvertible {
    /// Shows the public key only.
    public var description: String {
        "NoiseKeyPair(public: \(publicKey.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()))"
    }
}

/// The two parties of a handshake. The initiator writes the first message.
public enum NoiseRole: Sendable, Hashable {
    /// Writes the first handshake message.
    case initiator
    /// Reads the first handshake message.
    case responder

    /// The other party.
    public var peer: NoiseRole { self == .initiator ? .responder : .initiator }
}
