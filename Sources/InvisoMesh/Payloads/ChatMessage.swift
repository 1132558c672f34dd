/// The payload of a public chat message (``MessageType/message``): BitChat's binary
/// `BitchatMessage`.
///
/// Layout (big-endian): flags u8 | timestamp u64 (ms) | id (u8 length + UTF-8) |
/// sender (u8 length + UTF-8) | content (u16 length + bytes) | then, in this order and
/// only when their flag is set: original sender (0x04), recipient nickname (0x08), sender
/// peer ID (0x10, the ID as UTF-8 text), mentions (0x20: u8 count, each u8 length +
/// UTF-8), channel (0x40: u8 length + UTF-8).
///
/// Flags: 0x01 relay, 0x02 private, 0x04 original sender, 0x08 recipient nickname, 0x10
/// sender peer ID, 0x20 mentions, 0x40 channel, 0x80 encrypted.
///
/// **Flag 0x40 differs between the clients.** Android
/// (app/src/main/java/com/bitchat/android/model/BitchatMessage.kt@045db11506bbd64664115b59c45a61819fa02016)
/// uses it for *hasChannel* followed by a length-prefixed channel; iOS
/// (localPackages/BitFoundation/Sources/BitFoundation/BitchatMessage.swift@2baed6903fc04dbd901cb24ee266002321de194e)
/// uses it for *isBridged* with no field. The golden bytes are Android's, so we follow
/// Android, and read a 0x40 with no bytes left after the other fields as iOS's
/// ``isBridged``. Android's 0x80 (*isEncrypted*) puts the ciphertext where the content goes
/// and decodes the content as empty (``encryptedContent``).
///
/// Unlike both clients this decoder is strict: every field a flag announces must be there,
/// text must be valid UTF-8, a mentions list must not be empty, and no bytes may follow.
public struct ChatMessage: Hashable, Sendable {
    /// Message ID (UTF-8, at most 255 bytes).
    public var id: String
    /// Sender nickname (UTF-8, at most 255 bytes).
    public var sender: String
    /// Text content (UTF-8, at most 65,535 bytes). Ignored when ``encryptedContent`` is set,
    /// and decoded as `""` then.
    public var content: String
    /// Milliseconds since the Unix epoch.
    public var timestamp: UInt64
    /// Flag 0x01: the message was relayed.
    public var isRelay: Bool
    /// Flag 0x02: the message is private.
    public var isPrivate: Bool
    /// Flag 0x04: the nickname of the original sender of a relayed message.
    public var originalSender: String?
    /// Flag 0x08: the recipient's nickname.
    public var recipientNickname: String?
    /// Flag 0x10: the sender's peer ID as text.
    public var senderPeerID: String?
    /// Flag 0x20: mentioned nicknames (at most 255; empty means absent).
    public var mentions: [String]
    /// Flag 0x40 with a field (Android): the channel, e.g. `#general`.
    public var channel: String?
    /// Flag 0x40 without a field (iOS): the message came across a mesh bridge. Encoded only
    /// when ``channel`` is `nil`; decoded as `false` whenever a channel is present.
    public var isBridged: Bool
    /// Flag 0x80 (Android): ciphertext carried in place of the content (at most 65,535
    /// bytes). The plaintext ``content`` never goes on the wire then.
    public var encryptedContent: [UInt8]?

    /// Creates a message.
    public init(
        id: String, sender: String, content: String, timestamp: UInt64, isRelay: Bool = false,
        isPrivate: Bool = false, originalSender: String? = nil, recipientNickname: String? = nil,
        senderPeerID: String? = nil, mentions: [String] = [], channel: String? = nil, isBridged: Bool = false,
        encryptedContent: [UInt8]? = nil
    ) {
        self.id = id
        self.sender = sender
        self.content = content
        self.timestamp = timestamp
        self.isRelay = isRelay
        self.isPrivate = isPrivate
        self.originalSender = originalSender
        self.recipientNickname = recipientNickname
        self.senderPeerID = senderPeerID
        self.mentions = mentions
        self.channel = channel
        self.isBridged = isBridged
        self.encryptedContent = encryptedContent
    }

    /// Whether flag 0x80 is set (``encryptedContent`` present).
    public var isEncrypted: Bool { encryptedContent != nil }

