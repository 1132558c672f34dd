import Crypto
public import InvisoCrypto

/// A person's long-term nearby identity: an Ed25519 key pair, kept in the encrypted store.
///
/// The identity signs each connection's Noise static key (``signature(overStaticKey:)``),
/// so the key that secures a session is bound to the identity the peer pins and verifies
/// — unlike the seed, whose invite key was not signed (`docs/nearby.md`).
public struct NearbyIdentity: Sendable {
    /// The signing key.
    let privateKey: Curve25519.Signing.PrivateKey
    /// The 32-byte Ed25519 public key.
    public let publicKey: NearbyPublicIdentity

    /// A new random identity.
    public init() {
        self.init(privateKey: Curve25519.Signing.PrivateKey())
    }

    /// The identity whose 32-byte private key (seed) is `raw`.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` unless `raw` is 32 bytes.
    public init(rawPrivateKey raw: SecretBytes) throws(NearbyError) {
        guard raw.count == 32,
            let key = raw.withUnsafeBytes({ try? Curve25519.Signing.PrivateKey(rawRepresentation: $0) })
        else { throw NearbyError(.malformed, "identity private key") }
        self.init(privateKey: key)
    }

    init(privateKey: Curve25519.Signing.PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = NearbyPublicIdentity(unchecked: Array(privateKey.publicKey.rawRepresentation))
    }

    /// The private key's 32 bytes, to store (in the encrypted store only).
    public var rawPrivateKey: SecretBytes { SecretBytes(privateKey.rawRepresentation) }

    /// The identity's signature over a Noise static public key.
    public func signature(overStaticKey staticKey: [UInt8]) -> [UInt8] {
        // Signing only fails for keys swift-crypto could not have produced.
        Array(try! privateKey.signature(for: NearbyPublicIdentity.signedMessage(staticKey: staticKey)))
    }
}

// MARK: - CustomStringConvertible

extension NearbyIdentity: CustomStringConvertible {
    /// The public fingerprint only; the private key never appears.
    public var description: String { "NearbyIdentity(\(publicKey.shortFingerprint))" }
}

/// A peer's public Ed25519 identity key.
public struct NearbyPublicIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// What an identity signs: a fixed context, then the Noise static public key.
    static let signatureContext = Array("Inviso nearby v1: Noise static key".utf8)

    /// A public identity from its 32 bytes.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` unless it is 32 bytes and a valid Ed25519
    ///   public key encoding.
    public init(_ bytes: [UInt8]) throws(NearbyError) {
        guard bytes.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)) != nil else {
            throw NearbyError(.malformed, "identity public key")
        }
        self.bytes = bytes
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    static func signedMessage(staticKey: [UInt8]) -> [UInt8] { signatureContext + staticKey }

    /// Whether `signature` is this identity's over `staticKey`.
    public func isValidSignature(_ signature: [UInt8], overStaticKey staticKey: [UInt8]) -> Bool {
        guard signature.count == 64, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else {
            return false
        }
        return key.isValidSignature(signature, for: Self.signedMessage(staticKey: staticKey))
    }

    /// The first 8 bytes of SHA-256 over the key, as 16 lowercase hex digits: what the
    /// service's TXT record advertises (`id=`) and the screen shows. It tells people apart
    /// at a glance; it is not a verification (the safety number is).
    public var shortFingerprint: String {
        Hex.encode(Array(SHA256.hash(data: bytes).prefix(8)))
    }

    public var description: String { shortFingerprint }
}
