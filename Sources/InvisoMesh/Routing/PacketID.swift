import Crypto

/// A packet's identity for duplicate suppression, gossip sync and acknowledgements.
///
/// It is BitChat's packet ID: the first 16 bytes of SHA-256 over the type byte, the
/// 8-byte sender ID, the 8-byte big-endian timestamp and the payload as carried
/// (permissionlesstech/bitchat-android
/// `app/src/main/java/com/bitchat/android/sync/PacketIdUtil.kt`@fc38a8c6, the same rule in
/// the iOS app's `PacketIdUtil`). TTL, flags, route and signature are left out, so every
/// copy of a packet has the same ID however many hops it took, and an ID never depends
/// on the TTL. Using BitChat's rule means our REQUEST_SYNC filters name the same packets
/// as a BitChat client's.
///
/// ``syncHash`` is the 63-bit value a Golomb-coded sync filter maps the ID from (BitChat's
/// `h64`: the first 8 bytes, big-endian, of SHA-256 over the 16-byte ID, top bit cleared).
/// It is computed once with the ID, so building and checking filters needs no hashing.
public struct PacketID: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0–7 of the ID, big-endian.
    public let high: UInt64
    /// Bytes 8–15 of the ID, big-endian.
    public let low: UInt64
    /// BitChat's `h64` of the ID, in `0..<2^63`.
    public let syncHash: UInt64

    /// Computes the ID of `packet` (two SHA-256 calls).
    public init(_ packet: MeshPacket) {
        var hasher = SHA256()
        withUnsafeBytes(of: packet.type.rawValue) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: packet.senderID.rawValue.bigEndian) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: packet.timestamp.bigEndian) { hasher.update(bufferPointer: $0) }
        packet.payload.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        let digest = hasher.finalize()
        var high: UInt64 = 0
        var low: UInt64 = 0
        digest.withUnsafeBytes { bytes in
            for index in 0..<8 { high = high << 8 | UInt64(bytes[index]) }
            for index in 8..<16 { low = low << 8 | UInt64(bytes[index]) }
        }
        self.init(high: high, low: low)
    }

    /// Wraps the 16 ID bytes (as two big-endian halves) and computes ``syncHash``.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        var idBytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            idBytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * index))
            idBytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * index))
        }
        var hash: UInt64 = 0
        SHA256.hash(data: idBytes).withUnsafeBytes { bytes in
            for index in 0..<8 { hash = hash << 8 | UInt64(bytes[index]) }
        }
        syncHash = hash & 0x7FFF_FFFF_FFFF_FFFF
    }

    /// Wraps an ID whose ``syncHash`` is already known (a simulator's synthetic IDs, a
    /// cache). `syncHash` must be what ``init(high:low:)`` would compute for real packets.
    public init(high: UInt64, low: UInt64, syncHash: UInt64) {
        self.high = high
        self.low = low
        self.syncHash = syncHash & 0x7FFF_FFFF_FFFF_FFFF
    }

    /// The length of an ID on the wire.
    public static let byteCount = 16

    /// Creates an ID from its 16 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The 16 ID bytes.
    public var bytes: [UInt8] {
        (0..<Self.byteCount).map { index in
            UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> (56 - 8 * (index % 8)))
        }
    }

    /// The key duplicate filters store: the first 8 bytes (a collision needs ~2^32 live IDs).
    package var dedupKey: UInt64 { high }

    public static func == (lhs: PacketID, rhs: PacketID) -> Bool { lhs.high == rhs.high && lhs.low == rhs.low }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
    }

    /// 32 lowercase hex characters.
    public var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
