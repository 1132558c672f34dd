import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The browser client (`web/`, `docs/web.md`), embedded in the binary
/// (`scripts/embed-web.py` writes `WebAssets+Files.swift`) and served by `inviso serve`:
/// the page at `GET /` for a browser (an `Accept` that names `text/html`; other clients
/// still get the health JSON there), its files under `/web/`.
///
/// Every answer carries a strict Content-Security-Policy (scripts, styles, images and
/// connections from this origin only; no inline script, no frames, no forms), `nosniff`,
/// no referrer, and an ETag; `Cache-Control: no-cache` makes a browser revalidate, so a
/// new server version is picked up at once and an unchanged file costs a 304.
struct WebAssets: Sendable {
    struct Asset: Sendable {
        let bytes: ByteBuffer
        let contentType: String
        let etag: String
    }

    /// The files by URL path (`/web/app.js`; the page itself as `/`).
    let assets: [String: Asset]

    /// Self only, no inline code. `'wasm-unsafe-eval'` lets the page compile its own
    /// WebAssembly (ChaCha20-Poly1305, from a module it loads from this origin); it does not
    /// allow `eval` or code from elsewhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The embedded files, decoded once.
    static let shared = WebAssets(files: embedded.compactMap { entry in
        Data(base64Encoded: entry.base64).map { (entry.path, [UInt8]($0)) }
    })

    init(files: [(path: String, bytes: [UInt8])]) {
        var assets: [String: Asset] = [:]
        for (path, bytes) in files {
            let type: String = switch (path as NSString).pathExtension {
            case "html": "text/html; charset=utf-8"
            case "js": "text/javascript; charset=utf-8"
            case "css": "text/css; charset=utf-8"
            default: "application/octet-stream"
            }
            let digest = SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined()
            let asset = Asset(bytes: ByteBuffer(bytes: bytes), contentType: type, etag: "\"\(digest)\"")
            assets[path == "index.html" ? "/" : "/web/" + path] = asset
        }
        self.assets = assets
    }

    /// Whether a request for `/` is a browser asking for the page.
    static func wantsPage(_ request: Request) -> Bool {
        request.headers[.accept]?.contains("text/html") == true
    }

    /// The answer for `path`, or `nil` when there is no such file.
    func response(for path: String, request: Request) -> Response? {
        guard let asset = assets[path] else { return nil }
        var headers: HTTPFields = [
            .contentType: asset.contentType,
            .cacheControl: "no-cache",
            .eTag: asset.etag,
            .contentSecurityPolicy: Self.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .crossOriginResourcePolicy: "same-origin",
        ]
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        if request.headers[.ifNoneMatch]?.split(separator: ",").contains(where: {
            $0.trimmingCharacters(in: .whitespaces) == asset.etag
        }) == true {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: asset.bytes))
    }
}
