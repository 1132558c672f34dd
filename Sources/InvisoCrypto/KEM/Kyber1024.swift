import Crypto
public import Foundation

/// Kyber1024 as submitted to round 3 of the NIST PQC process (CRYSTALS-Kyber v3.02): the
/// KEM behind libsignal's key type `0x08`, which PQXDH uses.
///
/// This is *not* FIPS 203 ML-KEM-1024, but it is built on swift-crypto's `MLKEM1024`. The
/// two share the key and ciphertext formats and the IND-CPA core. They differ in how the
/// shared secret leaves the Fujisaki–Okamoto transform:
///
/// - Round 3 hashes the random message before use, m = H(m₀), and returns
///   K = SHAKE256(K̄ ‖ SHA3-256(c))[0..<32], where K̄ is the first half of G(m ‖ H(pk)).
/// - ML-KEM uses m directly and returns K̄ itself.
///
/// For a valid ciphertext, ML-KEM's secret is therefore round 3's K̄, and
/// ``roundThreeSharedSecret(mlkemSharedSecret:ciphertext:)`` finishes the round-3
/// derivation. Encapsulation draws a fresh uniform m, which is distributed exactly like
/// round 3's H(m₀), so ML-KEM encapsulation followed by the derivation *is* round-3
/// encapsulation. Decapsulation is ML-KEM decapsulation followed by the derivation.
///
/// - Important: One deviation remains. For an *invalid* ciphertext (one that does not
///   re-encrypt to itself), round 3 returns SHAKE256(z ‖ SHA3-256(c)) and ML-KEM returns
///   SHAKE256(z ‖ c); this type returns the round-3 derivation applied to the latter.
///   All three are pseudorandom functions of the secret z and the ciphertext, and the
///   encapsulating party never holds any of them, so the security argument is
///   unchanged; but for invalid ciphertexts the output differs from a round-3
///   implementation byte for byte. Public keys are also checked as ML-KEM requires (every
///   coefficient below q = 3329), which honest round-3 keys always pass.
///
/// Private keys exist only as the 64-byte seed d ‖ z. They are not interchangeable with
/// round-3 seeds: round-3 key generation expands G(d) where ML-KEM expands G(d ‖ k), so
/// the same d gives different key pairs. Nor can a 3,168-byte round-3 secret key be
/// imported, because swift-crypto imports seeds only.
///
/// ```swift
/// let bob = try Kyber1024.PrivateKey()
/// let bobPublic = bob.publicKey.rawRepresentation           // 1,568 bytes to Alice
///
/// let peer = try Kyber1024.PublicKey(rawRepresentation: bobPublic)
/// let (aliceSecret, ciphertext) = try peer.encapsulate()    // 1,568 bytes to Bob
/// let bobSecret = try bob.decapsulate(ciphertext)            // == aliceSecret
/// ```
public enum Kyber1024 {
    /// The length of an encoded public key: 1,568 bytes.
    public static let publicKeyByteCount = 1568
    /// The length of a ciphertext: 1,568 bytes.
    public static let ciphertextByteCount = 1568
    /// The length of a shared secret: 32 bytes.
    public static let sharedSecretByteCount = 32
    /// The length of a private-key seed d ‖ z: 64 bytes.
    public static let seedByteCount = 64

    /// Completes the round-3 shared-secret derivation from the ML-KEM one:
    /// SHAKE256(`mlkemSharedSecret` ‖ SHA3-256(`ciphertext`)), first 32 bytes.
    ///
    /// Exposed to the package for known-answer tests. Lengths are not checked: the inputs
    /// are hashed as given.
    ///
    /// - Parameters:
    ///   - mlkemSharedSecret: The 32-byte ML-KEM-1024 shared secret K̄ for `ciphertext`.
    ///   - ciphertext: The ciphertext, exactly as sent.
    /// - Returns: The 32-byte round-3 shared secret.
    package static func roundThreeSharedSecret(
        mlkemSharedSecret: some ContiguousBytes,
        ciphertext: some ContiguousBytes
    ) -> SecretBytes {
        // SHA3-256(c) is public (anyone holding c can compute it), so a plain array is fine.
        var hasher = Crypto.SHA3_256()
        ciphertext.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        let ciphertextHash = Array(hasher.finalize())
        var kdf = Keccak.SHAKE256()
        mlkemSharedSecret.withUnsafeBytes { kdf.update(bufferPointer: $0) }
        kdf.update(ciphertextHash)
        return SecretBytes(count: sharedSecretByteCount) { kdf.squeeze(into: $0) }
    }
}

