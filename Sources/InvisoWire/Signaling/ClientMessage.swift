/// A message from a client to the signaling server (a JSON text frame).
public enum ClientMessage: Sendable, Equatable {
    /// `join_room {roomId, deviceId}`: take this device's seat in the room.
    case joinRoom(roomID: String, deviceID: String)
    /// `leave_room`.
    case leaveRoom
    /// A message for the other member (see ``RelayKind``); the whole object is kept.
    case relay(RelayKind, JSONObject)
    /// `ping` (application-level; answered with `pong`).
    case ping
    /// `ping_peer` (asks the server to wake the other member; answered with `ping_sent`).
    case pingPeer
    /// `watch_code {joinid, client1}`: push `room_accepted` when this code is accepted.
    case watchCode(joinID: String, client1: String)

    /// The longest room id, device ID or join code accepted (the app's are 48, 36 and 6).
    public static let maxIdentifierLength = 128

    /// Parses one text frame.
    ///
    /// - Throws: ``SignalingError`` with the text to send back.
    public static func parse(_ frame: some Collection<UInt8>) throws(SignalingError) -> ClientMessage {
        guard case .object(let object) = try? JSONValue.parse(frame) else { throw SignalingError.invalidJSON }
        return try parse(object)
    }

    /// Interprets a parsed JSON object.
    public static func parse(_ object: JSONObject) throws(SignalingError) -> ClientMessage {
        guard let type = object["type"]?.stringValue else { throw SignalingError.missingType }
        switch type {
        case "join_room":
            guard let room = identifier(object["roomId"]) else { throw SignalingError.invalidRoomID }
            guard let device = identifier(object["deviceId"]) else { throw SignalingError.invalidDeviceID }
            return .joinRoom(roomID: room, deviceID: device)
        case "leave_room":
            return .leaveRoom
        case "ping":
            return .ping
        case "ping_peer":
            return .pingPeer
        case "watch_code":
            guard let code = identifier(object["joinid"]) else { throw SignalingError.missingField("joinid") }
            guard let client1 = identifier(object["client1"]) else { throw SignalingError.missingField("client1") }
            return .watchCode(joinID: code, client1: client1)
        default:
            guard let kind = RelayKind(rawValue: type) else { throw SignalingError.unknownType(type) }
            try kind.validate(object)
            return .relay(kind, object)
        }
    }

    /// A non-empty string of at most ``maxIdentifierLength`` characters (Unicode scalars,
    /// as JSON Schema's `maxLength` counts them).
    static func identifier(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty, text.unicodeScalars.count <= maxIdentifierLength else { return nil }
        return text
    }

    /// The JSON object of this message (what a client sends).
    public var object: JSONObject {
        switch self {
        case .joinRoom(let room, let device):
            JSONObject([("type", .string("join_room")), ("roomId", .string(room)), ("deviceId", .string(device))])
        case .leaveRoom: JSONObject([("type", .string("leave_room"))])
        case .relay(_, let object): object
        case .ping: JSONObject([("type", .string("ping"))])
        case .pingPeer: JSONObject([("type", .string("ping_peer"))])
        case .watchCode(let code, let client1):
            JSONObject([("type", .string("watch_code")), ("joinid", .string(code)), ("client1", .string(client1))])
        }
    }
}
