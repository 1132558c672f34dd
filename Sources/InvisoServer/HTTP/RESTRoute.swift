import Foundation

/// Every HTTP route the server answers. `docs/openapi.yaml` documents each one; a test
/// fails when one is missing there.
public enum RESTRoute: String, CaseIterable, Sendable {
    case root, health, metrics
    case createRoom, acceptRoom, checkRoom, getRoom, deleteRoom
    case purge, badgeReset, turn
    case legacyGetRoom, legacyAcceptRoom, legacyDeleteRoom

    /// The HTTP method.
    public var method: String {
        switch self {
        case .root, .health, .metrics, .getRoom, .legacyGetRoom: "GET"
        case .deleteRoom, .legacyDeleteRoom: "DELETE"
        default: "POST"
        }
    }

    /// The path in OpenAPI form (`{name}` for a parameter).
    public var path: String {
        switch self {
        case .root: "/"
        case .health: "/health"
        case .metrics: "/metrics"
        case .createRoom, .getRoom, .deleteRoom: "/api/rooms"
        case .acceptRoom: "/api/rooms/accept"
        case .checkRoom: "/api/rooms/check"
        case .purge: "/api/user/purge"
        case .badgeReset: "/api/badge/reset"
        case .turn: "/api/turn"
        case .legacyGetRoom, .legacyDeleteRoom: "/api/rooms/{roomid}"
        case .legacyAcceptRoom: "/api/rooms/{roomid}/accept"
        }
    }

    /// The path in Hummingbird's form (`:name` for a parameter).
    var routerPath: String {
        path.replacingOccurrences(of: "{", with: ":").replacingOccurrences(of: "}", with: "")
    }
}
