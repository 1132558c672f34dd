import ArgumentParser
import InvisoNoise

/// `inviso noise listen`: the responder side.
struct NoiseListen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Accept Noise connections as the responder.",
        discussion: """
            Prints {"event":"listening","host":…,"port":N} first, then for each connection a \
            "handshake" event and one "received" event per transport message. Without --once, \
            a failed connection is reported as an "error" event and the next one is accepted; \
            with --once, an error ends the command with a non-zero status.
            """
    )

    @Option(help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(help: "TCP port (0 picks an ephemeral port).")
    var port: Int

    @Flag(help: "Send each received transport plaintext straight back.")
    var echo = false

    @Flag(help: "Exit after one connection.")
    var once = false

    @OptionGroup var session: NoiseSessionOptions

    func run() throws {
        ignoreBrokenPipes()
        let factory: HandshakeFactory
        let listener: TCPListener
        do {
            factory = try session.makeHandshakeFactory(role: .responder)
            listener = try TCPListener(host: host, port: port)
        } catch {
            JSONLines.emitError(error)
            throw ExitCode.failure
        }
        defer { listener.close() }
        JSONLines.emit(["event": .string("listening"), "host": .string(listener.host), "port": .int(listener.port)])

        repeat {
            let connection: TCPConnection
            do {
                connection = try listener.accept()
            } catch {
                // The listening socket itself failed: nothing more can be served.
                JSONLines.emitError(error)
                throw ExitCode.failure
            }
            do {
                defer { connection.close() }
                let transport = try NoiseSession.handshake(try factory.make(), over: connection)
                try NoiseSession.serve(transport, over: connection, echo: echo)
            } catch {
                JSONLines.emitError(error)
                if once { throw ExitCode.failure }
            }
        } while !once
    }
}
