public import Crypto
public import Foundation

/// XEdDSA signatures over Curve25519 (Trevor Perrin, "The XEdDSA and VXEdDSA Signature
/// Schemes", revision 1, 2016-10-20): Ed25519-compatible signatures made with an X25519
/// private key and checked against an X25519 public key (a Montgomery u-coordinate), as
/// Signal uses for identity keys.
///
/// ## Compatibility with libsignal
///
/// The specification makes the signer's Edwards public key A always have sign bit 0,
/// negating the secret scalar when needed, so a verifier can rebuild A from u alone.
/// libsignal instead signs with A = [k]B as it is, whatever its sign, and stores that
/// sign bit in bit 7 of the last signature byte (the top bit of s, always 0 since s < L);
/// its verifier rebuilds A from u with the sign taken from there, clears the bit, and
/// checks the rest as Ed25519.
///
/// - ``sign(_:with:random:)`` follows the specification: A has sign bit 0, so the top bit
///   of the signature is 0. Such a signature verifies under both the specification's rule
///   (sign bit 0) and libsignal's (the sign bit read from the signature is 0).
/// - ``verify(_:for:publicKey:)`` follows libsignal: the sign of A is read from bit 7 of
///   byte 63, so it accepts libsignal's signatures and the specification's. It is
///   stricter than both in one place: s must be below the group order L (RFC 8032
///   §5.1.7), not merely below 2^253, so signatures cannot be malleated by adding L.
///   As the specification says, it rejects a public key u ≥ p (top bit set, or a
///   non-canonical value); it also rejects u = −1 and any u that is not on the curve.
///
/// The check is the cofactorless one with an encoding comparison: compress([s]B − [h]A)
/// and compare it with the 32 bytes of R, as libsignal and RFC 8032 §5.1.7 do (without
/// the optional multiplication by 8).
public enum XEdDSA {
    /// The length of a signature, in bytes: R (32) followed by s (32).
    public static let signatureByteCount = 64
    /// The length of a public key (an X25519 u-coordinate), in bytes.
    public static let publicKeyByteCount = 32
    /// The length of the random input Z of each signature, in bytes.
    public static let randomByteCount = 64

    /// Signs `message` with an X25519 private key, drawing Z from the system's secure
    /// random number generator.
    ///
    /// - Parameters:
    ///   - message: The bytes to sign.
    ///   - privateKey: The signer's X25519 key; it is clamped as X25519 clamps it.
    /// - Returns: The 64-byte signature R ‖ s.
    public static func sign(
        _ message: some ContiguousBytes,
        with privateKey: Curve25519.KeyAgreement.PrivateKey
    ) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return sign(message, with: privateKey, using: &generator)
    }

    /// Signs `message`, drawing the 64 random bytes Z from `generator`, which must be a
    /// cryptographically secure generator outside tests.
    ///
    /// - Parameters:
    ///   - message: The bytes to sign.
    ///   - privateKey: The signer's X25519 key.
    ///   - generator: The source of Z.
    /// - Returns: The 64-byte signature R ‖ s.
    public static func sign(
        _ message: some ContiguousBytes,
        with privateKey: Curve25519.KeyAgreement.PrivateKey,
        using generator: inout some RandomNumberGenerator
    ) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: randomByteCount / 8) { words in
            for index in 0..<words.count { words[index] = generator.next() }
            defer { SecureWipe.wipe(UnsafeMutableRawBufferPointer(words)) }
            return withPrivateKeyBytes(privateKey) { key in
                message.withUnsafeBytes { message in
                    sign(message: message, privateKey: key, random: UnsafeRawBufferPointer(words))
                }
            }
        }
    }

    /// Signs `message` with the given 64 random bytes Z: `xeddsa_sign(k, M, Z)` of the
    /// specification (§3.3). Z must be fresh secret randomness for every signature;
    /// passing it in is for tests and for callers with their own generator.
    ///
    /// - Parameters:
    ///   - message: The bytes to sign.
    ///   - privateKey: The signer's X25519 key.
    ///   - random: Exactly 64 bytes.
    /// - Returns: The 64-byte signature R ‖ s.
    /// - Throws: ``XEdDSAError/invalidRandomByteCount`` when `random` is not 64 bytes.
    public static func sign(
        _ message: some ContiguousBytes,
        with privateKey: Curve25519.KeyAgreement.PrivateKey,
        random: some ContiguousBytes
    ) throws(XEdDSAError) -> [UInt8] {
        guard random.withUnsafeBytes({ $0.count }) == randomByteCount else { throw .invalidRandomByteCount }
        return withPrivateKeyBytes(privateKey) { key in
            message.withUnsafeBytes { message in
                random.withUnsafeBytes { random in
                    sign(message: message, privateKey: key, random: random)
                }
            }
        }
    }

    /// Verifies an XEdDSA signature under libsignal's rule (see the type's documentation).
    ///
    /// - Parameters:
    ///   - signature: The 64-byte signature; bit 7 of its last byte is the sign of the
    ///     signer's Edwards public key.
    ///   - message: The signed bytes.
    ///   - publicKey: The signer's 32-byte X25519 public key (Montgomery u).
    /// - Returns: `true` only for a valid signature. Every malformed input (wrong lengths,
    ///   s ≥ L, a public key that is not a canonical curve point) gives `false`.
    public static func verify(
        _ signature: some ContiguousBytes,
        for message: some ContiguousBytes,
        publicKey: some ContiguousBytes
    ) -> Bool {
        signature.withUnsafeBytes { signature in
            message.withUnsafeBytes { message in
                publicKey.withUnsafeBytes { publicKey in
                    verify(signature: signature, message: message, publicKey: publicKey)
                }
            }
        }
    }
}

