import ArgumentParser
import Foundation

/// `inviso bench send`: `inviso send` / `inviso receive` of one file over loopback, on the
/// relay and on the direct path, beside a plain TCP copy of the same bytes in the same run.
struct BenchSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Benchmark inviso send / receive against a plain TCP copy, on the relay and the direct path.",
        discussion: """
            Starts `inviso serve`'s server in this process (relay limits lifted), writes --mib \
            MiB of random bytes, and times a plain TCP copy of them over loopback (read, sent, \
            written), then `inviso send FILE --json` and `inviso receive INVITE --json` as two \
            processes of this binary, from starting `receive` to its `file_received` event \
            (pairing included; the file is hashed by both sides and checked): once with \
            --no-direct (through the server's relay), once on the direct path. The median of \
            --rounds rounds. Targets: direct ≥ 0.5 × the plain copy, relay ≥ 0.3 ×. Also prints \
            one SHA-256 pass over the file against the same plain copy (each side makes one: no \
            transfer can beat that ratio).
            """)

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "MiB to send.")
    var mib = 200

    @Option(help: "Rounds; each figure is their median.")
    var rounds = 3

    func validate() throws {
        guard (1...4_096).contains(mib) else { throw ValidationError("--mib must be 1 to 4096") }
        guard (1...20).contains(rounds) else { throw ValidationError("--rounds must be 1 to 20") }
    }

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use the release binary (scripts/install.sh)\n".utf8))
        #endif
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-bench-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("payload.bin")
        try BenchNearby.noise(count: mib << 20).write(to: source)
        let report = BenchReport(json: json)
        let mib = Double(self.mib)
        let rounds = self.rounds
        try await BenchServer.withInProcessServer { port in
            let url = "http://127.0.0.1:\(port)"
            var plain: [Double] = []
            var relay: [Double] = []
            var direct: [Double] = []
            var hash: [Double] = []
            for round in 0..<rounds {
                plain.append(try BenchNearby.plainCopy(source, to: root.appendingPathComponent("copy.bin")))
                relay.append(try await Self.transfer(source, url: url, into: root.appendingPathComponent("r\(round)"), relay: true))
                direct.append(try await Self.transfer(source, url: url, into: root.appendingPathComponent("d\(round)"), relay: false))
                hash.append(try BenchNearby.hashTime(source))
            }
            let baseline = BenchNearby.median(plain)
            report.header()
            for (name, times) in [("send/receive \(Int(mib)) MiB, direct path (target ≥ 0.5)", direct),
                                  ("send/receive \(Int(mib)) MiB, relay (target ≥ 0.3)", relay)] {
                let time = BenchNearby.median(times)
                report.emit(BenchResult(name: name, value: mib / time, unit: "MiB/s", baseline: mib / baseline, ratio: baseline / time))
            }
            let hashed = BenchNearby.median(hash)
            report.emit(BenchResult(
                name: "  one SHA-256 pass over the file (each side makes one)", value: mib / hashed, unit: "MiB/s",
                baseline: mib / baseline, ratio: baseline / hashed))
        }
    }

    /// Seconds from starting `receive` to its `file_received`, the file checked.
    static func transfer(_ source: URL, url: String, into downloads: URL, relay: Bool) async throws -> Double {
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: downloads) }
        let flags = relay ? ["--no-direct"] : []
        let sender = try JSONProcess(BenchChat.executable, ["send", source.path, "--json", "--server", url] + flags)
        defer { sender.terminate() }
        guard let invite = try await sender.next(where: { $0["event"] as? String == "invite" })?["invite"] as? String else {
            throw CLIError("inviso send printed no invite: \(sender.errors)")
        }
        let started = ContinuousClock.now
        let receiver = try JSONProcess(
            BenchChat.executable, ["receive", invite, "--json", "--server", url, "--downloads", downloads.path] + flags)
        defer { receiver.terminate() }
        guard try await receiver.next(where: { $0["event"] as? String == "file_received" }) != nil else {
            throw CLIError("inviso receive did not receive the file: \(receiver.errors)")
        }
        return BenchNearby.seconds(ContinuousClock.now - started)
    }
}
