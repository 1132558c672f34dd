public import InvisoCrypto
public import InvisoNoise

/// Everything a chat session needs to be resumed by another process: who we are in which
/// room, the secure channel's state and the reliable link's state (`docs/client.md`,
/// "Resuming a session"). ``ChatClient`` keeps it in the store as the session's
/// `ratchet` secret (sealed like every secret) and replaces it after every change.
///
/// It holds private keys, the ratchet's chain keys and unacknowledged message payloads:
/// it only ever exists as ``SecretBytes``, and its ``description`` shows none of it.
///
/// Format 1, all integers big-endian:
///
/// ```
/// "IVSS" ‖ 0x01 (format)
/// protocol  u8    0x01 v1, 0x02 v2
/// role      u8    0x01 creator, 0x02 joiner
/// room id   u16 length ‖ UTF-8
/// device id u16 length ‖ UTF-8
/// identity  32    our private key (v2: Noise static key; v1: X25519 key)
/// channel   u32 length ‖ bytes
///             v2: session length u32 ‖ V2Session.serialized() (its own format byte
///                 first) ‖ has-direct-key u8 (0/1) ‖ direct-path key (32, if present)
///             v1: peer public key (32) ‖ sealed count u64 ‖ has-highest u8 (0/1)
///                 ‖ highest opened counter u64 ‖ window words u16 ‖ words (u64 each)
/// link      next seq u64 ‖ peer ack u64 ‖ delivered u64
///           ‖ unacked count u32 ‖ (length u32 ‖ payload)*     seq peer ack + 1, + 2, …
///           ‖ reordered count u32 ‖ (seq u64 ‖ length u32 ‖ payload)*
/// ```
///
/// Nothing may follow. Any other input is refused with a ``ChatSnapshotError``.
public struct ChatSessionSnapshot: Sendable {
    /// The channel's state.
    public enum Channel: Sendable {
        /// A v2 channel: its ratchet session.
        case v2(V2Session)
        /// A v1 channel: the peer's X25519 key, the frames sealed and the frames opened.
        case v1(peerPublicKey: [UInt8], sentCount: UInt64, window: ReplayWindow)
    }

    /// Our role: the room's creator or the joiner.
    public var role: V2Pairing.Role
    /// The server's room id.
    public var roomID: String
    /// This session's device id (the same one rejoins the room).
    public var deviceID: String
    /// Our private key for this session (32 bytes).
    public var identity: SecretBytes
    /// The channel's state.
    public var channel: Channel
    /// The reliable link's state.
    public var link: ReliableLink.Snapshot

    /// A snapshot with these fields.
    public init(
        role: V2Pairing.Role, roomID: String, deviceID: String, identity: SecretBytes, channel: Channel,
        link: ReliableLink.Snapshot
    ) {
        self.role = role
        self.roomID = roomID
        self.deviceID = deviceID
        self.identity = identity
        self.channel = channel
        self.link = link
    }

    /// The protocol of the channel.
    public var protocolVersion: ChatProtocolVersion {
        if case .v2 = channel { .v2 } else { .v1 }
    }

    static let magic: [UInt8] = Array("IVSS".utf8)
    static let formatVersion: UInt8 = 0x01
    /// The longest id stored (room and device ids are UUIDs).
    static let maxIDLength = 1_024

    // MARK: - Writing

    /// The snapshot's bytes (format 1).
    public func serialized() -> SecretBytes {
        var writer = Writer()
        writer.bytes(Self.magic)
        writer.byte(Self.formatVersion)
        writer.byte(protocolVersion == .v2 ? 0x02 : 0x01)
        writer.byte(role == .creator ? 0x01 : 0x02)
        writer.string(roomID)
        writer.string(deviceID)
        identity.withUnsafeBytes { writer.bytes($0) }
        switch channel {
        case .v2(let session):
            let bytes = session.serialized()
            let key = session.directPathKey
            writer.u32(UInt32(4 + bytes.count + 1 + (key?.count ?? 0)))
            writer.u32(UInt32(bytes.count))
            bytes.withUnsafeBytes { writer.bytes($0) }
            writer.byte(key == nil ? 0 : 1)
            key?.withUnsafeBytes { writer.bytes($0) }
        case .v1(let peerPublicKey, let sentCount, let window):
            var inner = Writer()
            inner.bytes(peerPublicKey)
            inner.u64(sentCount)
            inner.byte(window.highestAccepted == nil ? 0 : 1)
            inner.u64(window.highestAccepted ?? 0)
            inner.u16(UInt16(window.words.count))
            for word in window.words { inner.u64(word) }
            writer.u32(UInt32(inner.output.count))
            writer.bytes(inner.output)
            inner.wipe()
        }
        writer.u64(link.nextSeq)
        writer.u64(link.peerAck)
        writer.u64(link.delivered)
        writer.u32(UInt32(link.unacknowledged.count))
        for payload in link.unacknowledged {
            writer.u32(UInt32(payload.count))
            writer.bytes(payload)
        }
        writer.u32(UInt32(link.reordered.count))
        for (seq, payload) in link.reordered.sorted(by: { $0.key < $1.key }) {
            writer.u64(seq)
            writer.u32(UInt32(payload.count))
            writer.bytes(payload)
        }
        let result = SecretBytes(writer.output)
        writer.wipe()
        return result
    }

