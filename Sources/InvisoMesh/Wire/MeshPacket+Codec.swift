/// Encoding and decoding of BitChat's outer packet.
///
/// Layout (all integers big-endian; facts from permissionlesstech/bitchat
/// localPackages/BitFoundation/Sources/BitFoundation/BinaryProtocol.swift@1b64bf4949eec0ba83d0b29bed19de1704965527,
/// pinned by the golden vectors from permissionlesstech/bitchat-android
/// app/src/test/kotlin/com/bitchat/android/contracts/ClientRewriteWireContractTest.kt@09b481f1ef5852ed50edce987dd719bd9588b125):
///
/// ```
/// version u8 | type u8 | ttl u8 | timestamp u64 | flags u8 | payload length (v1 u16, v2 u32)
/// sender 8 | recipient 8 (flag 0x01) | route: count u8 + count × 8 (v2 and flag 0x08)
/// payload (length bytes) | signature 64 (flag 0x02) | padding (optional, PKCS#7)
/// ```
///
/// The v1 header is 14 bytes, the v2 header 16. The length counts the payload only, never
/// the route. A compressed payload (flag 0x04) starts with the original size (v1 u16,
/// v2 u32) and the length counts that prefix; ``MeshPacket/payload`` keeps prefix and
/// stream as carried (see ``MeshPacket/decompressedPayload(limit:)``).
extension MeshPacket {
    /// The largest encoded packet ``decode(_:maximumSize:)`` accepts by default and
    /// ``encoded(padded:)`` produces: 1 MiB, the reassembly limit
    /// (``Reassembler/Limits/maxBufferedBytes``), so any packet that can arrive in fragments
    /// can be decoded and nothing larger is ever parsed.
    public static let maximumEncodedSize = 1 << 20
    /// The length of an Ed25519 signature on the wire.
    public static let signatureSize = 64

    enum Flags {
        static let hasRecipient: UInt8 = 0x01
        static let hasSignature: UInt8 = 0x02
        static let isCompressed: UInt8 = 0x04
        static let hasRoute: UInt8 = 0x08
        static let isRSR: UInt8 = 0x10
        static let known: UInt8 = 0x1F
    }

    /// The header size for `version`: 14 (v1) or 16 (v2).
    static func headerSize(version: UInt8) -> Int { version == 2 ? 16 : 14 }

    /// The width of the payload-length field and of a compressed payload's size prefix:
    /// 2 bytes in v1, 4 in v2.
    static func lengthWidth(version: UInt8) -> Int { version == 2 ? 4 : 2 }

    // MARK: - Encoding

    /// The packet's wire bytes.
    ///
    /// - Parameter padded: Append BitChat's PKCS#7 padding (to 256, 512, 1024 or 2048 bytes,
    ///   see `docs/mesh.md`). BitChat pads Noise frames; the golden vectors are unpadded.
    /// - Throws: ``MeshWireError/unsupportedVersion`` for a version other than 1 or 2;
    ///   ``MeshWireError/invalidField`` for a route on a version 1 packet, a signature that
    ///   is not 64 bytes, or a compressed payload no longer than its size prefix;
    ///   ``MeshWireError/tooLarge`` when the payload does not fit the length field, the
    ///   route has more than 255 hops, or the packet exceeds ``maximumEncodedSize``.
    public func encoded(padded: Bool = false) throws(MeshWireError) -> [UInt8] {
        try encode(ttl: ttl, isRSR: isRSR, signature: signature, padded: padded)
    }

    /// Encodes the packet with the given values in place of its TTL, RSR flag and signature
    /// (the signing encoding replaces all three).
    func encode(ttl: UInt8, isRSR: Bool, signature: [UInt8]?, padded: Bool) throws(MeshWireError) -> [UInt8] {
        guard version == 1 || version == 2 else { throw MeshWireError(.unsupportedVersion) }
        let hops = route ?? []
        guard hops.isEmpty || version == 2 else { throw MeshWireError(.invalidField, "a route needs version 2") }
        guard hops.count <= Int(UInt8.max) else { throw MeshWireError(.tooLarge, "route over 255 hops") }
        if let signature, signature.count != Self.signatureSize {
            throw MeshWireError(.invalidField, "signature must be 64 bytes")
        }
        let lengthWidth = Self.lengthWidth(version: version)
        if isCompressed, payload.count <= lengthWidth {
            throw MeshWireError(.invalidField, "compressed payload shorter than its size prefix")
        }
        guard UInt64(payload.count) <= (version == 2 ? UInt64(UInt32.max) : UInt64(UInt16.max)) else {
            throw MeshWireError(.tooLarge, "payload length field")
        }
        let size = Self.headerSize(version: version) + 8 + (recipientID == nil ? 0 : 8)
            + (hops.isEmpty ? 0 : 1 + 8 * hops.count) + payload.count + (signature == nil ? 0 : Self.signatureSize)
        guard size <= Self.maximumEncodedSize else { throw MeshWireError(.tooLarge, "packet") }

        var flags: UInt8 = 0
        if recipientID != nil { flags |= Flags.hasRecipient }
        if signature != nil { flags |= Flags.hasSignature }
        if isCompressed { flags |= Flags.isCompressed }
        if !hops.isEmpty { flags |= Flags.hasRoute }
        if isRSR { flags |= Flags.isRSR }

        var out: [UInt8] = []
        out.reserveCapacity(size + (padded ? 255 : 0))
        out.append(version)
        out.append(type.rawValue)
        out.append(ttl)
        out.appendBigEndian(timestamp, width: 8)
        out.append(flags)
        out.appendBigEndian(payload.count, width: lengthWidth)
        out.append(senderID)
        if let recipientID { out.append(recipientID) }
        if !hops.isEmpty {
            out.append(UInt8(hops.count))
            for hop in hops { out.append(hop) }
        }
        out.append(contentsOf: payload)
        if let signature { out.append(contentsOf: signature) }
        if padded { MessagePadding.pad(&out) }
        return out
    }

