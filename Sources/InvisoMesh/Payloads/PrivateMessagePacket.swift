/// A private chat message, carried inside a Noise transport message as
/// ``NoisePayloadType/privateMessage``.
///
/// TLVs of type u8, length u8: `0x00` message ID (UTF-8), `0x01` content (UTF-8); both
/// required, so each is at most 255 bytes. An unknown TLV type makes the packet invalid, as
/// on both clients. Sources: permissionlesstech/bitchat bitchat/Protocols/Packets.swift@4b88f98f21b31c89a4358b6b2e994d14601eb32b
/// and permissionlesstech/bitchat-android
/// app/src/main/java/com/bitchat/android/model/NoiseEncrypted.kt@04fd0eb04d31d2613194c36a2589d9ecb53752d8
/// (whose decoder also tries a u16/u16 form first; we read only the u8/u8 form both
/// clients send).
public struct PrivateMessagePacket: Hashable, Sendable {
    /// The message ID.
    public var messageID: String
    /// The message text.
    public var content: String

    /// Creates a private message.
    public init(messageID: String, content: String) {
        self.messageID = messageID
        self.content = content
    }

    /// The wire bytes.
    ///
    /// - Throws: ``MeshWireError/tooLarge`` when the ID or content exceeds 255 UTF-8 bytes.
    public func encoded() throws(MeshWireError) -> [UInt8] {
        let id = Array(messageID.utf8)
        let text = Array(content.utf8)
        guard id.count <= 255 else { throw MeshWireError(.tooLarge, "message ID") }
        guard text.count <= 255 else { throw MeshWireError(.tooLarge, "content") }
        return [0x00, UInt8(id.count)] + id + [0x01, UInt8(text.count)] + text
    }

    /// Decodes the wire bytes.
    ///
    /// - Throws: ``MeshWireError/truncated``, ``MeshWireError/invalidField`` (unknown TLV),
    ///   ``MeshWireError/duplicateField``, ``MeshWireError/missingField``,
    ///   ``MeshWireError/invalidUTF8``.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        var messageID: String?
        var content: String?
        while !reader.isAtEnd {
            let type = try reader.u8("TLV type")
            let length = Int(try reader.u8("TLV length"))
            switch type {
            case 0x00:
                guard messageID == nil else { throw MeshWireError(.duplicateField, "message ID") }
                messageID = try reader.string(length, "message ID")
            case 0x01:
                guard content == nil else { throw MeshWireError(.duplicateField, "content") }
                content = try reader.string(length, "content")
            default:
                throw MeshWireError(.invalidField, "unknown private message TLV")
            }
        }
        guard let messageID else { throw MeshWireError(.missingField, "message ID") }
        guard let content else { throw MeshWireError(.missingField, "content") }
        self.init(messageID: messageID, content: content)
    }
}
