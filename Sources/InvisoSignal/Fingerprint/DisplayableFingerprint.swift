/// The 60-digit safety number both parties see and read out to each other.
///
/// Each side contributes 30 digits: the first 30 bytes of its fingerprint hash, in six
/// 5-byte big-endian chunks, each taken mod 100000 and printed as five zero-padded
/// digits. The side whose 30 digits sort first comes first, so both parties see the same
/// number.
public struct DisplayableFingerprint: Sendable, Hashable {
    /// The 60 decimal digits.
    public let digits: String

    /// Builds the number from the two sides' fingerprint hashes (at least 30 bytes each).
    package init(localHash: [UInt8], remoteHash: [UInt8]) {
        let local = Self.encode(localHash)
        let remote = Self.encode(remoteHash)
        self.digits = local < remote ? local + remote : remote + local
    }

    /// Six groups of five digits from the first 30 bytes.
    private static func encode(_ hash: [UInt8]) -> String {
        precondition(hash.count >= 30, "fingerprint hash too short")
        var text = ""
        for chunk in 0..<6 {
            var value: UInt64 = 0
            for byte in hash[(chunk * 5)..<(chunk * 5 + 5)] { value = value << 8 | UInt64(byte) }
            let digits = String(value % 100_000)
            text += String(repeating: "0", count: 5 - digits.count) + digits
        }
        return text
    }
}

// MARK: - CustomStringConvertible

extension DisplayableFingerprint: CustomStringConvertible {
    /// The 60 digits.
    public var description: String { digits }
}
