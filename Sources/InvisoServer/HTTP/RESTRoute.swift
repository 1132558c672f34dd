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

    /// The methods some route answers on `path` (a request path, without the query), in
    /// route order; empty when no route has this path. A literal path wins over one with a
    /// parameter (`/api/rooms/accept` is not `/api/rooms/{roomid}`), as in the router.
    public static func methods(forPath path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        func methods(literal: Bool) -> [String] {
            var methods: [String] = []
            for route in allCases where !methods.contains(route.method) {
                let pattern = route.path.split(separator: "/", omittingEmptySubsequences: false)
                guard pattern.count == segments.count, literal == !route.path.contains("{") else { continue }
                let matches = zip(pattern, segments).allSatisfy { expected, actual in
                    expected.hasPrefix("{") ? !actual.isEmpty : expected == actual
                }
                if matches { methods.append(route.method) }
            }
            return methods
        }
        let exact = methods(literal: true)
        return exact.isEmpty ? methods(literal: false) : exact
    }

    /// The path in Hummingbird's form (`:name` for a parameter).
    var routerPath: String {
        path.replacingOccurrences(of: "{", with: ":").replacingOccurrences(of: "}", with: "")
    }
}
