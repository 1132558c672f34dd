public import Foundation
public import InvisoCrypto

/// Calling a saved contact again without a new invite (`docs/protocol.md`, "Contacts").
///
/// Two people who paired once (a verified v2 session) and saved each other hold the same
/// 32-byte contact secret and each other's long-term identity key. A call is an ordinary
/// v2 session whose invite both derive, for the current five-minute window, from the
/// secret — the six-digit code the server sees and the three words it never does:
///
/// ```
/// window  = ⌊unix time / 300⌋
/// okm     = HKDF-SHA256(IKM = contact secret, salt = "", info = "inviso call v1" ‖ uint64_be(window) [‖ uint8(slot)], L = 16)
/// code    = uint32_be(okm[0..<4]) mod 10⁶, six digits
/// words   = okm[4..<9] as three 11-bit BIP-39 indices (big-endian, most significant first)
/// ```
///
/// (the slot byte only for slots 1 and up: a room's code stays taken after its call, so a
/// second call in one window moves to the next slot) and both use their identity key as the
/// session's Noise static key, so the pairing (CPace with the derived words, Noise XXpsk3)
/// ends only if the peer holds the pinned identity's private key (``ChatSessionMachine/Configuration/expectedPeerIdentity``).
public enum ContactCall {
    /// Seconds per rendezvous window.
    public static let windowSeconds: Int64 = 300
    /// Calls per window and contact: the server keeps a code taken after its room was
    /// entered, so each call of a window takes the next free slot.
    public static let slotsPerWindow = 8
    private static let label = Array("inviso call v1".utf8)
    private static let secretLabel = Array("inviso contact v1".utf8)

    /// The window `date` falls in.
    public static func window(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(windowSeconds)).rounded(.down))
    }

    /// The invite of `window`'s `slot` (0 ..< ``slotsPerWindow``) for the contact whose
    /// secret is `secret`.
    public static func invite(secret: SecretBytes, window: Int64, slot: Int = 0) -> Invite {
        precondition((0..<slotsPerWindow).contains(slot), "a call slot is 0 ..< slotsPerWindow")
        var info = label
        for shift in stride(from: 56, through: 0, by: -8) { info.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: window) >> UInt64(shift))) }
        if slot > 0 { info.append(UInt8(slot)) }
        var okm = [UInt8](repeating: 0, count: 16)
        secret.withUnsafeBytes { ikm in
            info.withUnsafeBytes { info in
                okm.withUnsafeMutableBytes { out in
                    HKDFSHA256.derive(inputKeyMaterial: ikm, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info, into: out)
                }
            }
        }
        let number = okm[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(number)
        let code = String(repeating: "0", count: 6 - digits.count) + digits
        let bits = okm[4..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }  // 40 bits; the top 33 are used
        var words: [String] = []
        for position in 0..<3 {
            let shift = UInt64(29 - 11 * position)
            let index = Int((bits >> shift) & 0x7FF)
            words.append(InviteWordlist.words[index])
        }
        do {
            return try Invite(joinCode: code, words: words)
        } catch {
            preconditionFailure("six digits and three words of the list are an invite")
        }
    }

    /// The contact secret two sides derive when they save each other: both sent their
    /// identity key and 32 random bytes inside the verified session; the lower identity's
    /// contribution goes first, so both compute the same.
    ///
    /// `HKDF-SHA256(IKM = nonce_lo ‖ nonce_hi, salt = identity_lo ‖ identity_hi, info = "inviso contact v1", L = 32)`
    public static func secret(
        ourIdentity: [UInt8], ourNonce: [UInt8], theirIdentity: [UInt8], theirNonce: [UInt8]
    ) -> SecretBytes {
        let weAreLow = ourIdentity.lexicographicallyPrecedes(theirIdentity)
        let ikm = weAreLow ? ourNonce + theirNonce : theirNonce + ourNonce
        let salt = weAreLow ? ourIdentity + theirIdentity : theirIdentity + ourIdentity
        var out = [UInt8](repeating: 0, count: 32)
        ikm.withUnsafeBytes { ikm in
            salt.withUnsafeBytes { salt in
                secretLabel.withUnsafeBytes { info in
                    out.withUnsafeMutableBytes { HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: $0) }
                }
            }
        }
        defer { for index in out.indices { out[index] = 0 } }
        return SecretBytes(out)
    }
}
