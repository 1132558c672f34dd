/// The 13-byte header that starts every fragment's payload.
///
/// Layout (big-endian): fragment ID 8 bytes (random per fragmented packet) | index u16
/// (0-based) | total u16 | original type u8 (the type of the packet being split).
/// Sources: permissionlesstech/bitchat bitchat/Services/BLE/BLEOutboundFragmentPlanner.swift@4d76e03eb15a9b391c9d75ba6ce2fbefc4a75648;
/// golden vector `fragment_payload_header`.
public struct FragmentHeader: Hashable, Sendable {
    /// The encoded size: 13 bytes.
    public static let size = 13

    /// The fragment set's 8-byte ID, as a big-endian integer.
    public var fragmentID: UInt64
    /// This fragment's position, from 0.
    public var index: UInt16
    /// How many fragments the packet was split into.
    public var total: UInt16
    /// The type of the packet the fragments reassemble to.
    public var originalType: MessageType

    /// Creates a header.
    public init(fragmentID: UInt64, index: UInt16, total: UInt16, originalType: MessageType) {
        self.fragmentID = fragmentID
        self.index = index
        self.total = total
        self.originalType = originalType
    }

    /// Whether the header is internally consistent: `total` at least 1, `index` below it.
    public var isConsistent: Bool { total > 0 && index < total }

    /// The 13 wire bytes.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.size)
        out.appendBigEndian(fragmentID, width: 8)
        out.appendBigEndian(index, width: 2)
        out.appendBigEndian(total, width: 2)
        out.append(originalType.rawValue)
        return out
    }

    /// Decodes exactly 13 bytes.
    ///
    /// - Throws: ``MeshWireError/truncated`` or ``MeshWireError/trailingBytes`` for any
    ///   other length.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        try self.init(reading: &reader)
        try reader.finish("fragment header")
    }

    init(reading reader: inout WireReader) throws(MeshWireError) {
        try reader.require(Self.size, "fragment header")
        fragmentID = try reader.u64("fragment ID")
        index = try reader.u16("fragment index")
        total = try reader.u16("fragment total")
        originalType = MessageType(rawValue: try reader.u8("original type"))
    }
}
