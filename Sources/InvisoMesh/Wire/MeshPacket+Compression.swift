/// Reading compressed payloads.
///
/// When flag 0x04 is set, BitChat's payload field is `original size` (v1 u16, v2 u32,
/// big-endian) followed by a **raw DEFLATE** stream (RFC 1951, no zlib header or Adler-32):
/// permissionlesstech/bitchat localPackages/BitFoundation/Sources/BitFoundation/BinaryProtocol.swift@1b64bf4949eec0ba83d0b29bed19de1704965527
/// (size prefix per version) and CompressionUtil.swift@4c1cf2aa1abed10cb96780637e2ed332e184d8f1
/// (`COMPRESSION_ZLIB`, which is raw DEFLATE); permissionlesstech/bitchat-android
/// app/src/main/java/com/bitchat/android/protocol/CompressionUtil.kt@0d04653bb8858950b40af453391a5708e6374da0
/// (`Deflater(level, nowrap = true)`). Inviso never compresses, and relays forward the
/// compressed bytes unchanged (``MeshPacket/payload`` keeps them as carried).
extension MeshPacket {
    /// The largest ratio of decompressed to compressed bytes a raw DEFLATE stream can reach
    /// (a 258-byte match costs at least 2 bits); a larger declared size cannot be genuine.
    /// Source: permissionlesstech/bitchat
    /// localPackages/BitFoundation/Sources/BitFoundation/PacketPayloadLimits.swift@c1e5a474e8fbe46489b577432f27cb596212d3d7.
    static let maxDeflateRatio = 1032

    /// The payload after decompression: ``payload`` itself when the packet is not
    /// compressed, otherwise the inflated stream, which must be exactly the declared size.
    ///
    /// - Parameter limit: The most bytes to produce. A declared size above it is refused
    ///   before inflating, and inflation never writes past it.
    /// - Throws: ``MeshWireError/tooLarge`` (uncompressed payload above `limit`),
    ///   ``MeshWireError/decompressedSizeExceeded`` (declared size above `limit`, or a
    ///   stream longer than declared), ``MeshWireError/invalidField`` (declared size 0, or
    ///   more than 1032 times the stream), ``MeshWireError/malformedCompressedData``,
    ///   ``MeshWireError/truncated`` or ``MeshWireError/trailingBytes`` (see ``Inflate``).
    public func decompressedPayload(limit: Int) throws(MeshWireError) -> [UInt8] {
        guard isCompressed else {
            guard payload.count <= limit else { throw MeshWireError(.tooLarge, "payload") }
            return payload
        }
        var reader = WireReader(payload)
        let declared = try reader.uint(Self.lengthWidth(version: version), "original size")
        let stream = reader.rest()
        guard declared > 0 else { throw MeshWireError(.invalidField, "original size 0") }
        guard declared <= UInt64(max(0, limit)) else { throw MeshWireError(.decompressedSizeExceeded) }
        guard !stream.isEmpty else { throw MeshWireError(.truncated, "compressed stream") }
        guard declared <= UInt64(stream.count) * UInt64(Self.maxDeflateRatio) else {
            throw MeshWireError(.invalidField, "declared size beyond the DEFLATE ratio")
        }
        let output = try Inflate.decompress(stream, limit: Int(declared))
        guard output.count == Int(declared) else {
            throw MeshWireError(.malformedCompressedData, "shorter than the declared size")
        }
        return output
    }
}
