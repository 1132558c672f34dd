import ArgumentParser
import Foundation
import InvisoKit
import Logging

/// `inviso bench chat`: how fast two people get from `invite` to a delivered first message,
/// and how many messages one session carries per second.
struct BenchChat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Benchmark the chat: invite → first message delivered, and messages per second.",
        discussion: """
            Starts `inviso serve`'s server in this process (SQLite in a temporary directory) on \
            127.0.0.1. first-message: from the start of `invite` to the joiner holding the \
            creator's first message — room creation, the joiner's accept, both joins, the whole \
            v2 pairing (CPace, Noise XXpsk3, ratchet) and the message — p50 and p90 over --runs \
            runs, in this process (two ChatClients) and with two `inviso` processes in --json \
            mode (process start included), split into the invite and the join. Target: CLI p50 ≤ 30 ms. throughput: --messages \
            messages from the creator until the last is acknowledged: over the relay paced as \
            the client paces for a default server (40 frames/s, bursts of 150, below its \
            per-socket limit of 50/s; at most 400 messages, ten seconds), unpaced (this server's limits are lifted), which \
            measures the engine and the relay, and over the direct TCP path once both clients \
            moved to it (unpaced: the median of three runs); one message per send call. Run the \
            binary scripts/install.sh builds: a plain `swift build -c release` one starts about \
            twice as slowly (docs/cli.md).
            """)

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "Runs per first-message figure.")
    var runs = 20

    @Option(help: "Messages for the throughput figure.")
    var messages = 400

    @Flag(name: .customLong("no-cli"), help: "Skip the two-process figure.")
    var noCLI = false

    func validate() throws {
        guard (1...1_000).contains(runs) else { throw ValidationError("--runs must be 1 to 1000") }
        guard (1...100_000).contains(messages) else { throw ValidationError("--messages must be 1 to 100000") }
    }

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench chat`\n".utf8))
        #endif
        let runs = self.runs
        let messages = self.messages
        let noCLI = self.noCLI
        let json = self.json
        try await BenchServer.withInProcessServer { port in
            let endpoint = ServerEndpoint(host: "127.0.0.1", port: port, useTLS: false)
            var inProcess: [Double] = []
            for _ in 0..<runs { inProcess.append(try await Self.firstMessageInProcess(endpoint)) }
            Self.emit(json, "first message, in-process (p50)", Self.percentile(inProcess, 0.5), "ms")
            Self.emit(json, "first message, in-process (p90)", Self.percentile(inProcess, 0.9), "ms")
            if !noCLI {
                var cli: [CLITiming] = []
                for _ in 0..<runs { cli.append(try await Self.firstMessageCLI(port: port)) }
                var starts: [Double] = []
                for _ in 0..<runs { starts.append(try Self.processStart()) }
                Self.emit(json, "first message, two CLI processes (p50)", Self.percentile(cli.map(\.total), 0.5), "ms", target: 30)
                Self.emit(json, "first message, two CLI processes (p90)", Self.percentile(cli.map(\.total), 0.9), "ms")
                Self.emit(json, "  invite: start → invite printed (p50)", Self.percentile(cli.map(\.invite), 0.5), "ms")
                Self.emit(json, "  join: start → first message (p50)", Self.percentile(cli.map(\.join), 0.5), "ms")
                Self.emit(json, "  one process start and exit, `inviso --help` (p50)", Self.percentile(starts, 0.5), "ms")
            }
            let unlimited = RelayTransport.Pacing(messagesPerSecond: 1e9, burst: 1e9)
            // Paced, a run takes messages / 40 seconds: the figure is the pacing, so 400 show it.
            let paced = try await Self.throughput(endpoint, messages: min(messages, 400), pacing: .serverDefault, path: .relay)
            Self.emit(json, "messages/s, relay, paced for the server's limits", paced, "msg/s")
            // The unpaced figures swing ±15 % from run to run on a shared host: the median of three.
            var unpaced: [Double] = []
            var direct: [Double] = []
            for _ in 0..<3 {
                unpaced.append(try await Self.throughput(endpoint, messages: messages, pacing: unlimited, path: .relay))
                direct.append(try await Self.throughput(endpoint, messages: messages, pacing: unlimited, path: .direct))
            }
            Self.emit(json, "messages/s, relay, unpaced (limits lifted)", Self.percentile(unpaced, 0.5), "msg/s")
            Self.emit(json, "messages/s, direct TCP", Self.percentile(direct, 0.5), "msg/s")
        }
    }

    // MARK: - Figures

    static func quietLogger() -> Logger {
        Logger(label: "inviso.bench.chat", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    static func pair(_ endpoint: ServerEndpoint, pacing: RelayTransport.Pacing, path: ChatPath) async throws -> (ChatClient, ChatClient) {
        var configuration = ChatClient.Configuration(server: endpoint)
        configuration.isEphemeral = true
        configuration.relayPacing = pacing
        // The figures are for this pacing, whatever the bench server announces.
        configuration.relayPacingFollowsServer = false
        if path == .relay {
            configuration.direct = nil
        } else {
            configuration.direct?.host = "127.0.0.1"
        }
        let alice = ChatClient(configuration: configuration, logger: quietLogger())
        let bob = ChatClient(configuration: configuration, logger: quietLogger())
        let invite = try await alice.invite()
        try await bob.join(invite.text)
        return (alice, bob)
    }

    /// Milliseconds from `invite()` to the joiner's first `.message`.
    static func firstMessageInProcess(_ endpoint: ServerEndpoint) async throws -> Double {
        let started = ContinuousClock.now
        var configuration = ChatClient.Configuration(server: endpoint)
        configuration.isEphemeral = true
        let alice = ChatClient(configuration: configuration, logger: quietLogger())
        let bob = ChatClient(configuration: configuration, logger: quietLogger())
        let invite = try await alice.invite()
        try await alice.send(text: "hello")
        try await bob.join(invite.text)
        for await event in bob.events {
            if case .message = event { break }
            if case .closed = event { throw CLIError("the session closed before the first message") }
        }
        let elapsed = ContinuousClock.now - started
        await bob.leave()
        await alice.leave()
        return milliseconds(elapsed)
    }

    /// Milliseconds from starting `inviso invite --json` to `inviso join --json` printing the
    /// creator's first message.
    /// Where the two-process figure's time goes.
    struct CLITiming {
        /// From starting `invite` to the joiner printing the first message.
        var total: Double
        /// From starting `invite` to its invite line (process start, REST create).
        var invite: Double
        /// From starting `join` to its first message (process start, REST accept, the
        /// signaling connection, the room, the pairing and the message).
        var join: Double
    }

    /// This `inviso` binary, which the two-process figures start.
    static var executable: URL { URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath() }

    /// Milliseconds to start `inviso --help` and see it exit: the floor of every CLI figure.
    static func processStart() throws -> Double {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--help"]
        process.standardOutput = FileHandle.nullDevice
        let started = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        return milliseconds(ContinuousClock.now - started)
    }

    static func firstMessageCLI(port: Int) async throws -> CLITiming {
        let binary = executable
        let server = "http://127.0.0.1:\(port)"
        let started = ContinuousClock.now
        let alice = try JSONProcess(binary, ["invite", "--json", "--ephemeral", "--server", server])
        defer { alice.terminate() }
        alice.write("hello\n")
        guard let invite = try await alice.next(where: { $0["event"] as? String == "invite" })?["invite"] as? String else {
            throw CLIError("invite printed no invite: \(alice.errors)")
        }
        let invited = ContinuousClock.now
        let bob = try JSONProcess(binary, ["join", invite, "--json", "--ephemeral", "--server", server])
        defer { bob.terminate() }
        guard try await bob.next(where: { $0["event"] as? String == "message" }) != nil else {
            throw CLIError("join printed no message: \(bob.errors)")
        }
        let done = ContinuousClock.now
        return CLITiming(
            total: milliseconds(done - started), invite: milliseconds(invited - started), join: milliseconds(done - invited))
    }

    /// Messages per second from the first send to the last acknowledgement, one message per
    /// `send` call.
    static func throughput(
        _ endpoint: ServerEndpoint, messages: Int, pacing: RelayTransport.Pacing, path: ChatPath
    ) async throws -> Double {
        let (alice, bob) = try await pair(endpoint, pacing: pacing, path: path)
        for await event in alice.events {
            if case .path(path) = event { break }
        }
        let started = ContinuousClock.now
        for index in 0..<messages { try await alice.send(text: "message \(index)") }
        var delivered = 0
        for await event in alice.events {
            if case .delivered = event { delivered += 1 }
            if delivered == messages { break }
        }
        let seconds = milliseconds(ContinuousClock.now - started) / 1_000
        await alice.leave()
        await bob.leave()
        return Double(messages) / seconds
    }

    // MARK: - Output

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }

    static func emit(_ json: Bool, _ name: String, _ value: Double, _ unit: String, target: Double? = nil) {
        if json {
            JSONLines.emit([
                "name": .string(name), "value": .double((value * 10).rounded() / 10), "unit": .string(unit),
                "target": target.map(JSONValue.double) ?? .null,
            ])
        } else {
            let figure = String(format: "%.1f", value)
            let padded = name + String(repeating: " ", count: max(1, 52 - name.count))
            JSONLines.emitLine(padded + figure + " " + unit + (target.map { String(format: "   (target ≤ %.0f)", $0) } ?? ""))
        }
    }
}

/// A child `inviso` process in `--json` mode whose output lines are read as they come.
/// Not `Sendable`: the one task that runs a benchmark owns it.
final class JSONProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errorPipe = Pipe()
    private var iterator: AsyncStream<String>.AsyncIterator

    init(_ binary: URL, _ arguments: [String]) throws {
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errorPipe
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let handle = output.fileHandleForReading
        Thread {
            var pending: [UInt8] = []
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending += data
                while let newline = pending.firstIndex(of: 10) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }.start()
        iterator = stream.makeAsyncIterator()
        try process.run()
    }

    func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// The next output object matching `predicate`, or `nil` when output ended first.
    func next(where predicate: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        while let line = await iterator.next() {
            if let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], predicate(object) {
                return object
            }
        }
        return nil
    }

    /// What the process wrote on standard error so far (after it ended).
    var errors: String {
        guard !process.isRunning else { return "" }
        return String(decoding: errorPipe.fileHandleForReading.availableData, as: UTF8.self)
    }

    func terminate() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
