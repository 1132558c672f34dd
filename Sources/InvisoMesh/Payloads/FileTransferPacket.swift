/// A file (``MessageType/fileTransfer`` payload, or a private file inside Noise as
/// ``NoisePayloadType/fileTransfer``): BitChat's `BitchatFilePacket`.
///
/// TLVs: type u8; `0x01` file name, `0x02` file size and `0x03` MIME type with a u16
/// big-endian length; `0x04` content with a **u32** big-endian length. The size value is a
/// u32 (an 8-byte legacy size is accepted on decode and re-encoded as 4 bytes). Unknown
/// TLVs (u16 length) are skipped. The encoder always writes the size (the content length
/// when ``fileSize`` is `nil`). Sources: permissionlesstech/bitchat
/// bitchat/Protocols/BitchatFilePacket.swift@25efa6258737ac0e0e4ce24a0604b814cd7be62b; golden
/// vector `file_transfer_tlv`.
///
/// Deviations from iOS: iOS falls back to a 2-byte legacy content length when the 4-byte
/// one overruns the input; we do not (that guess can read a malformed packet as valid).
/// iOS appends repeated content TLVs; we reject duplicates.
public struct FileTransferPacket: Hashable, Sendable {
    /// BitChat's file payload ceiling (`FileTransferLimits.maxPayloadBytes`): 1 MiB.
    public static let maxContentBytes = 1 << 20

    /// The file name.
    public var fileName: String?
    /// The declared file size; `nil` encodes as the content length, and decoding fills it
    /// in that way when the size TLV is absent.
    public var fileSize: UInt32?
    /// The MIME type.
    public var mimeType: String?
    /// The file bytes (not empty).
    public var content: [UInt8]

    /// Creates a file packet.
    public init(fileName: String? = nil, fileSize: UInt32? = nil, mimeType: String? = nil, content: [UInt8]) {
        self.fileName = fileName
        self.fileSize = fileSize
        self.mimeType = mimeType
        self.content = content
    }

    /// The wire bytes.
    ///
    /// - Throws: ``MeshWireError/invalidField`` for empty content,
    ///   ``MeshWireError/tooLarge`` for content above ``maxContentBytes`` or a name or MIME
    ///   type above 65,535 bytes.
    public func encoded() throws(MeshWireError) -> [UInt8] {
        guard !content.isEmpty else { throw MeshWireError(.invalidField, "empty file content") }
        guard content.count <= Self.maxContentBytes else { throw MeshWireError(.tooLarge, "file content") }
        var out: [UInt8] = []
        out.reserveCapacity(content.count + 32)
        if let fileName { try Self.appendText(0x01, fileName, "file name", to: &out) }
        out.append(0x02)
        out.appendBigEndian(4, width: 2)
        out.appendBigEndian(fileSize ?? UInt32(content.count), width: 4)
        if let mimeType { try Self.appendText(0x03, mimeType, "MIME type", to: &out) }
        out.append(0x04)
        out.appendBigEndian(content.count, width: 4)
        out.append(contentsOf: content)
        return out
    }

    /// Decodes the wire bytes.
    ///
    /// - Parameter limit: The largest content and declared size accepted (default
    ///   ``maxContentBytes``).
    /// - Throws: ``MeshWireError/truncated``, ``MeshWireError/missingField`` (no content),
    ///   ``MeshWireError/duplicateField``, ``MeshWireError/invalidField`` (size not 4 or 8
    ///   bytes, empty content), ``MeshWireError/tooLarge``, ``MeshWireError/invalidUTF8``.
    public init(decoding bytes: some Collection<UInt8>, limit: Int = maxContentBytes) throws(MeshWireError) {
        var reader = WireReader(bytes)
        var fileName: String?
        var fileSize: UInt32?
        var mimeType: String?
        var content: [UInt8]?
        while !reader.isAtEnd {
            let type = try reader.u8("TLV type")
            if type == 0x04 {
                guard content == nil else { throw MeshWireError(.duplicateField, "file content") }
                let length = try reader.u32("content length")
                guard length > 0 else { throw MeshWireError(.invalidField, "empty file content") }
                guard length <= UInt32(clamping: limit) else { throw MeshWireError(.tooLarge, "file content") }
                content = try reader.bytes(Int(length), "file content")
                continue
            }
            let length = Int(try reader.u16("TLV length"))
            var value = WireReader(try reader.slice(length, "TLV value"))
            switch type {
            case 0x01:
                guard fileName == nil else { throw MeshWireError(.duplicateField, "file name") }
                fileName = try value.string(length, "file name")
            case 0x02:
                guard fileSize == nil else { throw MeshWireError(.duplicateField, "file size") }
                guard length == 4 || length == 8 else { throw MeshWireError(.invalidField, "file size length") }
                let size = try value.uint(length, "file size")
                guard size <= UInt64(UInt32.max), size <= UInt64(max(0, limit)) else { throw MeshWireError(.tooLarge, "file size") }
                fileSize = UInt32(size)
            case 0x03:
                guard mimeType == nil else { throw MeshWireError(.duplicateField, "MIME type") }
                mimeType = try value.string(length, "MIME type")
            default:
                continue
            }
        }
        guard let content else { throw MeshWireError(.missingField, "file content") }
        // As on iOS, an absent size means the content length (which is what encoding writes).
        self.init(fileName: fileName, fileSize: fileSize ?? UInt32(content.count), mimeType: mimeType, content: content)
    }

    private static func appendText(
        _ type: UInt8, _ text: String, _ what: StaticString, to out: inout [UInt8]
    ) throws(MeshWireError) {
        let utf8 = text.utf8
        guard utf8.count <= Int(UInt16.max) else { throw MeshWireError(.tooLarge, "\(what)") }
        out.append(type)
        out.appendBigEndian(utf8.count, width: 2)
        out.append(contentsOf: utf8)
    }
}
