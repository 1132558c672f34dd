/// A mesh peer's 8-byte identifier: the first 8 bytes of SHA-256 of its Noise static
/// public key (BitChat's peer ID). Held as a big-endian `UInt64` so it hashes and compares
/// cheaply; ``bytes`` gives the wire form.
public struct PeerID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 8 wire bytes as a big-endian integer.
    public let rawValue: UInt64

    /// Creates an ID from its big-endian integer form.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Creates an ID from exactly 8 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 8 else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Creates an ID from 16 hex characters; `nil` if `hex` is anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 16, let value = UInt64(hex, radix: 16) else { return nil }
        rawValue = value
    }

    /// The 8 wire bytes.
    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: rawValue >> (56 - 8 * $0)) } }

    /// The all-`0xFF` recipient BitChat (Android) uses for "everyone".
    public static let broadcast = PeerID(rawValue: .max)

    /// Lowercase hex, 16 characters.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.utf8.count) + hex
    }

    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.rawValue < rhs.rawValue }
}