    /// The wire bytes.
    ///
    /// - Throws: ``MeshWireError/tooLarge`` when a field exceeds its length prefix (BitChat
    ///   truncates silently; we refuse).
    public func encoded() throws(MeshWireError) -> [UInt8] {
        var flags: UInt8 = 0
        if isRelay { flags |= 0x01 }
        if isPrivate { flags |= 0x02 }
        if originalSender != nil { flags |= 0x04 }
        if recipientNickname != nil { flags |= 0x08 }
        if senderPeerID != nil { flags |= 0x10 }
        if !mentions.isEmpty { flags |= 0x20 }
        if channel != nil || isBridged { flags |= 0x40 }
        if encryptedContent != nil { flags |= 0x80 }

        var out: [UInt8] = [flags]
        out.appendBigEndian(timestamp, width: 8)
        try Self.appendShort(id, "id", to: &out)
        try Self.appendShort(sender, "sender", to: &out)
        let body = encryptedContent ?? Array(content.utf8)
        guard body.count <= Int(UInt16.max) else { throw MeshWireError(.tooLarge, "content") }
        out.appendBigEndian(body.count, width: 2)
        out.append(contentsOf: body)
        if let originalSender { try Self.appendShort(originalSender, "original sender", to: &out) }
        if let recipientNickname { try Self.appendShort(recipientNickname, "recipient nickname", to: &out) }
        if let senderPeerID { try Self.appendShort(senderPeerID, "sender peer ID", to: &out) }
        if !mentions.isEmpty {
            guard mentions.count <= Int(UInt8.max) else { throw MeshWireError(.tooLarge, "mentions") }
            out.append(UInt8(mentions.count))
            for mention in mentions { try Self.appendShort(mention, "mention", to: &out) }
        }
        if let channel { try Self.appendShort(channel, "channel", to: &out) }
        return out
    }

    /// Decodes the wire bytes.
    ///
    /// - Throws: ``MeshWireError/truncated``, ``MeshWireError/trailingBytes``,
    ///   ``MeshWireError/invalidUTF8``, or ``MeshWireError/invalidField`` for a mentions
    ///   flag with a count of 0.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        let flags = try reader.u8("flags")
        timestamp = try reader.u64("timestamp")
        id = try reader.string(Int(try reader.u8("id length")), "id")
        sender = try reader.string(Int(try reader.u8("sender length")), "sender")
        let bodyLength = Int(try reader.u16("content length"))
        if flags & 0x80 != 0 {
            encryptedContent = try reader.bytes(bodyLength, "encrypted content")
            content = ""
        } else {
            content = try reader.string(bodyLength, "content")
            encryptedContent = nil
        }
        isRelay = flags & 0x01 != 0
        isPrivate = flags & 0x02 != 0
        originalSender = flags & 0x04 != 0 ? try Self.readShort(&reader, "original sender") : nil
        recipientNickname = flags & 0x08 != 0 ? try Self.readShort(&reader, "recipient nickname") : nil
        senderPeerID = flags & 0x10 != 0 ? try Self.readShort(&reader, "sender peer ID") : nil
        mentions = []
        if flags & 0x20 != 0 {
            let count = Int(try reader.u8("mention count"))
            guard count > 0 else { throw MeshWireError(.invalidField, "empty mentions list") }
            for _ in 0..<count { mentions.append(try Self.readShort(&reader, "mention")) }
        }
        channel = nil
        isBridged = false
        if flags & 0x40 != 0 {
            if reader.isAtEnd {
                isBridged = true
            } else {
                channel = try Self.readShort(&reader, "channel")
            }
        }
        try reader.finish("chat message")
    }

    private static func appendShort(_ text: String, _ what: StaticString, to out: inout [UInt8]) throws(MeshWireError) {
        let utf8 = text.utf8
        guard utf8.count <= Int(UInt8.max) else { throw MeshWireError(.tooLarge, "\(what)") }
        out.append(UInt8(utf8.count))
        out.append(contentsOf: utf8)
    }

    private static func readShort(_ reader: inout WireReader, _ what: StaticString) throws(MeshWireError) -> String {
        try reader.string(Int(try reader.u8(what)), what)
    }
}
