// The REST API's request and response bodies, with the field names the Inviso iOS app and
// the Node server use. Requests validate with the exact error codes the server answers
// (`init(json:)`); every type is also `Codable` for clients that prefer `JSONEncoder`.

/// `POST /api/rooms`: publish a join code.
public struct CreateRoomRequest: Codable, Sendable, Equatable {
    /// The 6-digit code; omitted → the server allocates an unused one.
    public var joinid: String?
    /// The creator's per-session device ID.
    public var client1: String
    /// How long the code stays valid, 1…86,400 seconds.
    public var expiresInSeconds: Int
    /// The creator's push token.
    public var client1_token: String?
    /// The creator's platform (`ios`, `android`, `cli`, …).
    public var platform: String?

    /// The longest code lifetime (24 hours).
    public static let maxExpiresInSeconds = 86_400

    /// Creates a request.
    public init(joinid: String?, client1: String, expiresInSeconds: Int, client1_token: String? = nil, platform: String? = nil) {
        self.joinid = joinid
        self.client1 = client1
        self.expiresInSeconds = expiresInSeconds
        self.client1_token = client1_token
        self.platform = platform
    }

    /// `text` as an integer when it is `1`…`999999` written canonically: digits only, no
    /// leading zero, no sign (`"+5"` and `"05"` are refused).
    static func canonicalDecimal(_ text: String) -> Int? {
        let digits = Array(text.utf8)
        guard (1...6).contains(digits.count), digits[0] != UInt8(ascii: "0"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(text)
    }

    /// Validates a parsed body. `expiresInSeconds` may be a JSON integer or a decimal
    /// string (the Node server accepted both).
    public init(json: JSONObject) throws(RESTError) {
        if let code = json["joinid"], code != .null {
            guard let text = code.stringValue, JoinCode.isValid(text) else { throw .invalid("joinid") }
            joinid = text
        } else {
            joinid = nil
        }
        client1 = try RESTField.identifier(json, "client1")
        guard let raw = json["expiresInSeconds"], raw != .null else { throw .missing("expiresInSeconds") }
        // A string must be the canonical decimal form (no sign, no leading zero), as the spec says.
        let seconds = raw.integerValue ?? raw.stringValue.flatMap(Self.canonicalDecimal)
        guard let seconds, (1...Self.maxExpiresInSeconds).contains(seconds) else { throw .invalid("expiresInSeconds") }
        expiresInSeconds = seconds
        client1_token = try RESTField.optional(json, "client1_token", maxLength: RESTField.maxTokenLength)
        platform = try RESTField.optional(json, "platform", maxLength: RESTField.maxPlatformLength)
    }
}

/// `201` answer to ``CreateRoomRequest``.
public struct CreateRoomResponse: Codable, Sendable, Equatable {
    /// Always `true`.
    public var ok: Bool
    /// The expiry, ISO 8601 UTC with milliseconds (`2026-11-21T10:00:00.000Z`).
    public var exp: String
    /// The join code (the one requested, or the one the server allocated).
    public var joinid: String

    /// Creates a response.
    public init(exp: String, joinid: String) {
        ok = true
        self.exp = exp
        self.joinid = joinid
    }

    /// The body.
    public var json: JSONObject { JSONObject([("ok", .bool(ok)), ("exp", .string(exp)), ("joinid", .string(joinid))]) }
}

/// `POST /api/rooms/accept`: the second device takes the code.
public struct AcceptRoomRequest: Codable, Sendable, Equatable {
    /// The join code.
    public var joinid: String
    /// The joiner's per-session device ID.
    public var client2: String
    /// The joiner's push token.
    public var client2_token: String?
    /// The joiner's platform.
    public var platform: String?

    /// Creates a request.
    public init(joinid: String, client2: String, client2_token: String? = nil, platform: String? = nil) {
        self.joinid = joinid
        self.client2 = client2
        self.client2_token = client2_token
        self.platform = platform
    }

    /// Validates a parsed body.
    public init(json: JSONObject) throws(RESTError) {
        joinid = try RESTField.identifier(json, "joinid")
        client2 = try RESTField.identifier(json, "client2")
        client2_token = try RESTField.optional(json, "client2_token", maxLength: RESTField.maxTokenLength)
        platform = try RESTField.optional(json, "platform", maxLength: RESTField.maxPlatformLength)
    }
}

/// `{roomid}`: the answer to accept, check and the room lookup.
public struct RoomIDResponse: Codable, Sendable, Equatable {
    /// The room id (48 lowercase hex characters).
    public var roomid: String

