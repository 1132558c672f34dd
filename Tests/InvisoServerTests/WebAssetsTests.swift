import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import InvisoServer
import NIOCore
import Testing

/// The browser client as the server serves it (`docs/web.md`).
@Suite("Web client assets")
struct WebAssetsTests {
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web")

    @Test("the embedded files are exactly web/'s page, style, app and js/ (scripts/embed-web.py is current)")
    func embeddedCopyIsCurrent() throws {
        var expected: [String: Data] = [:]
        for name in ["index.html", "style.css", "app.js"] {
            expected[name] = try Data(contentsOf: Self.web.appendingPathComponent(name))
        }
        let js = Self.web.appendingPathComponent("js")
        let walker = try #require(FileManager.default.enumerator(at: js, includingPropertiesForKeys: nil))
        for case let url as URL in walker where url.pathExtension == "js" {
            let relative = String(url.standardizedFileURL.path.dropFirst(Self.web.standardizedFileURL.path.count + 1))
            expected[relative] = try Data(contentsOf: url)
        }
        var embedded: [String: Data] = [:]
        for entry in WebAssets.embedded { embedded[entry.path] = Data(base64Encoded: entry.base64) }
        #expect(Set(embedded.keys) == Set(expected.keys), "run scripts/embed-web.py")
        for (path, data) in expected {
            #expect(embedded[path] == data, "\(path) changed: run scripts/embed-web.py")
        }
    }

    @Test("GET / is the page for a browser and health JSON for others; files under /web/ with CSP, nosniff, ETag and 304")
    func served() async throws {
        try await TestServer.with { server, _ in
            try await TestClient.withClient(host: "127.0.0.1", port: server.port) { client in
                let page = try await client.get("/", headers: [.accept: "text/html,application/xhtml+xml"])
                #expect(page.status == .ok)
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                #expect(page.headers[.contentSecurityPolicy] == WebAssets.contentSecurityPolicy)
                #expect(page.headers[.xContentTypeOptions] == "nosniff")
                #expect(page.body.map { String(buffer: $0) }?.contains("<title>Inviso</title>") == true)
                let health = try await client.get("/", headers: [.accept: "application/json"])
                #expect(health.headers[.contentType] == "application/json; charset=utf-8")
                #expect(health.body.map { String(buffer: $0) }?.contains("\"status\":\"ok\"") == true)

                let app = try await client.get("/web/app.js", headers: [:])
                #expect(app.status == .ok)
                #expect(app.headers[.contentType] == "text/javascript; charset=utf-8")
                let etag = try #require(app.headers[.eTag])
                let again = try await client.get("/web/app.js", headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified)
                #expect(again.body.map(\.readableBytes) ?? 0 == 0)
                for missing in ["/web/nothing.js", "/web/../Package.swift", "/web/test/index.html", "/web/js/"] {
                    let reply = try await client.get(missing, headers: [:])
                    #expect(reply.status == .notFound, "\(missing)")
                }
            }
        }
    }
}
