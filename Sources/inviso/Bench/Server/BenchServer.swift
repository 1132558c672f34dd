import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import InvisoServer
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `inviso bench server`: rendezvous latency, relayed signaling throughput against a bare
/// Hummingbird WebSocket relay, and idle connections held with their memory.
struct BenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Benchmark the signaling server: rendezvous latency, relay throughput, idle sockets.",
        discussion: """
            Starts `inviso serve`'s server in this process (SQLite in a temporary directory, \
            per-socket rate limits lifted) unless --url points at one. rendezvous: POST create \
            → POST accept → both members join → both have room_ready, with both sockets already \
            open, one at a time; p50/p99. relay: --pairs rooms, the creator of each sends \
            --messages ice_candidate messages that the server parses, validates and forwards; \
            messages per second, beside the same clients against a bare Hummingbird WebSocket \
            relay in this process (forwards each text frame to the paired socket, nothing else) \
            — the ratio is ours / bare, median of --rounds alternating rounds. idle: opens \
            --connections sockets from a child process (`inviso bench idle-clients`) over several \
            loopback source addresses (127.0.0.2, …; one address has only ~28,000 ephemeral \
            ports) and reports this process's memory growth per socket — the server's alone — \
            first against the bare relay, then against ours, the heap trimmed in between. \
            Raises the file-descriptor limit as far as the system allows and caps \
            --connections to fit.
            """
    )

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "Benchmark a running server instead (http://host:port); skips the bare-relay baseline and memory.")
    var url: String?

    @Option(help: "Rendezvous round trips to time.")
    var rendezvous = 300

    @Option(help: "Room pairs relaying at once.")
    var pairs = 50

    @Option(help: "Messages each pair relays per round.")
    var messages = 2_000

    @Option(help: "Alternating relay rounds (ours, bare) — the median is reported.")
    var rounds = 3

    @Option(help: "Idle sockets to open (capped by the file-descriptor limit).")
    var connections = 50_000

    @Option(help: "Loopback source addresses to spread idle sockets over.")
    var sources = 4

    @Option(help: "Run one part only: rendezvous, relay or idle.")
    var only: Part?

    /// The parts of the benchmark.
    enum Part: String, ExpressibleByArgument, CaseIterable {
        case rendezvous, relay, idle
    }

    private func runs(_ part: Part) -> Bool { only == nil || only == part }

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench server`\n".utf8))
        #endif
        let limit = DescriptorLimit.raise()
        let group = MultiThreadedEventLoopGroup.singleton
        let out = Output(json: json)
        out.note("file descriptors: soft limit \(limit.soft), hard limit \(limit.hard)")

        if let url {
            guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
                throw ValidationError("--url must look like http://host:port")
            }
            try await measureRendezvous(group: group, host: host, port: port, out: out)
            let ours = try await measureRelay(group: group, host: host, port: port)
            out.figure("relay signaling messages", ours, "messages/s")
            return
        }

        if runs(.idle) {
            // Idle first, in a fresh process heap: the bare relay's sockets, then ours, the
            // heap trimmed in between so neither reuses the other's freed memory.
            let count = min(connections, max(0, Int(limit.soft) - 512))
            if count < connections {
                out.note("idle sockets capped at \(count) (of \(connections)) by the descriptor limit \(limit.soft)")
            }
            let bare = try await withBareRelay { port in try await measureIdle(port: port, count: count) }
            Self.trimHeap()
            let ours = try await Self.withInProcessServer { port in try await measureIdle(port: port, count: count) }
            Self.trimHeap()
            if bare.failed + ours.failed > 0 { out.note("\(ours.failed) connections failed (bare relay: \(bare.failed))") }
            out.figure("idle WebSocket connections held", Double(ours.held), "sockets")
            if let perSocket = ours.bytesPerSocket, let barePerSocket = bare.bytesPerSocket {
                out.figure(
                    "server memory per idle connection", perSocket / 1024, "KiB", baselineName: "bare relay",
                    baseline: barePerSocket / 1024, ratio: perSocket / barePerSocket, precision: 2)
            }
        }
        guard runs(.rendezvous) || runs(.relay) else { return }
        try await Self.withInProcessServer { port in
            if runs(.rendezvous) {
                try await measureRendezvous(group: group, host: "127.0.0.1", port: port, out: out)
            }
            guard runs(.relay) else { return }
            try await withBareRelay { barePort in
                var ratios: [Double] = []
                var oursRates: [Double] = []
                var bareRates: [Double] = []
                for _ in 0..<max(1, rounds) {
                    let ours = try await measureRelay(group: group, host: "127.0.0.1", port: port)
                    let bare = try await measureRelay(group: group, host: "127.0.0.1", port: barePort, bare: true)
                    oursRates.append(ours)
                    bareRates.append(bare)
                    ratios.append(ours / bare)
                }
                out.figure(
                    "relay signaling messages (\(pairs) pairs)", Self.median(oursRates), "messages/s",
                    baselineName: "bare relay", baseline: Self.median(bareRates), ratio: Self.median(ratios))
            }
        }
    }

    // MARK: - Rendezvous

    private func measureRendezvous(group: any EventLoopGroup, host: String, port: Int, out: Output) async throws {
        let http = try await BenchHTTPClient.connect(group: group, host: host, port: port)
        var samples: [Double] = []
        let clock = ContinuousClock()
        for index in 0..<(rendezvous + 20) {
            let creator = try await BenchSocket.connect(group: group, host: host, port: port, source: nil)
            let joiner = try await BenchSocket.connect(group: group, host: host, port: port, source: nil)
            let creatorID = "bench-c-\(index)-\(UUID().uuidString)"
            let joinerID = "bench-j-\(index)-\(UUID().uuidString)"
            let start = clock.now
            let roomID = try await Self.pair(http, creatorID: creatorID, joinerID: joinerID)
            try await Self.join(roomID, creator: (creator, creatorID), joiner: (joiner, joinerID))
            let elapsed = clock.now - start
            if index >= 20 { samples.append(elapsed / .milliseconds(1)) }
            _ = try? await http.post("/api/user/purge", #"{"deviceIds":["\#(creatorID)"]}"#)
            try? await creator.channel.close()
            try? await joiner.channel.close()
        }
        try? await http.channel.close()
        samples.sort()
        out.figure("rendezvous create→accept→both room_ready p50", samples[samples.count / 2], "ms")
        out.figure("rendezvous create→accept→both room_ready p99", samples[min(samples.count - 1, samples.count * 99 / 100)], "ms")
    }

    // MARK: - Relay

    private func measureRelay(group: any EventLoopGroup, host: String, port: Int, bare: Bool = false) async throws -> Double {
        let http = try await BenchHTTPClient.connect(group: group, host: host, port: port)
        defer { http.channel.close(promise: nil) }
        var sockets: [(BenchSocket, BenchSocket)] = []
        let counter = FrameCounter()
        for _ in 0..<pairs {
            let creator = try await BenchSocket.connect(group: group, host: host, port: port, source: nil)
            let joiner = try await BenchSocket.connect(group: group, host: host, port: port, source: nil)
            let creatorID = "relay-c-\(UUID().uuidString)"
            let joinerID = "relay-j-\(UUID().uuidString)"
            // The bare relay has no rooms: it pairs sockets by connection order.
            if !bare {
                let roomID = try await Self.pair(http, creatorID: creatorID, joinerID: joinerID)
                try await Self.join(roomID, creator: (creator, creatorID), joiner: (joiner, joinerID))
            }
            try await joiner.count(into: counter).get()
            sockets.append((creator, joiner))
        }
        let message = Array(
            #"{"type":"ice_candidate","candidate":{"candidate":"candidate:842163049 1 udp 1677729535 198.51.100.7 61234 typ srflx raddr 0.0.0.0 rport 0 generation 0","sdpMLineIndex":0,"sdpMid":"0"}}"#
                .utf8)
        let frame = BenchWebSocketHandler.textFrame(message)
        let batch = 100
        let chunk = Array([[UInt8]](repeating: frame, count: batch).joined())
        let total = pairs * messages
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (creator, _) in sockets {
                tasks.addTask {
                    var sent = 0
                    while sent < messages {
                        let count = min(batch, messages - sent)
                        try await creator.send(count == batch ? chunk : Array([[UInt8]](repeating: frame, count: count).joined())).get()
                        sent += count
                    }
                }
            }
            try await tasks.waitForAll()
        }
        let deadline = clock.now + .seconds(120)
        while counter.count < total {
            guard clock.now < deadline else { throw CLIError("relay: only \(counter.count) of \(total) messages arrived") }
            try await Task.sleep(for: .milliseconds(1))
        }
        let elapsed = clock.now - start
        for (a, b) in sockets {
            try? await a.channel.close()
            try? await b.channel.close()
        }
        return Double(total) / (elapsed / .seconds(1))
    }

    // MARK: - Idle sockets

    /// What one idle run held.
    struct IdleResult: Sendable {
        var held = 0
        var failed = 0
        var bytesPerSocket: Double?
    }

    /// Opens `count` idle sockets from a child process (so the memory growth is the server's
    /// alone and each side has its own descriptor limit) and measures this process's growth.
    private func measureIdle(port: Int, count: Int) async throws -> IdleResult {
        guard count > 0 else { return IdleResult() }
        let before = Self.residentBytes()
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        child.arguments = ["bench", "idle-clients", "--port", String(port), "--count", String(count), "--sources", String(sources)]
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        // The child prints one line once its sockets are open: {"held":N,"failed":M}.
        let line = try await Task.detached { () -> String in
            var bytes: [UInt8] = []
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 { bytes.append(byte) }
            return String(decoding: bytes, as: UTF8.self)
        }.value
        try await Task.sleep(for: .milliseconds(500))
        let after = Self.residentBytes()
        try? input.fileHandleForWriting.close()
        child.waitUntilExit()
        guard let held = Self.number("held", in: line) else { throw CLIError("idle clients failed: \(line)") }
        var result = IdleResult(held: held, failed: Self.number("failed", in: line) ?? 0)
        if let before, let after, held > 0 { result.bytesPerSocket = Double(after - before) / Double(held) }
        return result
    }

    // MARK: - Servers

    /// Runs `body` with the port of `inviso serve`'s server started in this process (SQLite
    /// in a temporary directory, per-socket and per-room rate limits lifted), stopped afterwards.
    static func withInProcessServer<T: Sendable>(_ body: @escaping @Sendable (Int) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteRoomStore(path: directory.appendingPathComponent("rooms.sqlite").path)
        var limits = ServerLimits()
        limits.socketMessagesPerSecond = 1e9
        limits.socketMessageBurst = 1e9
        limits.roomRelayBytesPerSecond = 1e12
        limits.roomRelayByteBurst = 1e12
        limits.silenceTimeout = .seconds(3_600)
        limits.failedAttemptsPerMinute = 1_000_000
        // One machine plays every client: lift the per-source caps meant for the internet.
        limits.connectionsPerSource = .max
        limits.pendingConnectionsPerSource = .max
        limits.createsPerMinute = 1e9
        limits.createBurst = 1e9
        limits.checksPerMinute = 1e9
        limits.checkBurst = 1e9
        limits.liveCodesPerSource = .max
        let logger = Logger(label: "inviso.bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SignalingServer(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0, limits: limits), store: store, logger: logger)
        return try await Self.run(services: { onListening in try server.makeServices(onListening: onListening) }, logger: logger, body)
    }

    /// A bare relay: greets each socket, pairs sockets by connection order, forwards each
    /// text frame to the partner.
    private func withBareRelay<T: Sendable>(_ body: @escaping @Sendable (Int) async throws -> T) async throws -> T {
        let logger = Logger(label: "inviso.bench.bare", factory: { _ in SwiftLogNoOpLogHandler() })
        let partners = BarePairs()
        let server = HTTPServerBuilder.http1WebSocketUpgrade(
            configuration: .init(ws: .init(maxFrameSize: 1 << 16, autoPing: .disabled))
        ) { _, _, _ -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> in
            .upgrade([:]) { inbound, outbound, _ in
                let id = partners.add(outbound)
                try await outbound.write(.text(#"{"type":"connected"}"#))
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard case .text(let text) = message, let partner = partners.partner(of: id) else { continue }
                    try? await partner.write(.text(text))
                }
            }
        }
        let router = Router()
        router.post("/api/rooms") { _, _ in Response(status: .ok) }
        return try await Self.run(
            services: { onListening in
                [
                    Application(
                        router: router, server: server, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                        onServerRunning: { await onListening($0.localAddress?.port ?? 0) }, logger: logger)
                ]
            }, logger: logger, body)
    }

    private static func run<T: Sendable>(
        services: (@escaping @Sendable (Int) async -> Void) throws -> [any Service], logger: Logger,
        _ body: @escaping @Sendable (Int) async throws -> T
    ) async throws -> T {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(configuration: .init(services: try services { continuation.yield($0) }, logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CLIError("the server did not start") }
            let result: T
            do {
                result = try await body(port)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        }
    }

    /// Returns freed heap pages to the system so the next memory figure starts clean.
    static func trimHeap() {
        #if canImport(Glibc)
        // glibc's malloc_trim (not in the Glibc module map): looked up at run time.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    // MARK: - Helpers

    /// Both members send `join_room` at once; returns when both have `room_ready`.
    private static func join(
        _ roomID: String, creator: (socket: BenchSocket, id: String), joiner: (socket: BenchSocket, id: String)
    ) async throws {
        let ready = [creator, joiner].map { member in
            member.socket.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"\#(member.id)"}"#, thenExpect: "room_ready")
        }
        for future in ready { try await future.get() }
    }

    /// Creates a code (server-allocated) and accepts it; returns the room id.
    private static func pair(_ http: BenchHTTPClient, creatorID: String, joinerID: String) async throws -> String {
        let (created, createdBody) = try await http.post("/api/rooms", #"{"client1":"\#(creatorID)","expiresInSeconds":600}"#)
        guard created == 201, let code = field("joinid", in: createdBody) else { throw CLIError("create failed: \(created)") }
        let (accepted, body) = try await http.post("/api/rooms/accept", #"{"joinid":"\#(code)","client2":"\#(joinerID)"}"#)
        guard accepted == 200, let roomID = field("roomid", in: body) else { throw CLIError("accept failed: \(accepted)") }
        return roomID
    }

    private static func field(_ name: String, in body: String) -> String? {
        guard let range = body.range(of: "\"\(name)\":\"") else { return nil }
        let rest = body[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    private static func number(_ name: String, in line: String) -> Int? {
        guard let range = line.range(of: "\"\(name)\":") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// The process's resident memory (Linux `/proc/self/status` VmRSS).
    static func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Prints figures as an aligned table or JSON lines.
    struct Output {
        let json: Bool

        func figure(
            _ name: String, _ value: Double, _ unit: String, baselineName: String = "", baseline: Double? = nil,
            ratio: Double? = nil, precision: Int = 0
        ) {
            if json {
                let rounded = (value * 100).rounded() / 100
                if let baseline, let ratio {
                    let scale = pow(10, Double(precision))
                    JSONLines.emit([
                        "name": .string(name), "value": .double(rounded), "unit": .string(unit),
                        "baselineName": .string(baselineName), "baseline": .double((baseline * scale).rounded() / scale),
                        "ratio": .double((ratio * 1000).rounded() / 1000),
                    ])
                } else {
                    JSONLines.emit(["name": .string(name), "value": .double(rounded), "unit": .string(unit)])
                }
            } else {
                var line = name.padding(toLength: 58, withPad: " ", startingAt: 0) + String(format: "%12.2f  ", value) + unit
                if let baseline, let ratio {
                    line += String(format: "   %@ %.*f, ratio %.3f", baselineName, precision, baseline, ratio)
                }
                JSONLines.emitLine(line)
            }
        }

        func note(_ text: String) {
            if json { JSONLines.emit(["note": .string(text)]) } else { JSONLines.emitLine("# " + text) }
        }
    }
}

/// `inviso bench idle-clients` (internal): opens idle WebSocket clients for
/// `bench server`, prints `{"held":N,"failed":M}`, and holds them until stdin closes.
struct BenchIdleClients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-clients", abstract: "Internal: idle clients for `bench server`.", shouldDisplay: false)

    @Option var port: Int
    @Option var count: Int
    @Option var sources = 4

    func run() async throws {
        _ = DescriptorLimit.raise()
        let group = MultiThreadedEventLoopGroup.singleton
        let tally = IdleTally()
        let addresses = (0..<max(1, sources)).map { "127.0.0.\($0 + 2)" }
        let concurrency = 64
        let count = self.count
        let port = self.port
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for worker in 0..<concurrency {
                tasks.addTask {
                    var index = worker
                    while index < count {
                        do {
                            let socket = try await BenchSocket.connect(
                                group: group, host: "127.0.0.1", port: port, source: addresses[index % addresses.count])
                            tally.sockets.withLock { $0.append(socket) }
                        } catch {
                            tally.failures.add(1, ordering: .relaxed)
                        }
                        index += concurrency
                    }
                }
            }
            try await tasks.waitForAll()
        }
        let held = tally.sockets.withLock { $0.count }
        JSONLines.emitLine(#"{"held":\#(held),"failed":\#(tally.failures.load(ordering: .relaxed))}"#)
        _ = FileHandle.standardInput.readDataToEndOfFile()
        for socket in tally.sockets.withLock({ $0 }) { socket.channel.close(promise: nil) }
    }
}

/// The idle sockets opened and the failures.
final class IdleTally: Sendable {
    let sockets = Mutex<[BenchSocket]>([])
    let failures = Atomic<Int>(0)
}

/// Pairs bare-relay sockets by connection order (0↔1, 2↔3, …).
final class BarePairs: Sendable {
    private let writers = Mutex<[Int: WebSocketOutboundWriter]>([:])
    private let next = Atomic<Int>(0)

    func add(_ writer: WebSocketOutboundWriter) -> Int {
        let id = next.wrappingAdd(1, ordering: .relaxed).oldValue
        writers.withLock { $0[id] = writer }
        return id
    }

    func partner(of id: Int) -> WebSocketOutboundWriter? {
        writers.withLock { $0[id ^ 1] }
    }
}
