public import InvisoCrypto

/// A Kyber1024 (round 3) public key as libsignal serializes it: type byte `0x08` followed
/// by the 1568-byte key.
public struct KyberPublicKey: Hashable, Sendable {
    /// libsignal's KEM type byte for round-3 Kyber1024.
    public static let typeByte: UInt8 = 0x08
    /// The serialized length: type byte plus 1568 bytes.
    public static let serializedByteCount = 1 + Kyber1024.publicKeyByteCount

    /// The underlying key.
    public let key: Kyber1024.PublicKey

    /// Wraps a key.
    public init(_ key: Kyber1024.PublicKey) {
        self.key = key
    }

    /// Parses the 1569-byte serialized form.
    ///
    /// - Throws: ``SignalError/invalidKey`` for a wrong length or a key ML-KEM rejects,
    ///   ``SignalError/invalidKeyType`` for a type byte other than `0x08`.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        guard serialized.count == Self.serializedByteCount else { throw SignalError(.invalidKey, "Kyber1024 key must be 1569 bytes") }
        guard serialized.first == Self.typeByte else { throw SignalError(.invalidKeyType) }
        do {
            self.key = try Kyber1024.PublicKey(rawRepresentation: Array(serialized.dropFirst()))
        } catch {
            throw SignalError(.invalidKey, "not a valid Kyber1024 public key")
        }
    }

    /// The 1569-byte serialized form (`0x08 ‖ key`).
    public var serialized: [UInt8] { [Self.typeByte] + key.rawRepresentation }
}

/// A Kyber1024 key pair (the private key is kept as its 64-byte ML-KEM seed).
public struct KyberKeyPair: Sendable {
    /// The public half.
    public let publicKey: KyberPublicKey
    /// The private half.
    public let privateKey: Kyber1024.PrivateKey

    /// Wraps an existing private key.
    public init(privateKey: Kyber1024.PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = KyberPublicKey(privateKey.publicKey)
    }

    /// A fresh key pair.
    ///
    /// - Throws: ``SignalError/invalidKey`` if key generation fails.
    public static func generate() throws(SignalError) -> KyberKeyPair {
        do {
            return KyberKeyPair(privateKey: try Kyber1024.PrivateKey())
        } catch {
            throw SignalError(.invalidKey, "Kyber1024 key generation failed")
        }
    }

    /// A key pair whose 64-byte seed is drawn from `generator` (deterministic in tests).
    ///
    /// - Throws: ``SignalError/invalidKey`` if key generation fails.
    public static func generate(using generator: inout some RandomNumberGenerator) throws(SignalError) -> KyberKeyPair {
        let seed = SecretBytes(randomCount: Kyber1024.seedByteCount, using: &generator)
        do {
            let key = try seed.withUnsafeBytes { raw throws(Kyber1024Error) in try Kyber1024.PrivateKey(seedRepresentation: raw) }
            return KyberKeyPair(privateKey: key)
        } catch {
            throw SignalError(.invalidKey, "Kyber1024 key generation failed")
        }
    }
}
