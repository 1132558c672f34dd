/// The seat a member holds in a room: the creator (`client1`, always the initiator) or the
/// joiner (`client2`).
public enum RoomRole: UInt8, Sendable, Hashable, CaseIterable {
    /// `client1`: made the code; always the initiator.
    case creator = 1
    /// `client2`: accepted the code.
    case joiner = 2

    /// The other seat.
    public var other: RoomRole { self == .creator ? .joiner : .creator }
}

/// What one instance tells the others over a ``SignalingBus``.
///
/// Encoding: one kind byte, then the fields in order; strings and byte strings are a
/// 4-byte big-endian length and the bytes. ``decode(_:)`` checks every length and
/// refuses anything else (another program may share the channel).
enum BusEvent: Sendable, Equatable {
    /// A member took its seat on the sending instance.
    case seated(roomID: String, role: RoomRole)
    /// Answer to ``seated(roomID:role:)``: this member is seated on the sending instance.
    case present(roomID: String, role: RoomRole)
    /// A member left its seat (`leave_room`) or its socket closed.
    case left(roomID: String, role: RoomRole, disconnected: Bool)
    /// A relayed text frame (already with `from`/`roomId`) for the member in seat `to`.
    case text(roomID: String, to: RoomRole, frame: [UInt8])
    /// A relayed binary frame for the member in seat `to`.
    case binary(roomID: String, to: RoomRole, frame: [UInt8])
    /// A join code was accepted (for creators watching it).
    case accepted(joinID: String, roomID: String)
    /// A room was deleted.
    case roomDeleted(roomID: String)
    /// Rooms of these device IDs were purged.
    case purged(deviceIDs: [String])

    private enum Kind: UInt8 {
        case seated = 1, present, left, text, binary, accepted, roomDeleted, purged
    }

    /// The bytes published on the bus.
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        func put(_ bytes: some Collection<UInt8>) {
            let count = UInt32(bytes.count)
            out += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            out += bytes
        }
        switch self {
        case .seated(let room, let role):
            out = [Kind.seated.rawValue, role.rawValue]
            put(room.utf8)
        case .present(let room, let role):
            out = [Kind.present.rawValue, role.rawValue]
            put(room.utf8)
        case .left(let room, let role, let disconnected):
            out = [Kind.left.rawValue, role.rawValue, disconnected ? 1 : 0]
            put(room.utf8)
        case .text(let room, let to, let frame):
            out = [Kind.text.rawValue, to.rawValue]
            put(room.utf8)
            put(frame)
        case .binary(let room, let to, let frame):
            out = [Kind.binary.rawValue, to.rawValue]
            put(room.utf8)
            put(frame)
        case .accepted(let code, let room):
            out = [Kind.accepted.rawValue]
            put(code.utf8)
            put(room.utf8)
        case .roomDeleted(let room):
            out = [Kind.roomDeleted.rawValue]
            put(room.utf8)
        case .purged(let ids):
            out = [Kind.purged.rawValue]
            let count = UInt32(ids.count)
            out += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            for id in ids { put(id.utf8) }
        }
        return out
    }

    /// Parses an event, or returns `nil` for anything malformed.
    static func decode(_ bytes: [UInt8]) -> BusEvent? {
        var reader = Reader(bytes: bytes)
        guard let kindByte = reader.byte(), let kind = Kind(rawValue: kindByte) else { return nil }
        let event: BusEvent?
        switch kind {
        case .seated, .present:
            guard let role = reader.role(), let room = reader.string() else { return nil }
            event = kind == .seated ? .seated(roomID: room, role: role) : .present(roomID: room, role: role)
        case .left:
            guard let role = reader.role(), let flag = reader.byte(), flag <= 1, let room = reader.string() else { return nil }
            event = .left(roomID: room, role: role, disconnected: flag == 1)
        case .text, .binary:
            guard let role = reader.role(), let room = reader.string(), let frame = reader.chunk() else { return nil }
            event = kind == .text ? .text(roomID: room, to: role, frame: frame) : .binary(roomID: room, to: role, frame: frame)
        case .accepted:
            guard let code = reader.string(), let room = reader.string() else { return nil }
            event = .accepted(joinID: code, roomID: room)
        case .roomDeleted:
            guard let room = reader.string() else { return nil }
            event = .roomDeleted(roomID: room)
        case .purged:
            guard let count = reader.length(), count <= reader.remaining / 4 else { return nil }
            var ids: [String] = []
            for _ in 0..<count {
                guard let id = reader.string() else { return nil }
                ids.append(id)
            }
            event = .purged(deviceIDs: ids)
        }
        return reader.remaining == 0 ? event : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func role() -> RoomRole? { byte().flatMap(RoomRole.init(rawValue:)) }

        mutating func length() -> Int? {
            guard remaining >= 4 else { return nil }
            let value = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            return value
        }

        mutating func chunk() -> [UInt8]? {
            guard let count = length(), count <= remaining else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func string() -> String? {
            guard let raw = chunk() else { return nil }
            return String(validating: raw, as: UTF8.self)
        }
    }
}