    /// Creates a response.
    public init(roomid: String) { self.roomid = roomid }

    /// The body.
    public var json: JSONObject { JSONObject([("roomid", .string(roomid))]) }
}

/// `POST /api/rooms/check`: the creator asks whether its code was accepted.
public struct CheckRoomRequest: Codable, Sendable, Equatable {
    /// The join code.
    public var joinid: String
    /// The creator's device ID (only it learns the room id).
    public var client1: String

    /// Creates a request.
    public init(joinid: String, client1: String) {
        self.joinid = joinid
        self.client1 = client1
    }

    /// Validates a parsed body.
    public init(json: JSONObject) throws(RESTError) {
        joinid = try RESTField.identifier(json, "joinid")
        client1 = try RESTField.identifier(json, "client1")
    }
}

/// `DELETE /api/rooms`: a member ends the room.
public struct DeleteRoomRequest: Codable, Sendable, Equatable {
    /// The room id.
    public var roomid: String
    /// The caller's device ID; must be one of the room's two.
    public var deviceId: String

    /// Creates a request.
    public init(roomid: String, deviceId: String) {
        self.roomid = roomid
        self.deviceId = deviceId
    }

    /// Validates a parsed body.
    public init(json: JSONObject) throws(RESTError) {
        roomid = try RESTField.identifier(json, "roomid")
        deviceId = try RESTField.identifier(json, "deviceId")
    }
}

/// `POST /api/user/purge`: delete everything naming these device IDs.
public struct PurgeRequest: Codable, Sendable, Equatable {
    /// The device IDs (the legacy body `{deviceId}` becomes a one-element list).
    public var deviceIds: [String]

    /// The most device IDs one request may name.
    public static let maxDeviceIDs = 1_000

    /// Creates a request.
    public init(deviceIds: [String]) { self.deviceIds = deviceIds }

    /// Validates a parsed body: `{deviceIds:[…]}` (1…``maxDeviceIDs`` non-empty strings)
    /// or the legacy `{deviceId}` — one or the other, never both (`400 invalid_deviceIds`).
    public init(json: JSONObject) throws(RESTError) {
        if json["deviceIds"] != nil && json["deviceId"] != nil { throw .invalid("deviceIds") }
        if let list = json["deviceIds"], list != .null {
            guard let items = list.arrayValue else { throw .invalid("deviceIds") }
            guard !items.isEmpty else { throw .missing("deviceIds") }
            guard items.count <= Self.maxDeviceIDs else { throw .tooManyDeviceIDs }
            var ids: [String] = []
            ids.reserveCapacity(items.count)
            for item in items {
                guard let id = RESTField.identifier(item) else { throw .invalid("deviceIds") }
                ids.append(id)
            }
            deviceIds = ids
        } else if json["deviceId"] != nil {
            deviceIds = [try RESTField.identifier(json, "deviceId")]
        } else {
            throw .missing("deviceIds")
        }
    }
}

/// `200` answer to ``PurgeRequest``.
public struct PurgeResponse: Codable, Sendable, Equatable {
    /// Always `true`.
    public var success: Bool
    /// How many distinct device IDs the request named.
    public var deviceIdCount: Int
    /// Rooms deleted.
    public var roomsDeleted: Int
    /// Pending codes deleted.
    public var pendingsDeleted: Int

    /// Creates a response.
    public init(deviceIdCount: Int, roomsDeleted: Int, pendingsDeleted: Int) {
        success = true
        self.deviceIdCount = deviceIdCount
        self.roomsDeleted = roomsDeleted
        self.pendingsDeleted = pendingsDeleted
    }

    /// The body.
    public var json: JSONObject {
        JSONObject([
            ("success", .bool(success)), ("deviceIdCount", .integer(deviceIdCount)),
            ("roomsDeleted", .integer(roomsDeleted)), ("pendingsDeleted", .integer(pendingsDeleted)),
        ])
    }
}

/// A body holding one device ID: `POST /api/badge/reset` and `POST /api/turn`.
public struct DeviceRequest: Codable, Sendable, Equatable {
    /// The caller's device ID.
    public var deviceId: String

    /// Creates a request.
    public init(deviceId: String) { self.deviceId = deviceId }

