/// A refused REST request: the HTTP status and the `{"error":"<code>"}` body.
///
/// Codes are stable identifiers clients match on (`missing_client1`, `code_taken`, …);
/// `docs/openapi.yaml` lists which route answers which. They never echo the request's
/// device IDs or tokens.
public struct RESTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code.
    public let status: Int
    /// The machine-readable error code sent as `error`.
    public let code: String

    /// Creates an error.
    public init(status: Int, code: String) {
        self.status = status
        self.code = code
    }

    /// The body is not a JSON object (400 `invalid_json`).
    public static let invalidJSON = RESTError(status: 400, code: "invalid_json")
    /// A required field is absent, empty or not a string (400 `missing_<field>`).
    public static func missing(_ field: String) -> RESTError { RESTError(status: 400, code: "missing_\(field)") }
    /// A field is present but unusable (400 `invalid_<field>`).
    public static func invalid(_ field: String) -> RESTError { RESTError(status: 400, code: "invalid_\(field)") }
    /// The body is larger than the server accepts (413 `body_too_large`).
    public static let bodyTooLarge = RESTError(status: 413, code: "body_too_large")
    /// The join code is in use (409 `code_taken`).
    public static let codeTaken = RESTError(status: 409, code: "code_taken")
    /// No live pending code has this join ID (404 `not_found_or_expired`).
    public static let notFoundOrExpired = RESTError(status: 404, code: "not_found_or_expired")
    /// The code was accepted already (409 `already_accepted`).
    public static let alreadyAccepted = RESTError(status: 409, code: "already_accepted")
    /// No such room, or not visible to this caller (404 `not_found`).
    public static let notFound = RESTError(status: 404, code: "not_found")
    /// The device is not a member of the room (403 `not_member`).
    public static let notMember = RESTError(status: 403, code: "not_member")
    /// Too many failed attempts from this address; retry later (429 `too_many_attempts`).
    public static let tooManyAttempts = RESTError(status: 429, code: "too_many_attempts")
    /// Too many requests of this kind from this address; retry later (429 `too_many_requests`).
    public static let tooManyRequests = RESTError(status: 429, code: "too_many_requests")
    /// This address holds as many live join codes as it may (429 `too_many_codes`).
    public static let tooManyCodes = RESTError(status: 429, code: "too_many_codes")
    /// A purge names more device IDs than one request may (400 `too_many_device_ids`).
    public static let tooManyDeviceIDs = RESTError(status: 400, code: "too_many_device_ids")
    /// A route of the old API (410 `use_new_endpoints`, the Node server's code).
    public static let gone = RESTError(status: 410, code: "use_new_endpoints")
    /// The server has no TURN secret configured (404 `turn_not_configured`).
    public static let turnNotConfigured = RESTError(status: 404, code: "turn_not_configured")
    /// The method is not allowed on this path (405 `method_not_allowed`).
    public static let methodNotAllowed = RESTError(status: 405, code: "method_not_allowed")
    /// The database is unreachable or failing (503 `unavailable`).
    public static let unavailable = RESTError(status: 503, code: "unavailable")

    /// `{"error":"<code>"}`.
    public var body: JSONObject { JSONObject([("error", .string(code))]) }

    /// The status and code.
    public var description: String { "\(status) \(code)" }
}