    // MARK: - Reading

    /// Parses ``serialized()``'s bytes.
    ///
    /// - Parameter linkConfiguration: The limits the restored link will have (the
    ///   snapshot must fit them).
    /// - Throws: ``ChatSnapshotError/truncated`` when the bytes end early,
    ///   ``ChatSnapshotError/unsupportedFormat`` for another magic or format,
    ///   ``ChatSnapshotError/malformed`` for anything else that does not parse or is
    ///   inconsistent (including trailing bytes).
    public init(
        serialized: SecretBytes, linkConfiguration: ReliableLink.Configuration = ReliableLink.Configuration()
    ) throws(ChatSnapshotError) {
        let result: Result<ChatSessionSnapshot, ChatSnapshotError> = serialized.withUnsafeBytes { raw in
            var reader = Reader(raw)
            do throws(ChatSnapshotError) {
                return .success(try Self.parse(&reader, linkConfiguration: linkConfiguration))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    private static func parse(
        _ reader: inout Reader, linkConfiguration: ReliableLink.Configuration
    ) throws(ChatSnapshotError) -> ChatSessionSnapshot {
        guard try reader.bytes(4) == magic, try reader.byte() == formatVersion else { throw .unsupportedFormat }
        let version = try reader.byte()
        let roleByte = try reader.byte()
        guard version == 0x01 || version == 0x02, roleByte == 0x01 || roleByte == 0x02 else { throw .malformed }
        let role: V2Pairing.Role = roleByte == 0x01 ? .creator : .joiner
        let roomID = try reader.string()
        let deviceID = try reader.string()
        let identity = SecretBytes(try reader.bytes(32))
        let channelLength = Int(try reader.u32())
        var channelReader = Reader(try reader.slice(channelLength))
        let channel: Channel
        if version == 0x02 {
            let bytes = SecretBytes(try channelReader.bytes(Int(try channelReader.u32())))
            let hasKey = try channelReader.byte()
            guard hasKey <= 1 else { throw .malformed }
            let key = hasKey == 1 ? SecretBytes(try channelReader.bytes(32)) : nil
            guard channelReader.isAtEnd, let session = try? V2Session(serialized: bytes), session.role == role else {
                throw .malformed
            }
            channel = .v2(V2Session(role: role, state: session.state, directPathKey: key))
        } else {
            let peer = try channelReader.bytes(32)
            let sent = try channelReader.u64()
            let hasHighest = try channelReader.byte()
            let highest = try channelReader.u64()
            let count = Int(try channelReader.u16())
            var words: [UInt64] = []
            for _ in 0..<count { words.append(try channelReader.u64()) }
            guard hasHighest <= 1, hasHighest == 1 || highest == 0, channelReader.isAtEnd,
                let window = ReplayWindow(size: count * 64, highest: hasHighest == 1 ? highest : nil, words: words)
            else { throw .malformed }
            channel = .v1(peerPublicKey: peer, sentCount: sent, window: window)
        }
        let nextSeq = try reader.u64()
        let peerAck = try reader.u64()
        let delivered = try reader.u64()
        let unackedCount = Int(try reader.u32())
        guard unackedCount <= linkConfiguration.outboxLimit else { throw .malformed }
        var unacknowledged: [[UInt8]] = []
        for _ in 0..<unackedCount { unacknowledged.append(try reader.bytes(Int(try reader.u32()))) }
        let reorderedCount = Int(try reader.u32())
        guard UInt64(reorderedCount) <= linkConfiguration.reorderWindow else { throw .malformed }
        var reordered: [UInt64: [UInt8]] = [:]
        for _ in 0..<reorderedCount {
            let seq = try reader.u64()
            let payload = try reader.bytes(Int(try reader.u32()))
            guard reordered.updateValue(payload, forKey: seq) == nil else { throw .malformed }
        }
        guard reader.isAtEnd else { throw .malformed }
        let link = ReliableLink.Snapshot(
            nextSeq: nextSeq, peerAck: peerAck, delivered: delivered, unacknowledged: unacknowledged, reordered: reordered)
        guard (try? ReliableLink(configuration: linkConfiguration, restoring: link)) != nil else { throw .malformed }
        return ChatSessionSnapshot(
            role: role, roomID: roomID, deviceID: deviceID, identity: identity, channel: channel, link: link)
    }

    // MARK: - Byte helpers

    private struct Writer {
        var output: [UInt8] = []

        mutating func byte(_ value: UInt8) { output.append(value) }
        mutating func bytes(_ value: some Sequence<UInt8>) { output.append(contentsOf: value) }
        mutating func bytes(_ value: UnsafeRawBufferPointer) { output.append(contentsOf: value) }
        mutating func u16(_ value: UInt16) { integer(UInt64(value), width: 2) }
        mutating func u32(_ value: UInt32) { integer(UInt64(value), width: 4) }
        mutating func u64(_ value: UInt64) { integer(value, width: 8) }
        mutating func string(_ value: String) {
            let utf8 = Array(value.utf8.prefix(ChatSessionSnapshot.maxIDLength))
            u16(UInt16(utf8.count))
            bytes(utf8)
        }

        private mutating func integer(_ value: UInt64, width: Int) {
            for index in (0..<width).reversed() { output.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8))) }
        }

        /// Overwrites the buffer (best effort: it held keys).
        mutating func wipe() {
            for index in output.indices { output[index] = 0 }
        }
    }

    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var offset = 0

