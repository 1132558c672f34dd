import Foundation
import InvisoServer
import Testing

/// `docs/openapi.yaml` documents exactly the routes the server has.
@Suite("OpenAPI coverage")
struct OpenAPICoverageTests {
    /// (method, path) pairs under `paths:` — a path is a two-space-indented key starting
    /// with `/`, a method a four-space-indented `get:`/`post:`/`delete:`/….
    static func documentedRoutes() throws -> Set<String> {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/openapi.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
        let methods: Set<String> = ["get", "post", "put", "delete", "patch", "head", "options"]
        var routes: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line == "paths:"; path = nil; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if methods.contains(String(key)) { routes.insert("\(key.uppercased()) \(path)") }
            }
        }
        return routes
    }

    @Test("every route is documented, and every documented route exists")
    func coverage() throws {
        let documented = try Self.documentedRoutes()
        let served = Set(RESTRoute.allCases.map { "\($0.method) \($0.path)" })
        #expect(documented.count >= 10)
        for route in served.subtracting(documented).sorted() {
            Issue.record("route missing from docs/openapi.yaml: \(route)")
        }
        for route in documented.subtracting(served).sorted() {
            Issue.record("docs/openapi.yaml documents a route the server lacks: \(route)")
        }
    }

    @Test("every route answers on a live server (none falls through to 404 not_found)")
    func routesAnswer() async throws {
        try await TestServer.with { server, _ async throws in
            for route in RESTRoute.allCases {
                let path = route.path.replacingOccurrences(of: "{roomid}", with: "abc")
                let reply = try await server.request(route.method, path, route.method == "GET" ? nil : "{}")
                #expect(reply.error != "not_found" || route == .getRoom, "\(route.method) \(path) → \(reply.status)")
            }
        }
    }
}
