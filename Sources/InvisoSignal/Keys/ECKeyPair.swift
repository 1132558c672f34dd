/// A Curve25519 key pair.
public struct ECKeyPair: Sendable {
    /// The public half.
    public let publicKey: ECPublicKey
    /// The private half.
    public let privateKey: ECPrivateKey

    /// Wraps an existing private key.
    public init(privateKey: ECPrivateKey) {
        self.privateKey = privateKey
        self.publicKey = privateKey.publicKey
    }

    /// A fresh key pair from the system's secure generator.
    public static func generate() -> ECKeyPair {
        ECKeyPair(privateKey: ECPrivateKey())
    }

    /// A fresh key pair drawn from `generator`.
    public static func generate(using generator: inout some RandomNumberGenerator) -> ECKeyPair {
        ECKeyPair(privateKey: ECPrivateKey(using: &generator))
    }
}
