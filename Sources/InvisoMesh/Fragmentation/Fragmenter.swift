/// Splits an encoded packet into ``MessageType/fragment`` packets.
///
/// BitChat facts (permissionlesstech/bitchat
/// bitchat/Services/BLE/BLEOutboundFragmentPlanner.swift@4d76e03eb15a9b391c9d75ba6ce2fbefc4a75648,
/// bitchat/Services/TransportConfig.swift@3466d0d10db265df10f9a36bf054de487a252684 and
/// permissionlesstech/bitchat-android app/src/main/java/com/bitchat/android/mesh/FragmentManager.kt@017232505911b513a089812d66618f231067db11):
/// - a packet is fragmented when its encoding exceeds 512 bytes;
/// - chunks are 469 bytes (`bleDefaultFragmentSize`, "~512 MTU minus protocol overhead");
///   Android computes `min(469, 512 − overhead)` per packet and iOS shrinks the chunk for
///   routed packets, so receivers must accept any chunk size;
/// - each fragment copies the original's sender, recipient, timestamp, TTL, route and RSR
///   flag, is unsigned, and is version 2 when it carries a route, version 1 otherwise;
/// - its payload is a ``FragmentHeader`` (random 8-byte ID, index, total, original type)
///   plus the chunk.
/// Android splits the unpadded encoding, iOS the padded one; the reassembled bytes decode
/// either way because ``MeshPacket/decode(_:maximumSize:)`` accepts padding.
public struct Fragmenter: Hashable, Sendable {
    /// BitChat's chunk size: 469 bytes.
    public static let defaultChunkSize = 469
    /// Encodings larger than this many bytes are fragmented: 512.
    public static let fragmentationThreshold = 512
    /// The largest chunk receivers accept: 1,267 bytes, so that header and chunk stay within
    /// ``Reassembler/maxFragmentPayloadBytes`` (BitChat's 1,280-byte cap for fragments).
    public static let maximumChunkSize = Reassembler.maxFragmentPayloadBytes - FragmentHeader.size

    /// Bytes of the original encoding per fragment.
    public var chunkSize: Int

    /// Creates a fragmenter with the given chunk size (1…``maximumChunkSize``).
    public init(chunkSize: Int = defaultChunkSize) {
        self.chunkSize = chunkSize
    }

    /// Whether an encoding of `encodedSize` bytes must be sent in fragments.
    public static func needsFragmentation(encodedSize: Int) -> Bool { encodedSize > fragmentationThreshold }

    /// Fragment packets carrying `encoded`, the encoding of `packet`.
    ///
    /// - Parameters:
    ///   - packet: The original packet; its header fields are copied into the fragments.
    ///   - encoded: Its wire bytes (padded or not).
    ///   - fragmentID: The set's 8-byte ID; pick it at random.
    /// - Throws: ``MeshWireError/invalidField`` for a chunk size outside
    ///   1…``maximumChunkSize`` or empty bytes,
    ///   ``MeshWireError/tooLarge`` for more than 65,535 fragments.
    public func fragments(
        of packet: MeshPacket, encoded: [UInt8], fragmentID: UInt64
    ) throws(MeshWireError) -> [MeshPacket] {
        guard (1...Self.maximumChunkSize).contains(chunkSize) else { throw MeshWireError(.invalidField, "chunk size") }
        guard !encoded.isEmpty else { throw MeshWireError(.invalidField, "nothing to fragment") }
        let total = (encoded.count + chunkSize - 1) / chunkSize
        guard total <= Int(UInt16.max) else { throw MeshWireError(.tooLarge, "more than 65535 fragments") }
        let hasRoute = !(packet.route ?? []).isEmpty
        var result: [MeshPacket] = []
        result.reserveCapacity(total)
        for index in 0..<total {
            let start = index * chunkSize
            let header = FragmentHeader(
                fragmentID: fragmentID, index: UInt16(index), total: UInt16(total), originalType: packet.type)
            var payload = header.encoded()
            payload.append(contentsOf: encoded[start..<min(start + chunkSize, encoded.count)])
            result.append(
                MeshPacket(
                    version: hasRoute ? 2 : 1, type: .fragment, ttl: packet.ttl, timestamp: packet.timestamp,
                    senderID: packet.senderID, recipientID: packet.recipientID, route: hasRoute ? packet.route : nil,
                    payload: payload, isRSR: packet.isRSR))
        }
        return result
    }

    /// Encodes `packet` and splits it, with a fragment ID drawn from `generator`.
    ///
    /// - Throws: What ``MeshPacket/encoded(padded:)`` and
    ///   ``fragments(of:encoded:fragmentID:)`` throw.
    public func fragments(
        of packet: MeshPacket, padded: Bool = false, using generator: inout some RandomNumberGenerator
    ) throws(MeshWireError) -> [MeshPacket] {
        try fragments(of: packet, encoded: try packet.encoded(padded: padded), fragmentID: generator.next())
    }
}
