/// One HTTP request of the REST API: a method, a path and a JSON body.
public struct HTTPTransportRequest: Sendable, Hashable {
    /// The HTTP method (`POST` or `DELETE` for the Inviso API).
    public var method: String
    /// The path, starting with `/`.
    public var path: String
    /// The JSON body.
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String, path: String, body: [UInt8]) {
        self.method = method
        self.path = path
        self.body = body
    }
}

/// The answer to an ``HTTPTransportRequest``: the status and the body bytes.
public struct HTTPTransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The body (empty for `204`).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// Sends one JSON request to the server and returns its status and body.
///
/// ``RoomAPI`` talks only to this protocol, so an app can supply its own HTTP stack and
/// tests a fake; ``NIOHTTPTransport`` is the implementation on SwiftNIO.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status.
    ///
    /// - Throws: Any error when no complete answer arrived (connection refused, timeout,
    ///   malformed HTTP); ``RoomAPI`` reports it as ``RoomAPIError/transportFailed``.
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}
