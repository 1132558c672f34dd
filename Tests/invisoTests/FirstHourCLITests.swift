import Foundation
import InvisoTesting
import Testing

/// What a new user meets first (issue 20, "First hour"): the version, help texts that say
/// each default once and offer only what a command takes, and a taken port reported in one
/// line before anything is written to disk.
@Suite("inviso: the first hour")
struct FirstHourCLITests {
    /// Runs the binary to completion; returns its status and everything it printed.
    static func run(_ arguments: [String]) async throws -> (Int32?, String) {
        let process = try ChildProcess(try NoiseInteropTests.invisoBinary(), arguments)
        let status = await process.waitForExit(timeout: 30)
        return (status, process.transcript)
    }

    @Test func versionIsPrinted() async throws {
        let (status, output) = try await Self.run(["--version"])
        #expect(status == 0)
        #expect(output.contains("0.19.0"), "\(output)")
    }

    /// What `scripts/man.sh` (the generate-manual plugin) reads: every command, described.
    @Test func theManualSourceDescribesEveryCommand() async throws {
        let process = try ChildProcess(try NoiseInteropTests.invisoBinary(), ["--experimental-dump-help"])
        #expect(await process.waitForExit(timeout: 30) == 0)
        let stdout = String(decoding: process.standardOutput, as: UTF8.self)
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        let command = try #require(dump["command"] as? [String: Any])
        let names = Set((command["subcommands"] as? [[String: Any]] ?? []).compactMap { $0["commandName"] as? String })
        #expect(names.isSuperset(of: ["invite", "join", "resume", "history", "sessions", "nearby", "serve"]), "\(names)")
    }

    @Test(arguments: ["invite", "join", "resume"])
    func helpSaysEachDefaultOnceAndOffersWhatTheCommandTakes(_ command: String) async throws {
        let (status, help) = try await Self.run([command, "--help"])
        #expect(status == 0)
        let flat = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(!flat.contains("(default 30)") && !flat.contains("(default 5m"), "\(help)")
        #expect(flat.contains("--linger <linger> Seconds to wait, after end of input, for the peer to acknowledge what was sent. (default: 30)"))
        #expect(flat.contains("--no-unicode"))
        // A resumed session already has its name and is stored: nothing to offer there.
        #expect(flat.contains("--ephemeral") == (command != "resume"))
        #expect(flat.contains("--name <name>") == (command != "resume"))
        if command == "invite" { #expect(flat.contains("s, m, h or d")) }
    }

    @Test func aResumeWithInviteOnlyOptionsIsRefusedByTheParser() async throws {
        let (status, output) = try await Self.run(["resume", "abcd", "--ephemeral"])
        #expect(status != 0)
        #expect(output.contains("Unknown option '--ephemeral'"), "\(output)")
    }

    /// A port another program holds: one line that says so, a failure status, and no data
    /// directory left behind.
    @Test func aTakenPortIsOneLineAndWritesNothing() async throws {
        let held = try LoopbackSocket(listening: true)
        defer { held.close() }
        let port = held.port
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-taken-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }

        let (status, output) = try await Self.run(["serve", "--host", "127.0.0.1", "--port", "\(port)", "--data", data.path])
        #expect(status == 1)
        let stderr = output.components(separatedBy: "stderr:\n").last ?? ""
        let lines = stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("error: port \(port) on 127.0.0.1 is already in use") == true, "\(output)")
        #expect(!FileManager.default.fileExists(atPath: data.path))
    }
}