// MARK: - Public key

extension Kyber1024 {
    /// A Kyber1024 public (encapsulation) key: 1,568 bytes, t̂ encoded as 12-bit
    /// coefficients followed by the 32-byte seed ρ.
    ///
    /// Two keys are equal when their encodings are equal.
    public struct PublicKey: Sendable {
        private let backing: MLKEM1024.PublicKey
        private let encoded: [UInt8]

        /// Imports a public key from its 1,568-byte encoding.
        ///
        /// - Parameter rawRepresentation: The encoded key, without libsignal's `0x08` type byte.
        /// - Throws: ``Kyber1024Error/invalidPublicKey`` when the input is not 1,568 bytes or
        ///   ML-KEM's import refuses it (a coefficient not reduced modulo q).
        public init(rawRepresentation: some ContiguousBytes) throws(Kyber1024Error) {
            let bytes = rawRepresentation.withUnsafeBytes { [UInt8]($0) }
            guard bytes.count == Kyber1024.publicKeyByteCount else { throw .invalidPublicKey }
            let backing: MLKEM1024.PublicKey
            do {
                backing = try MLKEM1024.PublicKey(rawRepresentation: bytes)
            } catch {
                throw .invalidPublicKey
            }
            // ML-KEM's modulus check means a key it accepts re-encodes to the same bytes;
            // holding the caller's bytes keeps equality and hashing byte-exact regardless.
            guard Array(backing.rawRepresentation) == bytes else { throw .invalidPublicKey }
            self.init(backing: backing, encoded: bytes)
        }

        fileprivate init(backing: MLKEM1024.PublicKey, encoded: [UInt8]) {
            self.backing = backing
            self.encoded = encoded
        }

        /// The 1,568-byte encoding of the key, without libsignal's `0x08` type byte.
        public var rawRepresentation: [UInt8] { encoded }

        /// Encapsulates a fresh shared secret to this key.
        ///
        /// - Returns: The round-3 shared secret (32 bytes) and the 1,568-byte ciphertext to
        ///   send to the key's owner, who recovers the secret with
        ///   ``Kyber1024/PrivateKey/decapsulate(_:)``.
        /// - Throws: ``Kyber1024Error/encapsulationFailed`` if the backend fails.
        public func encapsulate() throws(Kyber1024Error) -> (sharedSecret: SecretBytes, ciphertext: [UInt8]) {
            let result: KEM.EncapsulationResult
            do {
                result = try backing.encapsulate()
            } catch {
                throw .encapsulationFailed
            }
            let ciphertext = Array(result.encapsulated)
            guard ciphertext.count == Kyber1024.ciphertextByteCount,
                result.sharedSecret.bitCount == Kyber1024.sharedSecretByteCount * 8
            else { throw .encapsulationFailed }
            let sharedSecret = Kyber1024.roundThreeSharedSecret(
                mlkemSharedSecret: result.sharedSecret, ciphertext: ciphertext)
            return (sharedSecret, ciphertext)
        }
    }
}

// MARK: - Public key: Hashable

extension Kyber1024.PublicKey: Hashable {
    /// Whether two keys have the same encoding. Public keys are not secret, so this is not
    /// constant time.
    public static func == (lhs: Kyber1024.PublicKey, rhs: Kyber1024.PublicKey) -> Bool {
        lhs.encoded == rhs.encoded
    }

    /// Feeds the encoding to `hasher`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(encoded)
    }
}

// MARK: - Private key

extension Kyber1024 {
    /// A Kyber1024 private (decapsulation) key, held by swift-crypto and represented only by
    /// its 64-byte seed d ‖ z.
    ///
    /// Its description and reflection are redacted.
    public struct PrivateKey: Sendable {
        private let backing: MLKEM1024.PrivateKey

