import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import InvisoServer
import InvisoTesting
import InvisoTime
import InvisoWire
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import ServiceLifecycle
import Synchronization
import Testing


/// Deterministic bytes: InvisoTesting's SplitMix64 generator behind a lock (tests need
/// distinct, repeatable ids).
final class SeededBytes: Sendable {
    private let generator: Mutex<SeededGenerator>

    init(seed: UInt64) { generator = Mutex(SeededGenerator(seed: seed)) }

    func next(_ count: Int) -> [UInt8] {
        generator.withLock { $0.bytes(count) }
    }
}

/// A server on 127.0.0.1 (free port) with an in-memory SQLite store, run in a service
/// group the test controls.
struct TestServer: Sendable {
    let port: Int
    let server: SignalingServer
    let clock: ManualClock
    let store: any RoomStore

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var webSocketURL: String { "ws://127.0.0.1:\(port)/" }

    /// Runs `body` against a fresh server; shuts it down gracefully afterwards.
    static func with(
        limits: ServerLimits = ServerLimits(), store: (any RoomStore)? = nil, bus: (any SignalingBus)? = nil,
        extraServices: [any Service] = [], clock: ManualClock = ManualClock(), logger: Logger? = nil,
        turn: TURNConfiguration? = nil, tls: (certificatePath: String, keyPath: String)? = nil,
        _ body: @escaping @Sendable (TestServer, ServiceGroup) async throws -> Void
    ) async throws {
        let store = try store ?? SQLiteRoomStore.inMemory()
        let bytes = SeededBytes(seed: 42)
        let environment = ServerEnvironment(clock: clock, randomBytes: { bytes.next($0) })
        let logger = logger ?? Logger(label: "inviso.tests.server", factory: { _ in SwiftLogNoOpLogHandler() })
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.limits = limits
        configuration.turn = turn
        configuration.tls = tls
        let server = SignalingServer(configuration: configuration, store: store, bus: bus, environment: environment, logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(
            configuration: .init(
                services: try server.makeServices(extraServices) { port in continuation.yield(port) }, logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw TestFailure("server did not start") }
            let testServer = TestServer(port: port, server: server, clock: clock, store: store)
            do {
                try await withTimeout(seconds: 300) { try await body(testServer, group) }
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    // MARK: REST

    struct Reply: Sendable {
        let status: Int
        let body: String

        var json: JSONObject? {
            if case .object(let object)? = try? JSONValue.parse(body) { return object }
            return nil
        }

        var error: String? { json?["error"]?.stringValue }
    }

    func request(_ method: String, _ path: String, _ body: String? = nil) async throws -> Reply {
        // HummingbirdTesting's client gives a connection 5 s, fixed; when every suite starts
        // at once on a loaded CI host that was once not enough to reach a loopback server,
        // so a connect that times out is tried again (up to five times).
        for attempt in 1...5 {
            do {
                return try await requestOnce(method, path, body)
            } catch let error as ChannelError where error == .connectTimeout(.seconds(5)) && attempt < 5 {
                continue
            }
        }
        preconditionFailure("the last attempt returns or throws")
    }

    private func requestOnce(_ method: String, _ path: String, _ body: String?) async throws -> Reply {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            let buffer = ByteBuffer(string: body ?? "")
            let headers: HTTPFields = body == nil ? [:] : [.contentType: "application/json"]
            let response: TestClient.Response
            switch method {
            case "GET": response = try await client.get(path, headers: headers)
            case "POST": response = try await client.post(path, headers: headers, body: buffer)
            case "DELETE": response = try await client.delete(path, headers: headers, body: buffer)
            case "PUT": response = try await client.put(path, headers: headers, body: buffer)
            default: throw TestFailure("method \(method)")
            }
            return Reply(
                status: Int(response.status.code), body: response.body.map { String(buffer: $0) } ?? "")
        }
    }

    func post(_ path: String, _ body: String) async throws -> Reply { try await request("POST", path, body) }

    /// Creates a code for `creator` and has `joiner` accept it; returns the room id.
    func pair(code: String, creator: String, joiner: String) async throws -> String {
        let created = try await post("/api/rooms", #"{"joinid":"\#(code)","client1":"\#(creator)","expiresInSeconds":300}"#)
        #expect(created.status == 201)
        let accepted = try await post("/api/rooms/accept", #"{"joinid":"\#(code)","client2":"\#(joiner)"}"#)
        #expect(accepted.status == 200)
        return try #require(accepted.json?["roomid"]?.stringValue)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`, failing after `seconds` instead of hanging the suite.
func withTimeout<T: Sendable>(seconds: Double, _ body: @Sendable @escaping () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TestFailure("timed out after \(seconds) s")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A WebSocket client for tests: received messages queue up; `next()` takes one.
final class TestSocket: Sendable {
    enum Event: Sendable {
        case text(String)
        case binary([UInt8])
    }

    private struct Inbox {
        var events: [Event] = []
        var finished = false
    }

    private let boxes: SocketBoxes
    let task: Task<WebSocketCloseFrame?, any Error>

    private init(boxes: SocketBoxes, task: Task<WebSocketCloseFrame?, any Error>) {
        self.boxes = boxes
        self.task = task
    }

    /// Connects and waits for the server's `connected` greeting (returned).
    static func connect(_ server: TestServer) async throws -> (TestSocket, JSONObject) {
        try await connect(url: server.webSocketURL)
    }

    static func connect(_ server: TestServer, autoPing: Duration) async throws -> (TestSocket, JSONObject) {
        try await connect(url: server.webSocketURL, autoPing: autoPing)
    }

    static func connect(
        url: String, autoPing: Duration? = nil, tls: TLSConfiguration? = nil
    ) async throws -> (TestSocket, JSONObject) {
        let logger = Logger(label: "inviso.tests.ws", factory: { _ in SwiftLogNoOpLogHandler() })
        let box = SocketBoxes()
        let task = Task {
            defer { box.inbox.withLock { $0.finished = true } }
            var configuration = WebSocketClientConfiguration()
            configuration.maxFrameSize = 1 << 20
            configuration.autoPing = autoPing.map { .enabled(timePeriod: $0) } ?? .disabled
            if tls != nil { configuration.sniHostname = "localhost" }  // an IP is not a valid SNI name
            return try await WebSocketClient.connect(
                url: url, configuration: configuration, tlsConfiguration: tls, logger: logger
            ) { inbound, outbound, _ in
                box.writer.withLock { $0 = outbound }
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    let event: Event =
                        switch message {
                        case .text(let text): .text(text)
                        case .binary(let buffer): .binary(Array(buffer: buffer))
                        }
                    box.inbox.withLock { $0.events.append(event) }
                }
            }
        }
        let socket = TestSocket(boxes: box, task: task)
        let greeting = try await socket.next()
        #expect(greeting["type"]?.stringValue == "connected")
        return (socket, greeting)
    }

    /// The next event; `nil` once the connection ended; a failure after `seconds`.
    func nextEvent(timeout seconds: Double = 30) async throws -> Event? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let (event, finished) = boxes.inbox.withLock { inbox -> (Event?, Bool) in
                if inbox.events.isEmpty { return (nil, inbox.finished) }
                return (inbox.events.removeFirst(), false)
            }
            if let event { return event }
            if finished { return nil }
            guard ContinuousClock.now < deadline else { throw TestFailure("nothing received within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The next message, which must be a JSON text frame.
    func next(timeout seconds: Double = 30) async throws -> JSONObject {
        switch try await nextEvent(timeout: seconds) {
        case .text(let text)?:
            guard case .object(let object) = try JSONValue.parse(text) else { throw TestFailure("not an object: \(text)") }
            return object
        case .binary?: throw TestFailure("expected text, got binary")
        case nil: throw TestFailure("socket closed")
        }
    }

    /// The next message's `type`.
    func nextType(timeout seconds: Double = 30) async throws -> String? {
        try await next(timeout: seconds)["type"]?.stringValue
    }

    /// Asserts nothing arrives within `seconds`.
    func expectSilence(_ seconds: Double = 0.3, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        do {
            if let event = try await nextEvent(timeout: seconds) {
                Issue.record("expected silence, got \(event)", sourceLocation: sourceLocation)
            }
        } catch is TestFailure {}
    }

    func send(_ text: String) async throws {
        guard let writer = boxes.writer.withLock({ $0 }) else { throw TestFailure("not connected") }
        try await writer.write(.text(text))
    }

    func send(binary: [UInt8]) async throws {
        guard let writer = boxes.writer.withLock({ $0 }) else { throw TestFailure("not connected") }
        try await writer.write(.binary(ByteBuffer(bytes: binary)))
    }

    func send(_ message: ClientMessage) async throws {
        try await send(String(decoding: message.object.serialized(), as: UTF8.self))
    }

    /// A WebSocket control-frame ping (what the iOS app sends every 25 s).
    func sendPing() async throws {
        guard let writer = boxes.writer.withLock({ $0 }) else { throw TestFailure("not connected") }
        try await writer.write(.custom(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "hb"))))
    }

    /// Closes normally and waits for the connection to end.
    func close() async throws {
        if let writer = boxes.writer.withLock({ $0 }) {
            try? await writer.close(.normalClosure, reason: nil)
        }
        _ = try? await withTimeout(seconds: 5) { [task] in try await task.value }
    }

    /// Whether the connection ends (by either side, with or without a close frame) within
    /// `seconds`.
    func waitUntilClosed(timeout seconds: Double = 30) async -> Bool {
        (try? await withTimeout(seconds: seconds) { [task] in _ = try? await task.value }) != nil
    }

    /// Waits for the server to close the connection; returns its close code.
    func closeCode(timeout seconds: Double = 30) async throws -> WebSocketErrorCode? {
        try await withTimeout(seconds: seconds) { [task] in try await task.value?.closeCode }
    }

    private final class SocketBoxes: Sendable {
        let inbox = Mutex(Inbox())
        let writer = Mutex<WebSocketOutboundWriter?>(nil)
    }
}
