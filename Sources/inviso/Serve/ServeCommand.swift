import ArgumentParser
import Foundation
import NIOCore
import InvisoServer
import Logging
import ServiceLifecycle

/// `inviso serve`: the rendezvous and signaling server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the rendezvous and signaling server (REST API + WebSocket on one port).",
        discussion: """
            Rooms live in SQLite under --data (default ./inviso-data) or, with --db, in \
            PostgreSQL, where several instances share rooms and relay signaling to each other \
            through LISTEN/NOTIFY. Every option can also come from the environment variable \
            shown; the command line wins. Prints {"event":"listening","url":…} on stdout once \
            the port is bound; logs go to stderr. SIGTERM or SIGINT shut down gracefully: \
            sockets are closed with 1001 and in-flight requests finish.
            """
    )

    @Option(help: "Address to bind; 0.0.0.0 for all interfaces. [INVISO_HOST, default 127.0.0.1]")
    var host: String?

    @Option(help: "TCP port; 0 picks a free one. [INVISO_PORT, default 8080]")
    var port: Int?

    @Option(help: "Directory of the SQLite database. [INVISO_DATA, default ./inviso-data]")
    var data: String?

    @Option(help: "PostgreSQL URL (postgres://user:pass@host:port/db) instead of SQLite. [INVISO_DB]")
    var db: String?

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain: serve HTTPS/WSS. [INVISO_TLS_CERT]")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert. [INVISO_TLS_KEY]")
    var tlsKey: String?

    @Option(name: .customLong("turn-secret"), help: "coturn static-auth-secret: enables POST /api/turn. [INVISO_TURN_SECRET]")
    var turnSecret: String?

    @Option(
        name: .customLong("turn-url"),
        help: "TURN/STUN URL handed out with credentials (repeatable, or comma-separated in the variable). [INVISO_TURN_URL]")
    var turnURL: [String] = []

    @Option(
        name: .customLong("relay-rate"),
        help: "MiB per second one room may relay (files and messages; bursts up to 8 s of it). [INVISO_RELAY_RATE, default 1]")
    var relayRate: Double?

    @Option(
        name: .customLong("message-rate"),
        help: "Messages per second one socket may send (bursts up to 4 s of it). [INVISO_MESSAGE_RATE, default 50]")
    var messageRate: Double?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. [INVISO_LOG_LEVEL, default info]")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "text or json. [INVISO_LOG_FORMAT, default text]")
    var logFormat: String?

    func run() async throws {
        let settings: ServeSettings
        do {
            settings = try ServeSettings(command: self, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode.validationFailure
        }
        let logger = settings.makeLogger()
        do {
            try await settings.serve(logger: logger)
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode.failure
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            FileHandle.standardError.write(Data("error: \(ServeSettings.portInUse(host: settings.host, port: settings.port))\n".utf8))
            throw ExitCode.failure
        } catch {
            logger.critical("server stopped", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
    }
}
