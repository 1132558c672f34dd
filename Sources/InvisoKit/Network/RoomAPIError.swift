import NIOCore
import NIOPosix

/// Why a ``RoomAPI`` call failed.
///
/// Errors compare by kind. Server answers are mapped from their HTTP status and their
/// documented `error` code (`docs/server.md`); the server's body is never copied into the
/// error or its description, and neither are join codes, room ids or device IDs.
public struct RoomAPIError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case codeTaken
        case notFoundOrExpired
        case alreadyAccepted
        case notFound
        case notMember
        case rateLimited
        case invalidRequest
        case unavailable
        case unexpectedResponse
        case transportFailed
    }

    package let code: Code
    /// The HTTP status when the server answered; `nil` when no answer arrived or the
    /// request was refused before sending.
    public let status: Int?
    /// Why no answer arrived (``transportFailed``): "connection refused", "timed out", …;
    /// context, like the status.
    public let reason: String?

    package init(_ code: Code, status: Int? = nil, reason: String? = nil) {
        self.code = code
        self.status = status
        self.reason = reason
    }

    /// The proposed join code is in use (409 `code_taken`): propose another.
    public static let codeTaken = RoomAPIError(.codeTaken)
    /// No live code with this join ID: it never existed, expired, or was burnt after too
    /// many guesses (404 `not_found_or_expired`).
    public static let notFoundOrExpired = RoomAPIError(.notFoundOrExpired)
    /// The code was accepted by someone already (409 `already_accepted`).
    public static let alreadyAccepted = RoomAPIError(.alreadyAccepted)
    /// No such room (404 `not_found`).
    public static let notFound = RoomAPIError(.notFound)
    /// This device is not a member of the room (403 `not_member`).
    public static let notMember = RoomAPIError(.notMember)
    /// Too many failed attempts from this address; retry after a minute (429).
    public static let rateLimited = RoomAPIError(.rateLimited)
    /// The server or this client refused the request as malformed (400, 413, or a
    /// client-side check such as a join code that is not six digits).
    public static let invalidRequest = RoomAPIError(.invalidRequest)
    /// The server is temporarily unable to serve (503, or any other 5xx).
    public static let unavailable = RoomAPIError(.unavailable)
    /// The server answered something the API does not document (an unexpected status or a
    /// success body that does not parse).
    public static let unexpectedResponse = RoomAPIError(.unexpectedResponse)
    /// No answer arrived: connection refused, TLS failure, timeout.
    public static let transportFailed = RoomAPIError(.transportFailed)

    /// Compares kinds only (the status is context).
    public static func == (lhs: RoomAPIError, rhs: RoomAPIError) -> Bool { lhs.code == rhs.code }

    /// Hashes the kind only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The kind and, when known, the HTTP status.
    public var description: String {
        let text =
            switch code {
            case .codeTaken: "join code taken"
            case .notFoundOrExpired: "join code not found or expired"
            case .alreadyAccepted: "join code already accepted"
            case .notFound: "room not found"
            case .notMember: "not a member of the room"
            case .rateLimited: "rate limited"
            case .invalidRequest: "invalid request"
            case .unavailable: "server unavailable"
            case .unexpectedResponse: "unexpected server response"
            case .transportFailed: "server unreachable"
            }
        if let status { return "\(text) (HTTP \(status))" }
        return reason.map { "\(text) (\($0))" } ?? text
    }

    /// ``transportFailed`` with what the transport reported, in a few words: the kind of
    /// failure (NIO's errors name the address and the system error, never a body).
    static func transportFailed(_ error: any Error) -> RoomAPIError {
        let reason: String
        switch error {
        case let error as NIOHTTPTransportError: reason = error.description
        case let error as IOError: reason = error.description
        case let error as ChannelError: reason = "\(error)"
        case let error as NIOConnectionError:
            reason = error.connectionErrors.first.map { "\($0.error)" } ?? "could not connect"
        default: reason = "\(type(of: error))"
        }
        return RoomAPIError(.transportFailed, reason: reason)
    }
}
