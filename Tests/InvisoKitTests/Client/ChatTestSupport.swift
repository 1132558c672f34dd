@testable import InvisoKit
import InvisoServer
import InvisoStore
import InvisoTesting
import InvisoTime
import Logging
import Synchronization
import Testing

/// Collects a chat client's events so tests can wait for conditions with a timeout.
final class ChatEventLog: Sendable {
    final class Box: Sendable {
        let events = Mutex<(list: [ChatEvent], finished: Bool)>(([], false))
    }

    private let box = Box()
    let reader: Task<Void, Never>
    /// The client's log, quoted when a wait times out.
    let log: LogCapture?
    private weak let client: ChatClient?
    /// The server the client talks to: a timed-out wait quotes every client made against it.
    private let server: KitTestServer?

    init(_ client: ChatClient, log: LogCapture? = nil, server: KitTestServer? = nil) {
        self.log = log
        self.client = client
        self.server = server
        reader = Task { [box] in
            for await event in client.events { box.events.withLock { $0.list.append(event) } }
            box.events.withLock { $0.finished = true }
        }
    }

    var all: [ChatEvent] { box.events.withLock { $0.list } }
    var finished: Bool { box.events.withLock { $0.finished } }

    /// The received messages, in order.
    var messages: [(id: UInt64, payload: ChatPayload)] {
        all.compactMap { if case .message(let id, let payload) = $0 { (id, payload) } else { nil } }
    }

    /// The ids reported delivered, in order.
    var delivered: [UInt64] {
        all.compactMap { if case .delivered(let id) = $0 { id } else { nil } }
    }

    var security: ChatSecurity? {
        all.lazy.compactMap { if case .secured(let security) = $0 { security } else { nil } }.first
    }

    var errors: [ChatError] { all.compactMap { if case .error(let error) = $0 { error } else { nil } } }

    var closeReason: ChatCloseReason? {
        all.lazy.compactMap { if case .closed(let reason) = $0 { reason } else { nil } }.first
    }

