package import Crypto
package import Foundation

/// CPace, the balanced PAKE of draft-irtf-cfrg-cpace-21, in the cipher suite
/// CPACE-X25519-SHA512 (group G_X25519, hash SHA-512).
///
/// Two parties that share a password-related string (PRS), a channel identifier (CI) and
/// a session id (sid) each send one message and derive the same 64-byte intermediate
/// session key (ISK) exactly when those inputs and both messages agree. A network attacker
/// gets one password guess per run, and a passive one learns nothing about the password.
///
/// The protocol state lives in ``Party``; this namespace also exposes the suite's
/// generator derivation ``calculateGenerator(prs:ci:sid:)``. The derivations, in the
/// draft's notation (`docs/cpace.md` has the details):
///
/// - g = u-coordinate of `map_to_curve_elligator2(decodeUCoordinate(SHA-512(lv_cat(DSI,
///   PRS, zero_bytes(len_zpad), CI, sid))[0..<32], 255))`, DSI = `"CPace255"`;
/// - Y = X25519(y, g) with y 32 random bytes; K = X25519(y, Y_peer), abort if K = 0³²;
/// - ISK = SHA-512(lv_cat(`"CPace255_ISK"`, sid, K) ‖ transcript), where the transcript is
///   `lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb)` for initiator and responder and
///   `o_cat(lv_cat(Ya, ADa), lv_cat(Yb, ADb))` in the symmetric setting.
public enum CPace {
    /// The domain-separation identifier of G_X25519, `"CPace255"`.
    package static let dsi = Array("CPace255".utf8)
    /// The ISK domain separator, DSI ‖ `"_ISK"`.
    package static let dsiISK = Array("CPace255_ISK".utf8)
    /// The prefix of the optional session-id output (draft §10.6).
    package static let sessionIDOutputPrefix = Array("CPaceSidOutput".utf8)
    /// SHA-512's input block size, H.s_in_bytes.
    package static let hashBlockByteCount = 128
    /// The length of shares, scalars and the shared point, G_X25519.field_size_bytes.
    public static let shareByteCount = 32
    /// The length of the ISK and of the session-id output: a full SHA-512 digest.
    public static let keyByteCount = 64

    /// Which transcript a party builds, and so which setting it runs in.
    public enum Role: Sendable, Hashable {
        /// Party A in the initiator-responder setting: its message comes first in
        /// `transcript_ir`.
        case initiator
        /// Party B in the initiator-responder setting: its message comes second.
        case responder
        /// Either party in the symmetric setting, where anyone may speak first; the
        /// transcript is the ordered concatenation `transcript_oc`. The draft requires
        /// ADa and ADb to differ (add random data if needed).
        case symmetric
    }

    /// The generator g of draft-irtf-cfrg-cpace-21 §8.2 for the given inputs: the
    /// u-coordinate of the Elligator 2 image of the first 32 bytes of
    /// SHA-512(generator_string(DSI, PRS, CI, sid, 128)), top bit cleared.
    ///
    /// The generator is as sensitive as the password (it allows an offline dictionary
    /// attack), so it is returned as ``SecretBytes``. The password is hashed in place,
    /// without copies of ours.
    ///
    /// - Parameters:
    ///   - prs: the password-related string.
    ///   - ci: the channel identifier, which may be empty.
    ///   - sid: the session id, which may be empty.
    /// - Returns: the 32-byte little-endian u-coordinate of g.
    public static func calculateGenerator(prs: SecretBytes, ci: [UInt8], sid: [UInt8]) -> SecretBytes {
        var hasher = SHA512()
        prs.withUnsafeBytes { password in
            generatorString(prs: password, ci: ci, sid: sid) { hasher.update(bufferPointer: $0) }
        }
        let u = hasher.finalize().withUnsafeBytes { digest in
            FieldElement(bytes: UnsafeRawBufferPointer(rebasing: digest[0..<FieldElement.encodedByteCount]))
        }
        var encoded = Elligator2.map(u).u.bytes
        defer { SecureWipe.wipe(&encoded) }
        return SecretBytes(encoded)
    }

    /// G_X25519.scalar_mult_vfy(y, u): X25519 of the clamped scalar and the u-coordinate
    /// (bit 255 ignored), or `nil` for the neutral element G.I (all zero), which the caller
    /// must treat as an abort. The zero test is constant time.
    package static func scalarMultVerify(
        _ scalar: Curve25519.KeyAgreement.PrivateKey, _ u: some ContiguousBytes
    ) -> SecretBytes? {
        try? X25519.sharedSecret(scalar, with: u)
    }

    /// ISK = SHA-512(lv_cat(DSI ‖ `"_ISK"`, sid, K) ‖ transcript) (draft §7.2). K is hashed
    /// in place.
    package static func intermediateSessionKey(sid: [UInt8], k: SecretBytes, transcript: [UInt8]) -> SecretBytes {
        var hasher = SHA512()
        hasher.update(data: prependLength(dsiISK))
        hasher.update(data: prependLength(sid))
        hasher.update(data: lengthPrefix(k.count))
        k.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(data: transcript)
        return hasher.finalize().withUnsafeBytes { SecretBytes($0) }
    }

    /// sid_output = SHA-512(`"CPaceSidOutput"` ‖ transcript) (draft §10.6).
    package static func sessionIDOutput(transcript: [UInt8]) -> [UInt8] {
        var hasher = SHA512()
        hasher.update(data: sessionIDOutputPrefix)
        hasher.update(data: transcript)
        return Array(hasher.finalize())
    }
}