    // MARK: - Decoding

    /// Decodes a packet, padded or not.
    ///
    /// The header says exactly where the packet ends. What follows must be empty or a valid
    /// PKCS#7 pad (1…255 bytes, each equal to the count); anything else is rejected, so a
    /// length field that lies, truncation and appended garbage all fail.
    ///
    /// - Parameters:
    ///   - bytes: The wire bytes.
    ///   - maximumSize: The largest input accepted; checked before anything is read.
    /// - Throws: ``MeshWireError/tooLarge`` (input above `maximumSize`),
    ///   ``MeshWireError/unsupportedVersion``, ``MeshWireError/truncated``,
    ///   ``MeshWireError/trailingBytes``, or ``MeshWireError/invalidField`` for an unknown
    ///   flag bit, a route flag on a version 1 packet, a route of zero hops, or a compressed
    ///   payload too short for its size prefix.
    public static func decode(
        _ bytes: some Collection<UInt8>, maximumSize: Int = maximumEncodedSize
    ) throws(MeshWireError) -> MeshPacket {
        guard bytes.count <= maximumSize else { throw MeshWireError(.tooLarge, "packet") }
        var reader = WireReader(bytes)
        let version = try reader.u8("version")
        guard version == 1 || version == 2 else { throw MeshWireError(.unsupportedVersion) }
        let type = MessageType(rawValue: try reader.u8("type"))
        let ttl = try reader.u8("ttl")
        let timestamp = try reader.u64("timestamp")
        let flags = try reader.u8("flags")
        guard flags & ~Flags.known == 0 else { throw MeshWireError(.invalidField, "unknown flag bits") }
        // iOS ignores the route flag on v1 and never sets it there; we refuse it so that a
        // decoded packet always re-encodes to the bytes it came from.
        guard version == 2 || flags & Flags.hasRoute == 0 else {
            throw MeshWireError(.invalidField, "route flag on a version 1 packet")
        }
        let lengthWidth = lengthWidth(version: version)
        let payloadLength = try reader.uint(lengthWidth, "payload length")
        let senderID = try reader.peerID("sender")
        let recipientID = flags & Flags.hasRecipient != 0 ? try reader.peerID("recipient") : nil
        var route: [PeerID]? = nil
        if flags & Flags.hasRoute != 0 {
            let count = Int(try reader.u8("route count"))
            guard count > 0 else { throw MeshWireError(.invalidField, "route of zero hops") }
            try reader.require(8 * count, "route")
            var hops: [PeerID] = []
            hops.reserveCapacity(count)
            for _ in 0..<count { hops.append(try reader.peerID("route hop")) }
            route = hops
        }
        guard payloadLength <= UInt64(reader.remaining) else { throw MeshWireError(.truncated, "payload") }
        let isCompressed = flags & Flags.isCompressed != 0
        if isCompressed, payloadLength <= UInt64(lengthWidth) {
            throw MeshWireError(.invalidField, "compressed payload shorter than its size prefix")
        }
        let payload = try reader.bytes(Int(payloadLength), "payload")
        let signature = flags & Flags.hasSignature != 0 ? try reader.bytes(signatureSize, "signature") : nil
        let tail = reader.rest()
        guard tail.isEmpty || MessagePadding.isValidPadding(tail) else {
            throw MeshWireError(.trailingBytes, "after the packet")
        }
        return MeshPacket(
            version: version, type: type, ttl: ttl, timestamp: timestamp, senderID: senderID,
            recipientID: recipientID, route: route, payload: payload, isCompressed: isCompressed,
            isRSR: flags & Flags.isRSR != 0, signature: signature)
    }
}
