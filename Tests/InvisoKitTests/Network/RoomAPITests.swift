@testable import InvisoKit
import NIOCore
import InvisoTesting
import InvisoWire
import Synchronization
import NIOPosix
import Testing

/// Answers every request with a fixed status and body, and records the requests.
final class FakeTransport: HTTPTransport {
    let response: HTTPTransportResponse?
    let requests = Mutex<[HTTPTransportRequest]>([])

    init(status: Int, body: String) { response = HTTPTransportResponse(status: status, body: Array(body.utf8)) }
    init(failing: Void) { response = nil }

    struct Down: Error {}

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        requests.withLock { $0.append(request) }
        guard let response else { throw Down() }
        return response
    }
}

@Suite("RoomAPI", .timeLimit(.minutes(6)))
struct RoomAPITests {
    @Test func roundTripAgainstTheRealServer() async throws {
        try await KitTestServer.with { server in
            let api = RoomAPI(transport: NIOHTTPTransport(endpoint: server.endpoint, timeout: .seconds(90)))
            let created = try await api.createRoom(joinID: "123456", deviceID: "device-creator", expiresInSeconds: 300)
            #expect(created.joinID == "123456")
            #expect(try await api.check(joinID: "123456", deviceID: "device-creator") == .pending)
            await #expect(throws: RoomAPIError.codeTaken) {
                try await api.createRoom(joinID: "123456", deviceID: "someone-else", expiresInSeconds: 300)
            }
            let room = try await api.accept(joinID: "123456", deviceID: "device-joiner")
            #expect(room.count == 48)
            #expect(try await api.check(joinID: "123456", deviceID: "device-creator") == .accepted(roomID: room))
            await #expect(throws: RoomAPIError.alreadyAccepted) {
                try await api.accept(joinID: "123456", deviceID: "device-late")
            }
            await #expect(throws: RoomAPIError.notMember) {
                try await api.deleteRoom(roomID: room, deviceID: "stranger")
            }
            try await api.deleteRoom(roomID: room, deviceID: "device-creator")
            await #expect(throws: RoomAPIError.notFoundOrExpired) {
                try await api.accept(joinID: "654321", deviceID: "device-joiner")
            }
            let purged = try await api.purge(deviceIDs: ["device-creator"])
            #expect(purged.roomsDeleted == 0)
        }
    }

    static let mappings: [(Int, String, RoomAPIError)] = [
        (409, #"{"error":"code_taken"}"#, .codeTaken),
        (409, #"{"error":"already_accepted"}"#, .alreadyAccepted),
        (404, #"{"error":"not_found_or_expired"}"#, .notFoundOrExpired),
        (404, #"{"error":"not_found"}"#, .notFound),
        (403, #"{"error":"not_member"}"#, .notMember),
        (429, #"{"error":"too_many_attempts"}"#, .rateLimited),
        (429, "", .rateLimited),
        (400, #"{"error":"invalid_joinid"}"#, .invalidRequest),
        (413, #"{"error":"body_too_large"}"#, .invalidRequest),
        (503, #"{"error":"unavailable"}"#, .unavailable),
        (502, "<html>bad gateway</html>", .unavailable),
        (404, #"{"error":"something_new"}"#, .unexpectedResponse),
        (418, #"{"error":"teapot"}"#, .unexpectedResponse),
        (200, "not json", .unexpectedResponse),
        (200, #"{"roomid":17}"#, .unexpectedResponse),
    ]

    @Test("a sub-second timeout is kept: 0.5 s stays 0.5 s (it was cut to 0 s, which fails every connect at once)")
    func subSecondTimeout() {
        let endpoint = ServerEndpoint(host: "127.0.0.1", port: 1, useTLS: false)
        #expect(NIOHTTPTransport(endpoint: endpoint, timeout: .milliseconds(500)).connectTimeout == .milliseconds(500))
        #expect(NIOHTTPTransport(endpoint: endpoint, timeout: .milliseconds(1_250)).connectTimeout == .milliseconds(1_250))
    }

    @Test(arguments: mappings)
    func errorMapping(status: Int, body: String, expected: RoomAPIError) async throws {
        let transport = FakeTransport(status: status, body: body)
        let api = RoomAPI(transport: transport)
        let error = await #expect(throws: RoomAPIError.self) {
            _ = try await api.accept(joinID: "000111", deviceID: "device")
        }
        #expect(error == expected)
        #expect(error?.status == status)
        // The server's body never reaches the error's text.
        #expect(!(error?.description.contains(body) ?? true) || body.isEmpty)
        let sent = transport.requests.withLock { $0 }
        #expect(sent.map(\.path) == ["/api/rooms/accept"])
        #expect(String(decoding: sent[0].body, as: UTF8.self) == #"{"joinid":"000111","client2":"device"}"#)
    }

    /// No server on the port: the error says the connection was refused (and says no more).
    @Test(arguments: ["127.0.0.1", "localhost"])
    func aRefusedConnectionSaysWhy(host: String) async throws {
        // A socket bound but not listening: connections to its port are refused, and no
        // other test can take the port meanwhile (a closed listener's port could be bound
        // again by a concurrent test, whose server would answer instead).
        let held = try LoopbackSocket(listening: false)
        defer { held.close() }
        let port = held.port
        let api = RoomAPI(transport: NIOHTTPTransport(endpoint: ServerEndpoint(host: host, port: port, useTLS: false)))
        do {
            _ = try await api.check(joinID: "123456", deviceID: "d")
            Issue.record("a request to a closed port succeeded")
        } catch {
            #expect(error == .transportFailed)
            #expect(error.reason?.lowercased().contains("refused") == true, "\(error)")
            #expect(error.description.hasPrefix("server unreachable ("))
        }
    }

    @Test func transportFailureAndClientSideChecks() async throws {
        let api = RoomAPI(transport: FakeTransport(failing: ()))
        await #expect(throws: RoomAPIError.transportFailed) { _ = try await api.check(joinID: "123456", deviceID: "d") }
        let idle = FakeTransport(status: 200, body: "{}")
        let checked = RoomAPI(transport: idle)
        await #expect(throws: RoomAPIError.invalidRequest) {
            _ = try await checked.createRoom(joinID: "12345", deviceID: "d", expiresInSeconds: 60)
        }
        await #expect(throws: RoomAPIError.invalidRequest) {
            _ = try await checked.createRoom(joinID: "123456", deviceID: "d", expiresInSeconds: 0)
        }
        await #expect(throws: RoomAPIError.invalidRequest) { _ = try await checked.purge(deviceIDs: []) }
        #expect(idle.requests.withLock { $0.isEmpty })
    }
}
