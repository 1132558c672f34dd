/// A long-term identity public key (a Curve25519 key, serialized as `0x05 ‖ u`).
public struct IdentityKey: Hashable, Sendable {
    /// The underlying public key.
    public let publicKey: ECPublicKey

    /// Wraps a public key.
    public init(_ publicKey: ECPublicKey) {
        self.publicKey = publicKey
    }

    /// Parses the 33-byte serialized form.
    ///
    /// - Throws: ``SignalError/invalidKey`` or ``SignalError/invalidKeyType``.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        self.publicKey = try ECPublicKey(serialized: serialized)
    }

    /// The 33-byte serialized form.
    public var serialized: [UInt8] { publicKey.serialized }
}

/// A long-term identity key pair.
public struct IdentityKeyPair: Sendable {
    /// The public identity key.
    public let identityKey: IdentityKey
    /// The private key (signs pre-keys, takes part in X3DH/PQXDH).
    public let privateKey: ECPrivateKey

    /// Wraps an existing private key.
    public init(privateKey: ECPrivateKey) {
        self.privateKey = privateKey
        self.identityKey = IdentityKey(privateKey.publicKey)
    }

    /// A fresh identity from the system's secure generator.
    public static func generate() -> IdentityKeyPair {
        IdentityKeyPair(privateKey: ECPrivateKey())
    }

    /// A fresh identity drawn from `generator`.
    public static func generate(using generator: inout some RandomNumberGenerator) -> IdentityKeyPair {
        IdentityKeyPair(privateKey: ECPrivateKey(using: &generator))
    }
}
