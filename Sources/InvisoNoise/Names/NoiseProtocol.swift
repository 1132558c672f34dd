/// A parsed Noise protocol name such as `Noise_XXpsk3_25519_ChaChaPoly_SHA256`.
///
/// Parsing accepts every rev-34 base pattern, any number of distinct `pskN` modifiers
/// and the `fallback` modifier, joined with `+` (`Noise_XXfallback+psk0_…`), and rejects
/// anything else with ``NoiseError/invalidProtocolName``. DH `448` parses as a valid name
/// but is refused with ``NoiseError/unsupportedAlgorithm``.
public struct NoiseProtocol: Sendable, Hashable, CustomStringConvertible {
    /// The full protocol name as given; it is also what `InitializeSymmetric` hashes.
    public let name: String
    /// The handshake pattern after its modifiers were applied.
    public let pattern: HandshakePattern
    /// The DH function.
    public let dh: NoiseDH
    /// The AEAD cipher.
    public let cipher: NoiseCipher
    /// The hash function.
    public let hash: NoiseHash

    /// The longest name accepted (rev 34 §8: names are at most 255 bytes).
    public static let maximumNameLength = 255

    /// Parses `name`.
    /// - Throws: ``NoiseError/invalidProtocolName`` for a malformed name or one naming an
    ///   unknown pattern, token or algorithm; ``NoiseError/unsupportedAlgorithm`` for a
    ///   valid name using DH `448`; ``NoiseError/invalidPattern`` when a modifier cannot
    ///   apply to the pattern.
    public init(_ name: String) throws(NoiseError) {
        guard name.utf8.count <= Self.maximumNameLength else {
            throw NoiseError(.invalidProtocolName, "longer than 255 bytes")
        }
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "Noise" else {
            throw NoiseError(.invalidProtocolName, "expected Noise_PATTERN_DH_CIPHER_HASH")
        }
        self.name = name
        self.pattern = try Self.parsePattern(String(parts[1]))
        switch parts[2] {
        case "25519": dh = .curve25519
        case "448": throw NoiseError(.unsupportedAlgorithm, "DH 448")
        default: throw NoiseError(.invalidProtocolName, "unknown DH function")
        }
        switch parts[3] {
        case "ChaChaPoly": cipher = .chaChaPoly
        case "AESGCM": cipher = .aesGCM
        default: throw NoiseError(.invalidProtocolName, "unknown cipher")
        }
        switch parts[4] {
        case "SHA256": hash = .sha256
        case "SHA512": hash = .sha512
        case "BLAKE2s": hash = .blake2s
        case "BLAKE2b": hash = .blake2b
        default: throw NoiseError(.invalidProtocolName, "unknown hash function")
        }
    }

    /// The protocol name.
    public var description: String { name }

    private static func parsePattern(_ text: String) throws(NoiseError) -> HandshakePattern {
        let baseName = String(text.prefix { ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        guard var pattern = HandshakePattern.base(named: baseName) else {
            throw NoiseError(.invalidProtocolName, "unknown handshake pattern")
        }
        let rest = text.dropFirst(baseName.count)
        guard !rest.isEmpty else { return pattern }
        var seen: Set<String> = []
        for modifier in rest.split(separator: "+", omittingEmptySubsequences: false).map(String.init) {
            guard seen.insert(modifier).inserted else {
                throw NoiseError(.invalidProtocolName, "duplicate modifier")
            }
            if modifier == "fallback" {
                pattern = try pattern.addingFallback(modifier: modifier)
            } else if modifier.hasPrefix("psk"), let position = parsePSKPosition(modifier.dropFirst(3)) {
                pattern = try pattern.addingPSK(position, modifier: modifier)
            } else {
                throw NoiseError(.invalidProtocolName, "unknown modifier")
            }
        }
        return pattern
    }

    /// Decimal digits without a superfluous leading zero, at most three of them.
    private static func parsePSKPosition(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ ("0"..."9").contains($0) }),
              digits == "0" || digits.first != "0"
        else { return nil }
        return Int(digits)
    }
}

/// The DH functions (rev 34 §12.1). Only Curve25519 is implemented.
public enum NoiseDH: String, Sendable, Hashable {
    /// X25519, 32-byte keys.
    case curve25519 = "25519"

    /// DHLEN: the length of public keys and DH outputs.
    public var publicKeyLength: Int { 32 }
}
