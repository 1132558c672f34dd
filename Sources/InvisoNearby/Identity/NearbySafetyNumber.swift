import InvisoSignal

/// The number two nearby peers compare to verify each other: libsignal's numeric
/// fingerprint (version 2, 5,200 SHA-512 rounds per side) over both Ed25519 identities.
///
/// Both sides compute the same 60 digits (libsignal orders the two halves), unlike the
/// seed's code, which hashed `mine ‖ theirs` and differed per side; and each half costs
/// 5,200 hash rounds over a 30-byte output, so a man in the middle cannot grind keys until
/// two victims' numbers agree (`docs/nearby.md`). The scannable form (libsignal's
/// `CombinedFingerprints` protobuf) is what the terminal shows as a QR code.
public struct NearbySafetyNumber: Sendable, Hashable {
    /// libsignal's stable id field: the same for every nearby identity (a nearby person has
    /// no other id than the key, which the computation already covers).
    static let stableID = Array("inviso-nearby".utf8)

    /// The 60 digits.
    public let digits: String
    /// The scannable form's bytes (for a QR code).
    public let scannable: [UInt8]

    /// The safety number between our identity and a peer's.
    public init(local: NearbyPublicIdentity, remote: NearbyPublicIdentity) {
        do {
            let fingerprint = try Fingerprint(
                version: 2, iterations: 5_200, localStableID: Self.stableID, localKey: local.bytes,
                remoteStableID: Self.stableID, remoteKey: remote.bytes)
            digits = fingerprint.displayable.digits
            scannable = fingerprint.scannable.serialized
        } catch {
            preconditionFailure("version 2 and 5,200 iterations are valid fingerprint parameters")
        }
    }

    /// The digits in 12 groups of 5, as people read them out.
    public var grouped: String {
        var groups: [Substring] = []
        var rest = Substring(digits)
        while !rest.isEmpty {
            groups.append(rest.prefix(5))
            rest = rest.dropFirst(5)
        }
        return groups.joined(separator: " ")
    }
}
