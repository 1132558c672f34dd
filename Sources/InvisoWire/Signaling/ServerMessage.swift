/// A message from the signaling server to a client, with the field names and order the
/// Node server (apptrackit/chat-server) sends and the iOS app reads.
public enum ServerMessage: Sendable, Equatable {
    /// `connected {clientId, server}`: first frame on every socket; Inviso servers add
    /// their relay `limits` (``RelayLimits``).
    case connected(clientID: String, server: String, limits: RelayLimits? = nil)
    /// `room_joined {roomId, userCount, isInitiator, ready}`.
    case roomJoined(roomID: String, userCount: Int, isInitiator: Bool, ready: Bool)
    /// `room_ready {roomId, message, userCount: 2, isInitiator}`: to both members.
    case roomReady(roomID: String, isInitiator: Bool)
    /// `room_full {error, roomId}`.
    case roomFull(roomID: String)
    /// `peer_left {message}`: the other member sent `leave_room`.
    case peerLeft
    /// `peer_disconnected {message}`: the other member's socket closed.
    case peerDisconnected
    /// `left_room {roomId}` (`null` when the client was in no room).
    case leftRoom(roomID: String?)
    /// `error {error}`.
    case error(String)
    /// `pong`.
    case pong
    /// `ping_sent`.
    case pingSent
    /// `room_accepted {joinid, roomid}`: pushed to a creator watching its code.
    case roomAccepted(joinID: String, roomID: String)
    /// A client's message forwarded to the other member, `from` and `roomId` added.
    case relayed(JSONObject)

    /// The server name sent in `connected`.
    public static let serverName = "Inviso Signaling Server"
    /// The texts the Node server sends, kept for clients that show them.
    public static let roomReadyText = "Both users connected. Ready for WebRTC handshake."
    public static let roomFullText = "Room is full (max 2 users)"
    public static let peerLeftText = "Other user left the room"
    public static let peerDisconnectedText = "Other user disconnected"
    /// The refusals of `join_room`: the room does not exist (deleted, purged or never
    /// created), or the device is not one of its two members. A client's room is gone
    /// for good when its (re)join gets either.
    public static let roomNotFoundText = "Room not found"
    public static let notMemberText = "Not a member of this room"

    /// The forwarded form of a relayed client message: the object with `from` (the
    /// sender's connection id) and `roomId` set; all other fields untouched.
    public static func relay(_ object: JSONObject, from clientID: String, roomID: String) -> ServerMessage {
        var forwarded = object
        forwarded["from"] = .string(clientID)
        forwarded["roomId"] = .string(roomID)
        return .relayed(forwarded)
    }

    /// The JSON object of this message.
    public var object: JSONObject {
        switch self {
        case .connected(let client, let server, let limits):
            JSONObject(
                [("type", .string("connected")), ("clientId", .string(client)), ("server", .string(server))]
                    + (limits.map { [("limits", $0.json)] } ?? []))
        case .roomJoined(let room, let count, let initiator, let ready):
            JSONObject([
                ("type", .string("room_joined")), ("roomId", .string(room)), ("userCount", .integer(count)),
                ("isInitiator", .bool(initiator)), ("ready", .bool(ready)),
            ])
        case .roomReady(let room, let initiator):
            JSONObject([
                ("type", .string("room_ready")), ("roomId", .string(room)), ("message", .string(Self.roomReadyText)),
                ("userCount", .integer(2)), ("isInitiator", .bool(initiator)),
            ])
        case .roomFull(let room):
            JSONObject([("type", .string("room_full")), ("error", .string(Self.roomFullText)), ("roomId", .string(room))])
        case .peerLeft:
            JSONObject([("type", .string("peer_left")), ("message", .string(Self.peerLeftText))])
        case .peerDisconnected:
            JSONObject([("type", .string("peer_disconnected")), ("message", .string(Self.peerDisconnectedText))])
        case .leftRoom(let room):
            JSONObject([("type", .string("left_room")), ("roomId", room.map { .string($0) } ?? .null)])
        case .error(let text):
            JSONObject([("type", .string("error")), ("error", .string(text))])
        case .pong: JSONObject([("type", .string("pong"))])
        case .pingSent: JSONObject([("type", .string("ping_sent"))])
        case .roomAccepted(let code, let room):
            JSONObject([("type", .string("room_accepted")), ("joinid", .string(code)), ("roomid", .string(room))])
        case .relayed(let object): object
        }
    }

    /// The text frame.
    public func serialized() -> [UInt8] { object.serialized() }

    /// Interprets a frame from the server (for clients). Unknown types and relayed
    /// messages come back as ``relayed(_:)``.
    ///
    /// - Throws: ``SignalingError/invalidJSON`` when the frame is not a JSON object.
    public static func parse(_ frame: some Collection<UInt8>) throws(SignalingError) -> ServerMessage {
        guard case .object(let object) = try? JSONValue.parse(frame) else { throw SignalingError.invalidJSON }
        return parse(object)
    }

    /// Interprets a parsed JSON object; unknown types and relayed messages come back as
    /// ``relayed(_:)``.
    public static func parse(_ object: JSONObject) -> ServerMessage {
        let string = { (key: String) in object[key]?.stringValue }
        let flag = { (key: String) in object[key]?.boolValue }
        switch string("type") {
        case "connected":
            if let client = string("clientId") {
                return .connected(clientID: client, server: string("server") ?? "", limits: RelayLimits(object["limits"]))
            }
        case "room_joined":
            if let room = string("roomId"), let count = object["userCount"]?.integerValue,
                let initiator = flag("isInitiator")
            {
                return .roomJoined(roomID: room, userCount: count, isInitiator: initiator, ready: flag("ready") ?? false)
            }
        case "room_ready":
            if let room = string("roomId"), let initiator = flag("isInitiator") {
                return .roomReady(roomID: room, isInitiator: initiator)
            }
        case "room_full":
            if let room = string("roomId") { return .roomFull(roomID: room) }
        case "peer_left": return .peerLeft
        case "peer_disconnected": return .peerDisconnected
        case "left_room": return .leftRoom(roomID: string("roomId"))
        case "error": return .error(string("error") ?? "")
        case "pong": return .pong
        case "ping_sent": return .pingSent
        case "room_accepted":
            if let code = string("joinid"), let room = string("roomid") { return .roomAccepted(joinID: code, roomID: room) }
        default: break
        }
        return .relayed(object)
    }
}
