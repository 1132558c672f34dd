import Foundation
import Testing
import InvisoTesting

/// `inviso nearby` in its full-screen mode on a real pseudo-terminal (`script` gives it
/// one), against a second `inviso nearby --json` on 127.0.0.1 without DNS-SD: the terminal
/// stream is replayed into ``TerminalModel`` and read back as a person would see it.
@Suite("inviso nearby full screen", .timeLimit(.minutes(3)))
struct NearbyScreenCLITests {
    /// Replays `process`'s output until the 24 × 80 screen satisfies `predicate`.
    static func screen(
        of process: ChildProcess, timeout: TimeInterval = 20, _ predicate: (TerminalModel) -> Bool
    ) async -> TerminalModel? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            var terminal = TerminalModel(rows: 24, columns: 80)
            terminal.play(String(decoding: process.standardOutput, as: UTF8.self))
            if predicate(terminal) { return terminal }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    static func text(_ terminal: TerminalModel) -> String { (0..<24).map(terminal.line).joined(separator: "\n") }

    @Test("people pane, conversation with delivery marks, safety number with its QR code, status line")
    func fullScreen() async throws {
        let binary = try NoiseInteropTests.invisoBinary()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-screen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let environment = ["AVAHI_COMPAT_NOWARN": "1", "TERM": "xterm"]
        let bob = try ChildProcess(
            binary, ["nearby", "--name", "bob", "--data", root.appendingPathComponent("bob").path, "--no-discovery", "--json"],
            environment: environment)
        defer { bob.kill() }
        let ready = try #require(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "ready" }, "\(bob.transcript)")
        let port = try #require(ready["port"] as? Int)
        let command = [binary.path, "nearby", "--name", "alice", "--data", root.appendingPathComponent("alice").path,
                       "--no-discovery", "--peer", "127.0.0.1:\(port)"].map { "'\($0)'" }.joined(separator: " ")
        let alice = try ChildProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qfec", command, "/dev/null"], environment: environment)
        defer { alice.kill() }

        try #require(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "request" } != nil, "\(bob.transcript)")
        bob.write("/accept alice\n")
        let connected = await Self.screen(of: alice) { $0.line(1).contains("bob") && $0.line(0).contains("bob · known") }
        try #require(connected != nil, "\(alice.transcript)")

        alice.write("hello bob, a line long enough to wrap at a word boundary inside the conversation pane\r")
        try #require(await bob.waitForEvent(timeout: 20) { $0["event"] as? String == "message" } != nil)
        bob.write("/msg alice hi alice\n")
        let chatted = await Self.screen(of: alice) { terminal in
            let all = Self.text(terminal)
            return all.contains("bob: hi alice") && all.contains("✓ delivered")
        }
        let chat = try #require(chatted, "\(alice.transcript)")
        let width = 21  // the people pane (80 / 4 = 20) and its divider
        let pane = (0..<22).map { String(chat.line($0).dropFirst(width)) }
        let mine = try #require(pane.firstIndex { $0.contains("you: hello bob") })
        #expect(pane[mine + 1].hasPrefix("   ") && pane[mine + 1].contains("✓ delivered"))
        #expect((0..<22).allSatisfy { Array(chat.grid[$0])[20] == "│" })
        #expect(chat.line(1).hasPrefix("▸●bob"))
        #expect(chat.line(2).contains(try #require(ready["fingerprint"] as? String)))
        #expect(chat.line(22).hasPrefix("alice ") && chat.line(22).contains("1 connected"))

        alice.write("/verify\r")
        let verified = await Self.screen(of: alice) { Self.text($0).contains("After comparing: /verified bob") }
        let qr = try #require(verified, "\(alice.transcript)")
        #expect(Self.text(qr).contains("████"))

        alice.write("/quit\r")
        #expect(await alice.waitForExit(timeout: 20) == 0, "\(alice.transcript)")
        bob.write("/quit\n")
        #expect(await bob.waitForExit(timeout: 20) == 0)
    }
}
