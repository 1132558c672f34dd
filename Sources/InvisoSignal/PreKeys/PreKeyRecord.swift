/// A one-time Curve25519 pre-key: an id and a key pair.
public struct PreKeyRecord: Sendable {
    /// The pre-key id (libsignal uses 24-bit ids; any `UInt32` is accepted).
    public let id: UInt32
    /// The key pair.
    public let keyPair: ECKeyPair

    /// Creates a record.
    public init(id: UInt32, keyPair: ECKeyPair) {
        self.id = id
        self.keyPair = keyPair
    }
}

/// A signed Curve25519 pre-key: the public key (serialized, 33 bytes) is signed with the
/// identity key using XEdDSA.
public struct SignedPreKeyRecord: Sendable {
    /// The signed pre-key id.
    public let id: UInt32
    /// Creation time in milliseconds since 1970 (informational, as in libsignal).
    public let timestamp: UInt64
    /// The key pair.
    public let keyPair: ECKeyPair
    /// XEdDSA signature over `keyPair.publicKey.serialized` by the identity key.
    public let signature: [UInt8]

    /// Creates a record from its parts (no signature check).
    public init(id: UInt32, timestamp: UInt64, keyPair: ECKeyPair, signature: [UInt8]) {
        self.id = id
        self.timestamp = timestamp
        self.keyPair = keyPair
        self.signature = signature
    }

    /// Generates a fresh signed pre-key.
    public static func generate(
        id: UInt32, timestamp: UInt64, identity: IdentityKeyPair, using generator: inout some RandomNumberGenerator
    ) -> SignedPreKeyRecord {
        let pair = ECKeyPair.generate(using: &generator)
        let signature = identity.privateKey.sign(pair.publicKey.serialized, using: &generator)
        return SignedPreKeyRecord(id: id, timestamp: timestamp, keyPair: pair, signature: signature)
    }
}

/// A signed Kyber1024 pre-key. The serialized public key (`0x08 ‖ key`, 1569 bytes) is
/// signed with the identity key. A last-resort key may be used many times; a one-time
/// Kyber pre-key is removed after use.
public struct KyberPreKeyRecord: Sendable {
    /// The Kyber pre-key id.
    public let id: UInt32
    /// Creation time in milliseconds since 1970.
    public let timestamp: UInt64
    /// The key pair.
    public let keyPair: KyberKeyPair
    /// XEdDSA signature over `keyPair.publicKey.serialized` by the identity key.
    public let signature: [UInt8]
    /// Whether this is a last-resort key (kept after use).
    public let isLastResort: Bool

    /// Creates a record from its parts (no signature check).
    public init(id: UInt32, timestamp: UInt64, keyPair: KyberKeyPair, signature: [UInt8], isLastResort: Bool) {
        self.id = id
        self.timestamp = timestamp
        self.keyPair = keyPair
        self.signature = signature
        self.isLastResort = isLastResort
    }

    /// Generates a fresh signed Kyber pre-key.
    ///
    /// - Throws: ``SignalError/invalidKey`` if Kyber key generation fails.
    public static func generate(
        id: UInt32, timestamp: UInt64, isLastResort: Bool, identity: IdentityKeyPair,
        using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> KyberPreKeyRecord {
        let pair = try KyberKeyPair.generate(using: &generator)
        let signature = identity.privateKey.sign(pair.publicKey.serialized, using: &generator)
        return KyberPreKeyRecord(id: id, timestamp: timestamp, keyPair: pair, signature: signature, isLastResort: isLastResort)
    }
}