    /// Waits until `condition` holds over the events (60 s by default: a loaded CI host running every suite at once is slow, a healthy run is not).
    func wait(
        _ what: String, timeout seconds: Double = 120, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: (ChatEventLog) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition(self) {
            guard ContinuousClock.now < deadline else {
                let summary = all.suffix(8).map { "\($0)" }.joined(separator: ", ")
                let state = await client?.diagnostics ?? "client gone"
                let lines = log?.all.suffix(12).joined(separator: " | ") ?? "not recorded"
                let everyone = await server?.clientReports() ?? ""
                throw NetworkTestFailure(
                    "timed out waiting for \(what); last events: \(summary); client: \(state); log: \(lines)"
                        + (everyone.isEmpty ? "" : "\nevery client of the server:\n\(everyone)"))
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func waitForSecurity() async throws -> ChatSecurity {
        try await wait("the secure channel") { $0.security != nil }
        return security!
    }
}

/// Frames every client of a test saw on its paths, for the "no plaintext" check.
final class FrameCapture: Sendable {
    private let frames = Mutex<[(path: ChatPath, frame: [UInt8])]>([])

    var tap: @Sendable (ChatPath, [UInt8]) -> Void {
        { [self] path, frame in frames.withLock { $0.append((path, frame)) } }
    }

    var all: [[UInt8]] { frames.withLock { $0.map(\.frame) } }

    /// How many frames were seen on `path`.
    func count(on path: ChatPath) -> Int { frames.withLock { $0.count { $0.path == path } } }

    /// Whether any frame contains `needle`.
    func contains(_ needle: [UInt8]) -> Bool {
        all.contains { frame in
            guard frame.count >= needle.count else { return false }
            return (0...(frame.count - needle.count)).contains { frame[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
    }
}

enum ChatFixture {
    /// Server limits high enough for thousands of messages in a few seconds.
    static var fastLimits: ServerLimits {
        var limits = ServerLimits()
        limits.socketMessagesPerSecond = 100_000
        limits.socketMessageBurst = 100_000
        limits.roomRelayBytesPerSecond = 1e9
        limits.roomRelayByteBurst = 1e9
        return limits
    }

    static func configuration(_ server: KitTestServer) -> ChatClient.Configuration {
        var configuration = ChatClient.Configuration(server: server.endpoint)
        configuration.signaling.pingInterval = .seconds(2)
        // Generous: every test server shares NIO's two event loops with the others, and
        // under the stress script a pong once took more than 10 s; the reconnect that
        // followed lost v1 messages (no acks) in flight. The timeout itself is tested on
        // a manual clock (InProcessChatTests, SignalingMachineTests).
        configuration.signaling.pongTimeout = .seconds(60)
        // Generous: a loaded host (the whole suite in parallel beside busy loops) may take
        // long; the tests about timeouts set theirs and advance a manual clock.
        configuration.signaling.connectTimeout = .seconds(60)
        // Likewise REST: at the start of the parallel pass a request to an in-process
        // server once took more than 15 s (its handlers wait for the busy cooperative pool).
        configuration.httpTimeout = .seconds(90)
        configuration.signaling.reconnect = ReconnectPolicy(base: .milliseconds(50), factor: 2, cap: .milliseconds(250))
        configuration.relayPacing = RelayTransport.Pacing(messagesPerSecond: 20_000, burst: 2_000)
        configuration.retransmitInterval = .milliseconds(700)
        configuration.acceptPollInterval = .milliseconds(300)
        configuration.pairingTimeout = .seconds(600)
        // The relay only, unless a test turns the direct path on (`direct`).
        configuration.direct = nil
        configuration.directCandidatesTimeout = .seconds(180)
        return configuration
    }

    static func client(
        _ server: KitTestServer, seed: UInt64, capture: FrameCapture? = nil, store: InvisoStore? = nil,
        clock: any InvisoClock = SystemClock(),
        logger: Logger? = nil,
        configure: (inout ChatClient.Configuration) -> Void = { _ in }
    ) -> (ChatClient, ChatEventLog) {
        var configuration = configuration(server)
        configure(&configuration)
        // Recorded (not printed): a wait that times out quotes the client's last lines.
        let recorder = LogCapture()
        var recording = recorder.logger(label: "inviso.tests.chat.\(seed)")
        recording.logLevel = .debug
        let client = ChatClient(
            configuration: configuration, store: store, random: SeededGenerator(seed: seed), clock: clock, http: nil,
            logger: logger ?? recording, frameTap: capture?.tap)
        server.closeAtEnd { await client.leave() }
        server.reportOnTimeout("client \(seed)") { [weak client] in
            guard let client else { return "gone" }
            let lines = recorder.all.suffix(6).joined(separator: " | ")
            return await client.diagnostics + "; log: " + lines
        }
        return (client, ChatEventLog(client, log: logger == nil ? recorder : nil, server: server))
    }

    /// The direct path on loopback only.
    /// The direct path on loopback only, with timeouts that a loaded host (the whole suite
    /// in parallel beside busy loops) cannot hit: the session makes one attempt, and a
    /// handshake that misses a 5 s deadline would leave it on the relay for good.
    static var direct: DirectConfiguration {
        var direct = DirectConfiguration()
        direct.host = "127.0.0.1"
        direct.handshakeTimeout = .seconds(120)
        direct.dialTimeout = .seconds(120)
        direct.connectTimeout = .seconds(180)
        return direct
    }

    static func text(_ side: String, _ index: Int) -> String { "\(side)-message-\(index)" }

    /// Queues messages `range` of `side`.
    static func send(_ client: ChatClient, _ side: String, _ range: Range<Int>) async throws {
        for index in range { _ = try await client.send(text: text(side, index)) }
    }

    /// `count` messages each way at once; every one arrives once, in order, and is
    /// reported delivered.
    static func exchange(
        _ alice: (ChatClient, ChatEventLog), _ bob: (ChatClient, ChatEventLog), count: Int
    ) async throws {
        async let a: Void = send(alice.0, "alice", 0..<count)
        async let b: Void = send(bob.0, "bob", 0..<count)
        _ = try await (a, b)
        try await bob.1.wait("alice's messages") { $0.messages.count >= count }
        try await alice.1.wait("bob's messages") { $0.messages.count >= count }
        try await alice.1.wait("alice's delivery reports") { $0.delivered.count >= count }
        try await bob.1.wait("bob's delivery reports") { $0.delivered.count >= count }
        expectMessages(bob.1, (0..<count).map { text("alice", $0) })
        expectMessages(alice.1, (0..<count).map { text("bob", $0) })
        #expect(alice.1.delivered == Array(1...UInt64(count)))
        #expect(bob.1.delivered == Array(1...UInt64(count)))
    }

    /// Expects exactly `texts`, in order, with ids 1…n.
    static func expectMessages(
        _ log: ChatEventLog, _ texts: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let messages = log.messages
        #expect(messages.map(\.id) == Array(1...UInt64(texts.count)), sourceLocation: sourceLocation)
        #expect(messages.map(\.payload) == texts.map { ChatPayload.text($0) }, sourceLocation: sourceLocation)
    }
}

/// Waits (real time, 60 s at most) until `condition` holds: for state that a driver
/// reaches asynchronously, such as a timer going to sleep on a test clock.
func waitUntil(
    _ what: String, timeout seconds: Double = 120, condition: @Sendable () async -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while await !condition() {
        guard ContinuousClock.now < deadline else { throw NetworkTestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}
