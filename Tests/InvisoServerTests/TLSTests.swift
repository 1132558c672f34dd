import Foundation
import Hummingbird
import HummingbirdTesting
import InvisoServer
import InvisoWire
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// `--tls-cert`/`--tls-key`: HTTPS and WSS on one port.
///
/// The certificate in `Fixtures/` is a self-signed P-256 test certificate for 127.0.0.1
/// and localhost, valid until 2126, made with `openssl req -x509 -newkey ec -pkeyopt
/// ec_paramgen_curve:prime256v1 -nodes -days 36500 -subj "/CN=inviso test server" -addext
/// "subjectAltName=IP:127.0.0.1,DNS:localhost"`. Its key protects nothing else.
@Suite("TLS")
struct TLSTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let certificatePath = fixtures.appendingPathComponent("tls-cert.pem").path
    static let keyPath = fixtures.appendingPathComponent("tls-key.pem").path

    /// A client that trusts only the test certificate and checks the host name.
    static func clientTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
        return tls
    }

    @Test("REST over HTTPS and signaling over WSS: create, accept, both joins, room_ready, a relayed offer")
    func httpsAndWSS() async throws {
        try await TestServer.with(tls: (Self.certificatePath, Self.keyPath)) { server, _ in
            let tls = try Self.clientTLS()
            let body = try await TestClient.withClient(
                host: "127.0.0.1", port: server.port, configuration: .init(tlsConfiguration: tls, serverName: "localhost")
            ) { client in
                #expect(try await client.get("/health").status == .ok)
                let created = try await client.post(
                    "/api/rooms", headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"joinid":"424242","client1":"tls-c","expiresInSeconds":60}"#))
                #expect(created.status == .created)
                let accepted = try await client.post(
                    "/api/rooms/accept", headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"joinid":"424242","client2":"tls-j"}"#))
                #expect(accepted.status == .ok)
                return accepted.body.map { String(buffer: $0) } ?? ""
            }
            let roomID = try #require(body.split(separator: "\"").dropFirst(3).first.map(String.init))
            #expect(roomID.count == 48)

            let url = "wss://127.0.0.1:\(server.port)/"
            let (creator, _) = try await TestSocket.connect(url: url, tls: tls)
            let (joiner, _) = try await TestSocket.connect(url: url, tls: tls)
            try await creator.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"tls-c"}"#)
            #expect(try await creator.nextType() == "room_joined")
            try await joiner.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"tls-j"}"#)
            #expect(try await joiner.nextType() == "room_joined")
            let ready = try await creator.next()
            #expect(ready["type"]?.stringValue == "room_ready" && ready["isInitiator"]?.boolValue == true)
            #expect(try await joiner.nextType() == "room_ready")
            try await creator.send(#"{"type":"webrtc_offer","sdp":"over tls"}"#)
            let offer = try await joiner.next()
            #expect(offer["sdp"]?.stringValue == "over tls" && offer["roomId"]?.stringValue == roomID)
            try await creator.close()
            try await joiner.close()
        }
    }

    @Test("a client that does not trust the certificate is refused; plain HTTP on the TLS port gets no answer")
    func untrustedAndPlaintext() async throws {
        try await TestServer.with(tls: (Self.certificatePath, Self.keyPath)) { server, _ in
            // Default trust roots: the self-signed certificate must not verify.
            await #expect(throws: (any Error).self) {
                try await TestClient.withClient(
                    host: "127.0.0.1", port: server.port, configuration: .init(tlsConfiguration: .makeClientConfiguration(), serverName: "localhost")
                ) { client in _ = try await client.get("/health") }
            }
            await #expect(throws: (any Error).self) {
                try await TestClient.withClient(
                    host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(2))
                ) { client in _ = try await client.get("/health") }
            }
            // The server still serves trusted clients afterwards.
            let status = try await TestClient.withClient(
                host: "127.0.0.1", port: server.port, configuration: .init(tlsConfiguration: try Self.clientTLS(), serverName: "localhost")
            ) { client in try await client.get("/health").status }
            #expect(status == .ok)
        }
    }

    @Test("a missing or malformed certificate fails at start with an error, not a crash")
    func badCertificate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let garbage = directory.appendingPathComponent("garbage.pem")
        try Data("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".utf8).write(to: garbage)
        for (certificate, key) in [(directory.appendingPathComponent("missing.pem").path, Self.keyPath), (garbage.path, Self.keyPath)] {
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.tls = (certificate, key)
            let server = SignalingServer(
                configuration: configuration, store: try SQLiteRoomStore.inMemory(), logger: Logger(label: "inviso.tests.tls"))
            #expect(throws: (any Error).self) { _ = try server.makeApplication() }
        }
    }
}
