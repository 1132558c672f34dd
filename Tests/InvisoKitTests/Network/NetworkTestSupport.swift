import Foundation
import InvisoKit
import InvisoServer
import InvisoTesting
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// The real Inviso server on 127.0.0.1, run in a service group this test controls; it can
/// be stopped and started again on the same port (the SQLite file keeps the rooms).
final class KitTestServer: Sendable {
    let databasePath: String
    /// The certificate and key when the server speaks TLS.
    let tls: (certificatePath: String, keyPath: String)?
    let limits: ServerLimits
    private let state = Mutex<(port: Int, group: ServiceGroup?, task: Task<Void, any Error>?)>((0, nil, nil))
    /// How to close the clients a test made against this server.
    private let closers = Mutex<[@Sendable () async -> Void]>([])

    var port: Int { state.withLock { $0.port } }
    var endpoint: ServerEndpoint { ServerEndpoint(host: "127.0.0.1", port: port, useTLS: false) }

    init(
        databasePath: String, tls: (certificatePath: String, keyPath: String)? = nil, limits: ServerLimits = ServerLimits()
    ) {
        self.databasePath = databasePath
        self.tls = tls
        self.limits = limits
    }

    /// Starts on `port` (0: a free one) and waits until it listens.
    func start(port requested: Int = 0) async throws {
        let logger = Logger(label: "inviso.tests.kit.server", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try SQLiteRoomStore(path: databasePath)
        try await store.migrate()
        let server = SignalingServer(
            configuration: ServerConfiguration(host: "127.0.0.1", port: requested, tls: tls, limits: limits),
            store: store, bus: nil,
            environment: .live, metrics: metrics, logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let group = ServiceGroup(
            configuration: .init(services: try server.makeServices([]) { continuation.yield($0) }, logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw NetworkTestFailure("server did not start") }
        state.withLock { $0 = (port, group, task) }
    }

    /// Shuts down gracefully (sockets get close 1001) and waits until it stopped.
    func stop() async throws {
        let (group, task) = state.withLock { ($0.group, $0.task) }
        await group?.triggerGracefulShutdown()
        _ = try await task?.value
        state.withLock { $0.group = nil; $0.task = nil }
    }

    /// Closes a client with the server once the test ends, however it ends: a failed test
    /// must not leave a client reconnecting to a stopped server for the rest of the run.
    func closeAtEnd(_ close: @escaping @Sendable () async -> Void) {
        closers.withLock { $0.append(close) }
    }

    /// The server's metrics (quoted by ``clientReports()``).
    let metrics = ServerMetrics()

    /// What a timed-out wait quotes of every client made against this server.
    private let reporters = Mutex<[(name: String, report: @Sendable () async -> String)]>([])

    /// Registers a client's diagnostics under `name`.
    func reportOnTimeout(_ name: String, _ report: @escaping @Sendable () async -> String) {
        reporters.withLock { $0.append((name, report)) }
    }

    /// Every registered client's diagnostics, one per line.
    func clientReports() async -> String {
        var lines: [String] = []
        for (name, report) in reporters.withLock({ $0 }) { lines.append("\(name): \(await report())") }
        guard !lines.isEmpty else { return "" }
        var emitted: [UInt8] = []
        metrics.registry.emit(into: &emitted)
        let counters = String(decoding: emitted, as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.hasSuffix(" 0") }
        lines.append("server: " + counters.joined(separator: " "))
        return lines.joined(separator: "\n")
    }

    private func closeClients() async {
        for close in closers.withLock({ closers in defer { closers = [] }; return closers }) { await close() }
    }

    /// Runs `body` against a fresh server in a fresh temporary database; closes the
    /// clients registered with ``closeAtEnd(_:)`` and stops the server after.
    static func with(
        tls: (certificatePath: String, keyPath: String)? = nil, limits: ServerLimits = ServerLimits(),
        _ body: (KitTestServer) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("inviso-kit-tests-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("rooms.sqlite").path
        let server = KitTestServer(databasePath: path, tls: tls, limits: limits)
        try await server.start()
        do {
            try await body(server)
        } catch {
            await server.closeClients()
            try? await server.stop()
            throw error
        }
        await server.closeClients()
        try await server.stop()
    }
}

struct NetworkTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