        /// The matching public key, computed once.
        ///
        /// Share its ``Kyber1024/PublicKey/rawRepresentation`` with peers.
        public let publicKey: PublicKey

        /// Generates a fresh random key pair with the system's secure random source.
        ///
        /// - Throws: ``Kyber1024Error/keyGenerationFailed`` if the backend fails.
        public init() throws(Kyber1024Error) {
            let backing: MLKEM1024.PrivateKey
            do {
                backing = try MLKEM1024.PrivateKey()
            } catch {
                throw .keyGenerationFailed
            }
            self.init(backing: backing)
        }

        /// Recreates a key pair from its 64-byte seed d ‖ z, as returned by
        /// ``seedRepresentation``.
        ///
        /// This is the FIPS 203 seed: a round-3 key generation seed gives a different key
        /// pair, and a 3,168-byte round-3 secret key cannot be imported.
        ///
        /// - Parameter seedRepresentation: The 64 seed bytes.
        /// - Throws: ``Kyber1024Error/invalidPrivateKey`` when the seed is not 64 bytes or the
        ///   backend refuses it.
        public init(seedRepresentation: some ContiguousBytes) throws(Kyber1024Error) {
            var seed = seedRepresentation.withUnsafeBytes { [UInt8]($0) }
            defer { SecureWipe.wipe(&seed) }
            guard seed.count == Kyber1024.seedByteCount else { throw .invalidPrivateKey }
            let backing: MLKEM1024.PrivateKey
            do {
                backing = try MLKEM1024.PrivateKey(seedRepresentation: seed, publicKey: nil)
            } catch {
                throw .invalidPrivateKey
            }
            self.init(backing: backing)
        }

        private init(backing: MLKEM1024.PrivateKey) {
            self.backing = backing
            let publicBacking = backing.publicKey
            self.publicKey = PublicKey(backing: publicBacking, encoded: Array(publicBacking.rawRepresentation))
        }

        /// The 64-byte seed d ‖ z from which the key pair is derived; pass it to
        /// ``init(seedRepresentation:)`` to restore the key.
        public var seedRepresentation: SecretBytes {
            var seed = backing.seedRepresentation
            defer { seed.withUnsafeMutableBytes { SecureWipe.wipe($0) } }
            return seed.withUnsafeBytes { bytes in
                SecretBytes(count: bytes.count) { $0.copyMemory(from: bytes) }
            }
        }

        /// Recovers the shared secret from a ciphertext made by
        /// ``Kyber1024/PublicKey/encapsulate()`` for this key's public key.
        ///
        /// A well-formed ciphertext that was altered or made for another key does not throw:
        /// it yields an unrelated pseudorandom secret (implicit rejection), so the caller
        /// learns of the mismatch only when keys derived from it fail to authenticate. See
        /// ``Kyber1024`` for how this differs from round 3 on such ciphertexts.
        ///
        /// - Parameter ciphertext: The 1,568-byte ciphertext, without any type byte.
        /// - Returns: The 32-byte round-3 shared secret.
        /// - Throws: ``Kyber1024Error/invalidCiphertext`` when the ciphertext is not 1,568
        ///   bytes, ``Kyber1024Error/decapsulationFailed`` if the backend fails.
        public func decapsulate(_ ciphertext: some ContiguousBytes) throws(Kyber1024Error) -> SecretBytes {
            let bytes = ciphertext.withUnsafeBytes { [UInt8]($0) }
            guard bytes.count == Kyber1024.ciphertextByteCount else { throw .invalidCiphertext }
            let mlkemSharedSecret: SymmetricKey
            do {
                mlkemSharedSecret = try backing.decapsulate(bytes)
            } catch {
                throw .decapsulationFailed
            }
            guard mlkemSharedSecret.bitCount == Kyber1024.sharedSecretByteCount * 8 else {
                throw .decapsulationFailed
            }
            return Kyber1024.roundThreeSharedSecret(mlkemSharedSecret: mlkemSharedSecret, ciphertext: bytes)
        }
    }
}

// MARK: - Private key: redacted descriptions

extension Kyber1024.PrivateKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Always `Kyber1024.PrivateKey(<redacted>)`: the key never reaches a log.
    public var description: String { "Kyber1024.PrivateKey(<redacted>)" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