// MARK: - Signing

extension XEdDSA {
    /// `hash₁`'s prefix (§2.5): 2^256 − 1 − 1 as 32 little-endian bytes.
    private static let nonceHashPrefix: [UInt8] = [0xfe] + [UInt8](repeating: 0xff, count: 31)

    /// Calls `body` with the raw 32 bytes of `privateKey`.
    ///
    /// Do not wipe this `Data`: swift-crypto's BoringSSL backend returns it with
    /// `Data(bytesNoCopy:)` over the key's own self-zeroing storage, and on Linux a mutable
    /// access does not copy first, so wiping it zeroes the private key itself (a test
    /// caught exactly that). There is no separate copy here to clean up; ``sign(message:privateKey:random:)``
    /// copies the bytes into a stack buffer that it wipes.
    private static func withPrivateKeyBytes<Result>(
        _ privateKey: Curve25519.KeyAgreement.PrivateKey,
        _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        privateKey.rawRepresentation.withUnsafeBytes { body($0) }
    }

    /// `xeddsa_sign(k, M, Z)`, §3.3, with `calculate_key_pair` of §2.3 inlined.
    static func sign(
        message: UnsafeRawBufferPointer, privateKey: UnsafeRawBufferPointer, random: UnsafeRawBufferPointer
    ) -> [UInt8] {
        precondition(privateKey.count == 32 && random.count == randomByteCount)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { clamped in
            defer { SecureWipe.wipe(UnsafeMutableRawBufferPointer(clamped)) }
            // k: the X25519 private key as X25519 uses it (RFC 7748 §5 clamping).
            for index in 0..<32 { clamped[index] = privateKey[index] }
            clamped[0] &= 248
            clamped[31] &= 127
            clamped[31] |= 64
            let k = Scalar25519(reducing: UnsafeRawBufferPointer(clamped))

            // calculate_key_pair(k): E = kB; A = E with sign bit 0; a = ±k so that A = aB.
            var publicKey = EdwardsPoint.multiplyBase(k).compressed
            let negate = ConstantTime.Choice(bit: UInt64(publicKey[31] >> 7))
            publicKey[31] &= 0x7f
            let a = Scalar25519.select(k, -k, negate)

            // r = hash₁(a ‖ M ‖ Z) mod q.
            var nonceHash = SHA512()
            nonceHash.update(data: nonceHashPrefix)
            a.withUnsafeBytes { nonceHash.update(bufferPointer: $0) }
            nonceHash.update(bufferPointer: message)
            nonceHash.update(bufferPointer: random)
            let r = nonceHash.finalize().withUnsafeBytes { Scalar25519(reducing: $0) }

            // R = rB; h = hash(R ‖ A ‖ M) mod q; s = r + h·a mod q.
            let commitment = EdwardsPoint.multiplyBase(r).compressed
            let h = challenge(commitment: commitment, publicKey: publicKey, message: message)
            let s = Scalar25519.multiplyAdd(h, a, r)
            return s.withUnsafeBytes { commitment + Array($0) }
        }
    }

    /// h = SHA-512(R ‖ A ‖ M) mod L.
    private static func challenge(
        commitment: [UInt8], publicKey: [UInt8], message: UnsafeRawBufferPointer
    ) -> Scalar25519 {
        var hasher = SHA512()
        hasher.update(data: commitment)
        hasher.update(data: publicKey)
        hasher.update(bufferPointer: message)
        return hasher.finalize().withUnsafeBytes { Scalar25519(reducing: $0) }
    }
}

// MARK: - Verification

extension XEdDSA {
    static func verify(
        signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer
    ) -> Bool {
        guard signature.count == signatureByteCount, publicKey.count == publicKeyByteCount else { return false }
        // u must be a canonical field element: below p, so also top bit clear.
        guard publicKey[31] & 0x80 == 0, let u = FieldElement(canonicalBytes: publicKey) else { return false }

        // libsignal's convention: bit 7 of the last byte is the sign of A's x; clear it from s.
        let signBit = signature[63] >> 7
        var sBytes = Array(signature[32..<64])
        sBytes[31] &= 0x7f
        guard let s = Scalar25519(canonicalBytes: sBytes) else { return false }

        // A: y = (u − 1)/(u + 1) (u = −1 has no image), x recovered with the given sign.
        let (y, isValid) = u.edwardsY()
        guard isValid.isTrue,
            let a = EdwardsPoint.decompress(y: y, sign: ConstantTime.Choice(bit: UInt64(signBit)))
        else { return false }
        // A's encoding is y with the sign bit (what libsignal hashes); decompress refused
        // the one case where that is not compress(A), x = 0 with sign 1.
        var aEncoded = y.bytes
        aEncoded[31] |= signBit << 7

        let commitment = Array(signature[0..<32])
        let h = challenge(commitment: commitment, publicKey: aEncoded, message: message)
        // R' = [s]B − [h]A; accept when its encoding equals R byte for byte.
        let check = EdwardsPoint.vartimeDoubleScalarMultiplyBase(-h, a, s).compressed
        return check == commitment
    }
}
