/// Feature bits a peer advertises (announce TLV 0x05, authenticated peer state TLV 0x01).
///
/// Encoded as a little-endian bitfield with trailing zero bytes dropped, at least one byte.
/// Decoders keep the low 64 bits and ignore longer input; unknown bits are kept. Bit
/// numbers are the same on iOS and Android: permissionlesstech/bitchat
/// localPackages/BitFoundation/Tests/BitFoundationTests/PeerCapabilitiesTests.swift@9b84b361225facd8e623f25d76f889d3dc54a879
/// and permissionlesstech/bitchat-android
/// app/src/test/kotlin/com/bitchat/android/model/IdentityAnnouncementTest.kt@09b481f1ef5852ed50edce987dd719bd9588b125
/// (via `shared/vectors/bitchat/wire-golden.json`, `peer_capabilities_bits`).
public struct PeerCapabilities: OptionSet, Hashable, Sendable {
    /// The 64-bit field.
    public let rawValue: UInt64

    /// Wraps a 64-bit field.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 0: publishes pre-keys.
    public static let prekeys = PeerCapabilities(rawValue: 1 << 0)
    /// Bit 1: Wi-Fi bulk transfer.
    public static let wifiBulk = PeerCapabilities(rawValue: 1 << 1)
    /// Bit 2: internet gateway.
    public static let gateway = PeerCapabilities(rawValue: 1 << 2)
    /// Bit 3: private groups.
    public static let groups = PeerCapabilities(rawValue: 1 << 3)
    /// Bit 4: board posts.
    public static let board = PeerCapabilities(rawValue: 1 << 4)
    /// Bit 5: vouch attestations (web of trust).
    public static let vouch = PeerCapabilities(rawValue: 1 << 5)
    /// Bit 6: mesh diagnostics.
    public static let meshDiagnostics = PeerCapabilities(rawValue: 1 << 6)
    /// Bit 7: bridges the mesh to a geohash rendezvous.
    public static let bridge = PeerCapabilities(rawValue: 1 << 7)
    /// Bit 8: private media (Noise payload 0x20).
    public static let privateMedia = PeerCapabilities(rawValue: 1 << 8)
    /// Bit 9: receipts for private media.
    public static let privateMediaReceipts = PeerCapabilities(rawValue: 1 << 9)
    /// Bit 10: replaces a Noise session without destroying the old one first.
    public static let nonDestructiveNoiseReplacement = PeerCapabilities(rawValue: 1 << 10)

    /// The minimal little-endian encoding: trailing zero bytes dropped, at least one byte.
    public func encoded() -> [UInt8] {
        var value = rawValue
        var bytes: [UInt8] = []
        repeat {
            bytes.append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        } while value != 0
        return bytes
    }

    /// Decodes any length as BitChat does: the first 8 bytes are the low 64 bits, longer
    /// input is ignored, empty input is the empty set. Never fails.
    public init(decoding bytes: some Collection<UInt8>) {
        var value: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
        self.init(rawValue: value)
    }

    /// Decodes only the canonical form (1…8 bytes, no trailing zero byte except a lone
    /// `00`), as the authenticated peer state requires.
    ///
    /// - Throws: ``MeshWireError/invalidField`` for any other encoding.
    public init(canonicalEncoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        let value = PeerCapabilities(decoding: bytes)
        guard (1...8).contains(bytes.count), value.encoded().elementsEqual(bytes) else {
            throw MeshWireError(.invalidField, "non-canonical capabilities")
        }
        self = value
    }
}