        init(_ raw: UnsafeRawBufferPointer) { self.raw = raw }

        var isAtEnd: Bool { offset == raw.count }

        mutating func slice(_ count: Int) throws(ChatSnapshotError) -> UnsafeRawBufferPointer {
            guard count >= 0, raw.count - offset >= count else { throw .truncated }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + count)])
        }

        mutating func bytes(_ count: Int) throws(ChatSnapshotError) -> [UInt8] { Array(try slice(count)) }
        mutating func byte() throws(ChatSnapshotError) -> UInt8 { try slice(1)[0] }
        mutating func u16() throws(ChatSnapshotError) -> UInt16 { UInt16(try integer(2)) }
        mutating func u32() throws(ChatSnapshotError) -> UInt32 { UInt32(try integer(4)) }
        mutating func u64() throws(ChatSnapshotError) -> UInt64 { try integer(8) }

        mutating func string() throws(ChatSnapshotError) -> String {
            let count = Int(try u16())
            guard count <= ChatSessionSnapshot.maxIDLength, let text = String(validating: try bytes(count), as: UTF8.self)
            else { throw .malformed }
            return text
        }

        private mutating func integer(_ width: Int) throws(ChatSnapshotError) -> UInt64 {
            try slice(width).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
    }
}

// MARK: - Redacted description

extension ChatSessionSnapshot: CustomStringConvertible, CustomReflectable {
    /// The protocol and role; never a key, an id or a payload.
    public var description: String { "ChatSessionSnapshot(\(protocolVersion), \(role))" }
    /// No children, so reflection shows nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Why stored session state was refused. Carries no byte of it. Compare with the static
/// members (`error == .truncated`).
public struct ChatSnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: Sendable, Hashable {
        case truncated, unsupportedFormat, malformed
    }

    package let code: Code

    package init(_ code: Code) { self.code = code }

    /// The bytes end before the snapshot does.
    public static let truncated = ChatSnapshotError(.truncated)
    /// Not a snapshot, or a format this version does not read.
    public static let unsupportedFormat = ChatSnapshotError(.unsupportedFormat)
    /// A field is invalid or the parts are inconsistent.
    public static let malformed = ChatSnapshotError(.malformed)

    /// What went wrong.
    public var description: String {
        switch code {
        case .truncated: "stored session state is truncated"
        case .unsupportedFormat: "stored session state has an unsupported format"
        case .malformed: "stored session state is malformed"
        }
    }
}
