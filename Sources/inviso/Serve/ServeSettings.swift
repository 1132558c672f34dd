import Foundation
import NIOCore
import NIOPosix
import InvisoServer
import Logging
import ServiceLifecycle

/// `inviso serve`'s options resolved against the environment (command line first).
struct ServeSettings {
    enum Storage {
        case sqlite(path: String)
        case postgres(url: String)
    }

    var host: String
    var port: Int
    var storage: Storage
    var tls: (certificatePath: String, keyPath: String)?
    var turn: TURNConfiguration?
    var logLevel: Logger.Level
    var jsonLogs: Bool
    /// MiB/s per room, and messages/s per socket (`nil`: the defaults).
    var relayRate: Double?
    var messageRate: Double?

    init(command: ServeCommand, environment: [String: String]) throws {
        func value(_ option: String?, _ variable: String) -> String? {
            if let option { return option }
            guard let text = environment[variable], !text.isEmpty else { return nil }
            return text
        }
        host = value(command.host, "INVISO_HOST") ?? "127.0.0.1"
        if let port = command.port {
            self.port = port
        } else if let text = value(nil, "INVISO_PORT") {
            guard let port = Int(text) else { throw CLIError("INVISO_PORT must be a number") }
            self.port = port
        } else {
            port = 8080
        }
        guard (0...65_535).contains(port) else { throw CLIError("the port must be 0…65535") }

        if let url = value(command.db, "INVISO_DB") {
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw CLIError("--db takes a postgres:// URL")
            }
            storage = .postgres(url: url)
        } else {
            let directory = value(command.data, "INVISO_DATA") ?? "./inviso-data"
            storage = .sqlite(path: URL(fileURLWithPath: directory).appendingPathComponent("rooms.sqlite").path)
        }

        switch (value(command.tlsCert, "INVISO_TLS_CERT"), value(command.tlsKey, "INVISO_TLS_KEY")) {
        case (nil, nil): tls = nil
        case (let cert?, let key?): tls = (cert, key)
        default: throw CLIError("--tls-cert and --tls-key go together")
        }

        let turnSecret = value(command.turnSecret, "INVISO_TURN_SECRET")
        let turnURLs =
            command.turnURL.isEmpty
            ? (value(nil, "INVISO_TURN_URL")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? [])
            : command.turnURL
        if (turnSecret == nil) != turnURLs.isEmpty {
            throw CLIError("--turn-secret and --turn-url go together")
        }
        turn = try turnSecret.map { try TURNConfiguration(secret: $0, urls: turnURLs) }

        func rate(_ option: Double?, _ variable: String, _ name: String) throws -> Double? {
            guard let text = option.map({ "\($0)" }) ?? value(nil, variable) else { return nil }
            guard let rate = Double(text), rate.isFinite, rate > 0, rate <= 1_000_000 else {
                throw CLIError("\(name) must be a positive number")
            }
            return rate
        }
        relayRate = try rate(command.relayRate, "INVISO_RELAY_RATE", "--relay-rate")
        messageRate = try rate(command.messageRate, "INVISO_MESSAGE_RATE", "--message-rate")

        let level = value(command.logLevel, "INVISO_LOG_LEVEL") ?? "info"
        guard let logLevel = Logger.Level(rawValue: level) else { throw CLIError("unknown log level \(level)") }
        self.logLevel = logLevel
        switch value(command.logFormat, "INVISO_LOG_FORMAT") ?? "text" {
        case "text": jsonLogs = false
        case "json": jsonLogs = true
        case let other: throw CLIError("unknown log format \(other) (text or json)")
        }
    }

    func makeLogger() -> Logger {
        let json = jsonLogs
        var logger = Logger(label: "inviso.server") { label in
            json ? JSONLogHandler(label: label) as any LogHandler : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = logLevel
        return logger
    }

    /// Binds `host:port` and lets it go at once: a port already taken is one clear error,
    /// before the data directory or database is touched. (A server that takes the port in
    /// between still fails at its own bind, with the same message: ``portInUse(host:port:)``.)
    static func checkPortFree(host: String, port: Int) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw portInUse(host: host, port: port)
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
            throw CLIError("cannot listen on \(host): it is not an address of this machine (--host)")
        } catch let error as IOError where error.errnoCode == EACCES {
            throw CLIError("port \(port) needs privileges to listen on: choose one above 1023 with --port")
        }
    }

    /// The one line for a port that another program holds.
    static func portInUse(host: String, port: Int) -> CLIError {
        CLIError("port \(port) on \(host) is already in use (another inviso serve?): stop it, or choose another with --port")
    }

    func serve(logger: Logger) async throws {
        // Nothing is logged or written to disk before we know the port is ours.
        try await Self.checkPortFree(host: host, port: port)
        var configuration = ServerConfiguration(host: host, port: port)
        // As many connections as the descriptor limit allows, less a reserve: when they are
        // all taken, the longest-idle unfinished connection makes room for a new one.
        let descriptors = DescriptorLimit.raise()
        configuration.limits.maxConnections = DescriptorLimit.connectionCap(soft: descriptors.soft)
        logger.info(
            "connection cap", metadata: ["max": "\(configuration.limits.maxConnections.map(String.init) ?? "none")"])
        configuration.tls = tls
        configuration.turn = turn
        if let relayRate {
            configuration.limits.roomRelayBytesPerSecond = relayRate * 1_048_576
            configuration.limits.roomRelayByteBurst = relayRate * 8 * 1_048_576
        }
        if let messageRate {
            configuration.limits.socketMessagesPerSecond = messageRate
            configuration.limits.socketMessageBurst = messageRate * 4
        }
        let store: any RoomStore
        var bus: (any SignalingBus)?
        var services: [any Service] = []
        switch storage {
        case .sqlite(let path):
            store = try SQLiteRoomStore(path: path)
            logger.info("storage: SQLite", metadata: ["path": "\(path)"])
        case .postgres(let url):
            let database = try PostgresRoomStore.configuration(url: url)
            let postgres = PostgresRoomStore(configuration: database, logger: logger)
            // Members of one room may reach different instances: signaling crosses over
            // LISTEN/NOTIFY on the same database.
            let signaling = PostgresSignalingBus(configuration: database, logger: logger)
            services += [postgres, signaling]
            store = postgres
            bus = signaling
            logger.info("storage: PostgreSQL; signaling between instances over LISTEN/NOTIFY")
        }
        let server = SignalingServer(configuration: configuration, store: store, bus: bus, logger: logger)
        let scheme = tls == nil ? "http" : "https"
        let host = self.host
        try await server.run(services: services) { port in
            let line = "{\"event\":\"listening\",\"url\":\"\(scheme)://\(host):\(port)\"}\n"
            FileHandle.standardOutput.write(Data(line.utf8))
            logger.notice("listening", metadata: ["url": "\(scheme)://\(host):\(port)"])
        }
    }
}
