import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import InvisoTesting

/// `inviso serve` as a user runs it: options and environment variables, the listening
/// line, JSON logs without device IDs, graceful exit on SIGTERM.
@Suite("inviso serve")
struct ServeCLITests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func request(_ method: String, _ url: String, _ body: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test("serves on a free port from the environment, logs JSON without device IDs, exits 0 on SIGTERM")
    func serveAndStop() async throws {
        let binary = try NoiseInteropTests.invisoBinary()
        let data = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try ChildProcess(
            binary, ["serve", "--log-format", "json", "--log-level", "debug"],
            environment: ["INVISO_PORT": "0", "INVISO_DATA": data.path, "INVISO_HOST": "127.0.0.1"])
        let listening = try #require(await server.waitForEvent(timeout: 60) { $0["event"] as? String == "listening" }, "\(server.transcript)")
        let base = try #require(listening["url"] as? String)
        #expect(base.hasPrefix("http://127.0.0.1:"))

        let (status, health) = try await Self.request("GET", base + "/health")
        #expect(status == 200 && health.contains(#""status":"ok""#))
        let device = "CLI-SECRET-DEVICE-ID-0001"
        let (created, body) = try await Self.request(
            "POST", base + "/api/rooms", #"{"joinid":"246810","client1":"\#(device)","expiresInSeconds":60}"#)
        #expect(created == 201 && body.contains(#""joinid":"246810""#))
        let (accepted, _) = try await Self.request("POST", base + "/api/rooms/accept", #"{"joinid":"246810","client2":"other"}"#)
        #expect(accepted == 200)
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("rooms.sqlite").path))

        server.signal(SIGTERM)
        #expect(await server.waitForExit(timeout: 15) == 0, "\(server.transcript)")
        let transcript = server.transcript
        let logLines = transcript.components(separatedBy: "stderr:\n").last?.split(separator: "\n") ?? []
        #expect(!logLines.isEmpty)
        for line in logLines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not JSON: \(line)")
        }
        #expect(!transcript.contains(device))
    }

    @Test("bad options fail with a message and a non-zero status", arguments: [
        ["serve", "--log-format", "xml"], ["serve", "--db", "mysql://x"], ["serve", "--tls-cert", "c.pem"],
        ["serve", "--turn-secret", "s"], ["serve", "--port", "70000"],
    ])
    func badOptions(arguments: [String]) async throws {
        let binary = try NoiseInteropTests.invisoBinary()
        let process = try ChildProcess(binary, arguments)
        let status = await process.waitForExit(timeout: 30)
        #expect(status != nil && status != 0)
        #expect(process.transcript.contains("error"))
    }
}
