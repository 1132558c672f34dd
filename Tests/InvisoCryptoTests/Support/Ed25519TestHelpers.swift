import Crypto
import Foundation
import InvisoCrypto

/// Test-only Ed25519 (RFC 8032 §5.1.5–5.1.7) built from the package's curve primitives, to
/// check those primitives against RFC 8032's vectors and against swift-crypto. Not API.
enum TestEd25519 {
    /// RFC 7748 §5 / RFC 8032 §5.1.5 clamping of a 32-byte string.
    static func clamp(_ bytes: [UInt8]) -> [UInt8] {
        var k = bytes
        k[0] &= 248
        k[31] &= 127
        k[31] |= 64
        return k
    }

    static func sha512(_ parts: [UInt8]...) -> [UInt8] {
        var hasher = SHA512()
        for part in parts { hasher.update(data: part) }
        return Array(hasher.finalize())
    }

    /// The secret scalar s = clamp(SHA-512(seed)[0..<32]) and the prefix SHA-512(seed)[32..<64].
    static func expand(seed: [UInt8]) -> (scalar: [UInt8], prefix: [UInt8]) {
        let digest = sha512(seed)
        return (clamp(Array(digest[0..<32])), Array(digest[32..<64]))
    }

    /// The public key: compress([s]B).
    static func publicKey(seed: [UInt8]) -> [UInt8] {
        let scalar = expand(seed: seed).scalar
        return scalar.withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }.compressed
    }

    /// RFC 8032 §5.1.6.
    static func sign(seed: [UInt8], message: [UInt8]) -> [UInt8] {
        let (scalarBytes, prefix) = expand(seed: seed)
        let publicKey = scalarBytes.withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }.compressed
        let s = Scalar25519(reducing: scalarBytes)
        let r = Scalar25519(reducing: sha512(prefix, message))
        let commitment = EdwardsPoint.multiplyBase(r).compressed
        let k = Scalar25519(reducing: sha512(commitment, publicKey, message))
        return commitment + Scalar25519.multiplyAdd(k, s, r).bytes
    }

    /// RFC 8032 §5.1.7, cofactorless, comparing encodings of R: decode A, reject S ≥ L,
    /// check compress([S]B − [k]A) == R.
    static func verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard signature.count == 64, let a = EdwardsPoint(compressed: publicKey),
            let s = Scalar25519(canonicalBytes: Array(signature[32..<64]))
        else { return false }
        let commitment = Array(signature[0..<32])
        let k = Scalar25519(reducing: sha512(commitment, publicKey, message))
        return EdwardsPoint.vartimeDoubleScalarMultiplyBase(-k, a, s).compressed == commitment
    }
}

/// Test-only re-implementations of libsignal's XEdDSA variant as described in
/// shared/vectors/signal/README.md and curve25519.json (`sign_bit_convention`), written
/// from that description, not from libsignal's code.
enum LibsignalRule {
    /// libsignal's verification: u → Edwards y = (u − 1)/(u + 1) with the sign bit taken
    /// from bit 7 of sig[63]; clear that bit; reject when any of bits 5...7 of the cleared
    /// s[31] is set (s ≥ 2^253); h = SHA-512(R ‖ A ‖ M) mod L; accept when
    /// compress([s mod L]B − [h]A) == R. Non-canonical u is reduced, not rejected (u is
    /// read as a field element, top bit ignored).
    static func verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64 else { return false }
        let signBit = signature[63] >> 7
        let u = FieldElement(bytes: publicKey)
        guard let a = EdwardsPoint(montgomeryU: u, sign: ConstantTime.Choice(bit: UInt64(signBit))) else {
            return false
        }
        var sBytes = Array(signature[32..<64])
        sBytes[31] &= 0x7f
        guard sBytes[31] & 0xe0 == 0 else { return false }
        let s = Scalar25519(reducing: sBytes)
        let commitment = Array(signature[0..<32])
        let aEncoded = a.compressed
        let h = Scalar25519(reducing: TestEd25519.sha512(commitment, aEncoded, Array(message)))
        return EdwardsPoint.vartimeDoubleScalarMultiplyBase(-h, a, s).compressed == commitment
    }

    /// The XEdDSA specification's verification (§3.3): u ≥ p or s ≥ 2^253 rejected, A from
    /// u with sign bit 0, h = SHA-512(R ‖ A ‖ M) mod q, accept when R == compress([s]B − [h]A).
    static func verifySpecification(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64, publicKey[31] & 0x80 == 0,
            let u = publicKey.withUnsafeBytes({ FieldElement(canonicalBytes: $0) })
        else { return false }
        let sBytes = Array(signature[32..<64])
        guard sBytes[31] & 0xe0 == 0 else { return false }
        guard let a = EdwardsPoint(montgomeryU: u, sign: .false) else { return false }
        let commitment = Array(signature[0..<32])
        let h = Scalar25519(reducing: TestEd25519.sha512(commitment, a.compressed, message))
        return EdwardsPoint.vartimeDoubleScalarMultiplyBase(-h, a, Scalar25519(reducing: sBytes)).compressed
            == commitment
    }

    /// A signer following the README's description of libsignal: a = clamp(k) mod L, A =
    /// [a]B with its own sign bit, nonce r = SHA-512(0xFE ‖ 0xFF×31 ‖ clamp(k) ‖ M ‖ Z) mod L,
    /// s = r + h·a, and A's sign bit stored in bit 7 of sig[63].
    static func sign(privateKey: [UInt8], message: [UInt8], random: [UInt8]) -> [UInt8] {
        let k = TestEd25519.clamp(privateKey)
        let a = Scalar25519(reducing: k)
        let publicKey = EdwardsPoint.multiplyBase(a).compressed
        let prefix: [UInt8] = [0xfe] + [UInt8](repeating: 0xff, count: 31)
        let r = Scalar25519(reducing: TestEd25519.sha512(prefix, k, message, random))
        let commitment = EdwardsPoint.multiplyBase(r).compressed
        let h = Scalar25519(reducing: TestEd25519.sha512(commitment, publicKey, message))
        var signature = commitment + Scalar25519.multiplyAdd(h, a, r).bytes
        signature[63] = (signature[63] & 0x7f) | (publicKey[31] & 0x80)
        return signature
    }
}
