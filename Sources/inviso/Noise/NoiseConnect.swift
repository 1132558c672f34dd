import ArgumentParser
import InvisoNoise

/// `inviso noise connect`: the initiator side.
struct NoiseConnect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Connect as the Noise initiator and send each line of standard input.",
        discussion: """
            After the handshake each stdin line (without its newline) becomes one transport \
            message. At end of input the initiator waits for outstanding echoes, unless the \
            pattern is one-way, then closes. Prints a "handshake" event and one "received" \
            event per message that comes back.
            """
    )

    @Argument(help: ArgumentHelp("The responder's address.", valueName: "host:port"))
    var address: String

    @OptionGroup var session: NoiseSessionOptions

    func run() throws {
        ignoreBrokenPipes()
        do {
            let factory = try session.makeHandshakeFactory(role: .initiator)
            let (host, port) = try parseHostPort(address)
            let connection = try connectTCP(host: host, port: port)
            defer { connection.close() }
            let transport = try NoiseSession.handshake(try factory.make(), over: connection)
            try NoiseSession.drive(transport, over: connection)
        } catch {
            JSONLines.emitError(error)
            throw ExitCode.failure
        }
    }
}
