import Foundation
import Hummingbird
import Logging
import NIOCore

/// A loopback HTTP server for the browser tests: the repository's `web/` folder at `/`,
/// `../shared/vectors` at `/vectors/` (the same vector files the Swift tests read), and the
/// CLI's QR vectors at `/cli-vectors/qr-vectors.json`.
/// GET only; a path with `..` or a file outside the two folders is 404.
struct StaticServer {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let web = repository.appendingPathComponent("web")
    static let vectors = repository.deletingLastPathComponent().appendingPathComponent("shared/vectors")

    /// Runs `body` with the server's base URL (`http://127.0.0.1:PORT`).
    static func with<T: Sendable>(_ body: @escaping @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.get("**") { request, _ -> Response in
            Self.file(request.uri.path)
        }
        let (portStream, portContinuation) = AsyncStream<Int>.makeStream()
        // Quiet: the test ends the server by cancelling it, which Hummingbird logs as errors.
        var logger = Logger(label: "inviso.web-tests")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await app.runService()
                return nil
            }
            var ports = portStream.makeAsyncIterator()
            guard let port = await ports.next() else { throw BrowserTestError("the static server did not start") }
            let result = try await body("http://127.0.0.1:\(port)")
            group.cancelAll()
            return result
        }
    }

    static func file(_ path: String) -> Response {
        let parts = path.split(separator: "/").map(String.init)
        guard !parts.isEmpty, !parts.contains(".."), !parts.contains(where: { $0.hasPrefix(".") }) else {
            return Response(status: .notFound)
        }
        let url: URL
        if parts[0] == "vectors" {
            url = parts.dropFirst().reduce(vectors) { $0.appendingPathComponent($1) }
        } else if parts == ["cli-vectors", "qr-vectors.json"] {
            // The QR vectors the CLI's encoder is tested against (python-qrcode's symbols).
            url = repository.appendingPathComponent("Tests/invisoTests/Resources/qr-vectors.json")
        } else {
            url = parts.reduce(web) { $0.appendingPathComponent($1) }
        }
        guard let data = FileManager.default.contents(atPath: url.path) else { return Response(status: .notFound) }
        let type: String = switch url.pathExtension {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "json", "txt": "application/json"
        default: "application/octet-stream"
        }
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

struct BrowserTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
