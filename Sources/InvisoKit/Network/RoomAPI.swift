public import InvisoWire
public import Logging

/// The client side of the server's rooms REST API (`docs/server.md`): publish a join
/// code, accept one, poll for acceptance, delete a room, purge device IDs.
///
/// Every call is one request through the injected ``HTTPTransport``; answers are mapped
/// to results or to a ``RoomAPIError``. Logs carry the route and the outcome only, never
/// codes, room ids or device IDs.
public struct RoomAPI: Sendable {
    /// A published join code.
    public struct CreatedRoom: Sendable, Hashable {
        /// The join code (as proposed).
        public var joinID: String
        /// When it expires, ISO 8601 UTC as the server sent it.
        public var expiresAt: String
    }

    /// What ``check(joinID:deviceID:)`` learned.
    public enum CheckResult: Sendable, Hashable {
        /// The code was accepted; the room exists.
        case accepted(roomID: String)
        /// Nobody accepted the code yet (`204`).
        case pending
    }

    private let transport: any HTTPTransport
    private let logger: Logger

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - transport: Sends the requests (``NIOHTTPTransport`` or an app's own).
    ///   - logger: Receives one debug line per call (route and outcome).
    public init(transport: any HTTPTransport, logger: Logger = Logger(label: "inviso.kit.rooms")) {
        self.transport = transport
        self.logger = logger
    }

    /// Publishes a join code for this device (`POST /api/rooms`).
    ///
    /// - Parameters:
    ///   - joinID: The six-digit code the client proposes, or `nil` (the default) to have
    ///     the server pick an unused one — which never tells anyone whether some other
    ///     code is live, so clients should let the server choose.
    ///   - deviceID: This device's per-session ID (`client1`).
    ///   - expiresInSeconds: The code's lifetime, 1…86,400.
    /// - Throws: ``RoomAPIError/codeTaken`` (propose another code),
    ///   ``RoomAPIError/invalidRequest`` (bad code or lifetime), or a transport or server
    ///   error.
    public func createRoom(joinID: String? = nil, deviceID: String, expiresInSeconds: Int) async throws(RoomAPIError)
        -> CreatedRoom
    {
        guard joinID.map(JoinCode.isValid) ?? true, (1...CreateRoomRequest.maxExpiresInSeconds).contains(expiresInSeconds) else {
            throw .invalidRequest
        }
        var fields: [(String, JSONValue)] = joinID.map { [("joinid", .string($0))] } ?? []
        fields += [("client1", .string(deviceID)), ("expiresInSeconds", .integer(expiresInSeconds))]
        let body = JSONObject(fields)
        let (status, json) = try await call("POST", "/api/rooms", body, route: "create")
        guard status == 201, let code = json?["joinid"]?.stringValue, let exp = json?["exp"]?.stringValue else {
            throw RoomAPIError(.unexpectedResponse, status: status)
        }
        return CreatedRoom(joinID: code, expiresAt: exp)
    }

    /// Accepts `joinID` as the second member (`POST /api/rooms/accept`).
    ///
    /// - Returns: The room id.
    /// - Throws: ``RoomAPIError/notFoundOrExpired``, ``RoomAPIError/alreadyAccepted``,
    ///   ``RoomAPIError/rateLimited``, or a transport or server error.
    public func accept(joinID: String, deviceID: String) async throws(RoomAPIError) -> String {
        guard JoinCode.isValid(joinID) else { throw .invalidRequest }
        let body = JSONObject([("joinid", .string(joinID)), ("client2", .string(deviceID))])
        let (status, json) = try await call("POST", "/api/rooms/accept", body, route: "accept")
        guard status == 200, let room = json?["roomid"]?.stringValue else {
            throw RoomAPIError(.unexpectedResponse, status: status)
        }
        return room
    }

    /// Asks whether this device's code was accepted (`POST /api/rooms/check`). Prefer
    /// ``SignalingClient/watch(joinID:deviceID:)``, which is pushed the answer.
    ///
    /// - Throws: ``RoomAPIError/notFoundOrExpired``, ``RoomAPIError/rateLimited``, or a
    ///   transport or server error.
    public func check(joinID: String, deviceID: String) async throws(RoomAPIError) -> CheckResult {
        guard JoinCode.isValid(joinID) else { throw .invalidRequest }
        let body = JSONObject([("joinid", .string(joinID)), ("client1", .string(deviceID))])
        let (status, json) = try await call("POST", "/api/rooms/check", body, route: "check")
        if status == 204 { return .pending }
        guard status == 200, let room = json?["roomid"]?.stringValue else {
            throw RoomAPIError(.unexpectedResponse, status: status)
        }
        return .accepted(roomID: room)
    }

    /// Deletes the room (`DELETE /api/rooms`); succeeds also when it is already gone.
    ///
    /// - Throws: ``RoomAPIError/notMember``, or a transport or server error.
    public func deleteRoom(roomID: String, deviceID: String) async throws(RoomAPIError) {
        let body = JSONObject([("roomid", .string(roomID)), ("deviceId", .string(deviceID))])
        _ = try await call("DELETE", "/api/rooms", body, route: "delete")
    }

    /// Deletes every room and pending code of these device IDs (`POST /api/user/purge`).
    ///
    /// - Returns: How many rooms and pending codes the server deleted.
    /// - Throws: ``RoomAPIError/invalidRequest`` (empty list or more than
    ///   ``PurgeRequest/maxDeviceIDs``), or a transport or server error.
    public func purge(deviceIDs: [String]) async throws(RoomAPIError) -> PurgeResponse {
        guard !deviceIDs.isEmpty, deviceIDs.count <= PurgeRequest.maxDeviceIDs else { throw .invalidRequest }
        let body = JSONObject([("deviceIds", .array(deviceIDs.map { .string($0) }))])
        let (status, json) = try await call("POST", "/api/user/purge", body, route: "purge")
        guard let json, let rooms = json["roomsDeleted"]?.integerValue,
            let pendings = json["pendingsDeleted"]?.integerValue
        else { throw RoomAPIError(.unexpectedResponse, status: status) }
        return PurgeResponse(
            deviceIdCount: json["deviceIdCount"]?.integerValue ?? deviceIDs.count, roomsDeleted: rooms,
            pendingsDeleted: pendings)
    }
}

// MARK: - Requests and error mapping

extension RoomAPI {
    /// Sends one request; returns a 2xx status and its parsed object (`nil` for an empty
    /// body), or throws the mapped error.
    private func call(_ method: String, _ path: String, _ body: JSONObject, route: String) async throws(RoomAPIError)
        -> (Int, JSONObject?)
    {
        let response: HTTPTransportResponse
        do {
            response = try await transport.send(HTTPTransportRequest(method: method, path: path, body: body.serialized()))
        } catch {
            let failure = RoomAPIError.transportFailed(error)
            logger.debug("room API request failed", metadata: ["route": "\(route)", "reason": "\(failure.reason ?? "")"])
            throw failure
        }
        let object: JSONObject?
        if case .object(let parsed)? = try? JSONValue.parse(response.body) { object = parsed } else { object = nil }
        logger.debug("room API answered", metadata: ["route": "\(route)", "status": "\(response.status)"])
        guard (200..<300).contains(response.status) else {
            throw Self.error(status: response.status, code: object?["error"]?.stringValue)
        }
        return (response.status, object)
    }

    /// Maps a refusal to its kind: the documented code when there is one, else the status.
    static func error(status: Int, code: String?) -> RoomAPIError {
        let kind: RoomAPIError.Code =
            switch (status, code) {
            case (409, RESTError.codeTaken.code?): .codeTaken
            case (409, RESTError.alreadyAccepted.code?): .alreadyAccepted
            case (404, RESTError.notFoundOrExpired.code?): .notFoundOrExpired
            case (404, RESTError.notFound.code?): .notFound
            case (403, _): .notMember
            case (429, _): .rateLimited
            case (400, _), (413, _): .invalidRequest
            case (500..<600, _): .unavailable
            default: .unexpectedResponse
            }
        return RoomAPIError(kind, status: status)
    }
}