    /// Validates a parsed body.
    public init(json: JSONObject) throws(RESTError) {
        deviceId = try RESTField.identifier(json, "deviceId")
    }
}

/// `POST /api/turn` answer: short-lived TURN credentials (coturn's `use-auth-secret`).
///
/// The ``credential`` is a password until it expires: `description`, `debugDescription`
/// and the mirror (`dump`) show it as `<redacted>`.
public struct TURNCredentialsResponse: Codable, Sendable, Equatable {
    /// The TURN/STUN URLs to use them with.
    public var urls: [String]
    /// `<expiry unix seconds>:<user id>`.
    public var username: String
    /// base64(HMAC-SHA1(secret, username)).
    public var credential: String
    /// Seconds until they expire.
    public var ttl: Int

    /// Creates a response.
    public init(urls: [String], username: String, credential: String, ttl: Int) {
        self.urls = urls
        self.username = username
        self.credential = credential
        self.ttl = ttl
    }

    /// The body.
    public var json: JSONObject {
        JSONObject([
            ("urls", .array(urls.map { .string($0) })), ("username", .string(username)),
            ("credential", .string(credential)), ("ttl", .integer(ttl)),
        ])
    }
}

// MARK: - TURNCredentialsResponse: CustomStringConvertible

extension TURNCredentialsResponse: CustomStringConvertible {
    /// The URLs, username and lifetime; the credential is shown as `<redacted>`.
    public var description: String {
        "TURNCredentialsResponse(urls: \(urls), username: \(username), credential: <redacted>, ttl: \(ttl))"
    }
}

// MARK: - TURNCredentialsResponse: CustomDebugStringConvertible

extension TURNCredentialsResponse: CustomDebugStringConvertible {
    /// The same as ``description``.
    public var debugDescription: String { description }
}

// MARK: - TURNCredentialsResponse: CustomReflectable

extension TURNCredentialsResponse: CustomReflectable {
    /// A mirror (for `dump` and debuggers) without the credential.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["urls": urls, "username": username, "credential": "<redacted>", "ttl": ttl],
            displayStyle: .struct
        )
    }
}

/// The 6-digit join codes.
public enum JoinCode {
    /// Whether `text` is exactly six ASCII digits.
    public static func isValid(_ text: String) -> Bool {
        text.utf8.count == 6 && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }
}

/// Field checks shared by the request types.
enum RESTField {
    /// Longest device ID, join code or room id accepted.
    static let maxIdentifierLength = ClientMessage.maxIdentifierLength
    /// Longest push token accepted (APNs tokens are 64 hex characters, FCM ≈ 163).
    static let maxTokenLength = 512
    /// Longest platform name accepted.
    static let maxPlatformLength = 32

    /// A required identifier: missing, `null`, empty or not a string → `missing_<field>`;
    /// too long → `invalid_<field>`.
    static func identifier(_ json: JSONObject, _ field: String) throws(RESTError) -> String {
        guard let text = json[field]?.stringValue, !text.isEmpty else { throw .missing(field) }
        guard text.unicodeScalars.count <= maxIdentifierLength else { throw .invalid(field) }
        return text
    }

    /// A non-empty string of at most ``maxIdentifierLength`` characters (Unicode scalars,
    /// as the OpenAPI document's `maxLength` counts them).
    static func identifier(_ value: JSONValue) -> String? {
        guard let text = value.stringValue, !text.isEmpty, text.unicodeScalars.count <= maxIdentifierLength else { return nil }
        return text
    }

    /// An optional string: absent, `null` or empty → `nil`; not a string or too long →
    /// `invalid_<field>`.
    static func optional(_ json: JSONObject, _ field: String, maxLength: Int) throws(RESTError) -> String? {
        guard let value = json[field], value != .null else { return nil }
        guard let text = value.stringValue, text.unicodeScalars.count <= maxLength else { throw .invalid(field) }
        return text.isEmpty ? nil : text
    }
}

// MARK: - Decoding through the validating parsers

// Every request type decodes through its `init(json:)` (``ValidatedJSONDecodable``), so a
// `JSONDecoder` applies exactly the server's validation: there is no unchecked `Codable`
// path into these types.
extension CreateRoomRequest: ValidatedJSONDecodable {}
extension AcceptRoomRequest: ValidatedJSONDecodable {}
extension CheckRoomRequest: ValidatedJSONDecodable {}
extension DeleteRoomRequest: ValidatedJSONDecodable {}
extension PurgeRequest: ValidatedJSONDecodable {}
extension DeviceRequest: ValidatedJSONDecodable {}
