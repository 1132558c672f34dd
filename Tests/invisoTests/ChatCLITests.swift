import Foundation
import Testing
import InvisoTesting

/// `inviso invite --json` and `inviso join --json` as two processes against `inviso serve`,
/// all on 127.0.0.1: pairing, messages both ways with delivery, leaving, and what is left
/// on disk.
@Suite("inviso invite / join", .timeLimit(.minutes(6)))
struct ChatCLITests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Starts `inviso serve` on a free port; returns it and its URL.
    static func startServer(_ binary: URL, data: URL) async throws -> (ChildProcess, String) {
        let server = try ChildProcess(
            binary, ["serve", "--log-level", "trace"],
            environment: ["INVISO_PORT": "0", "INVISO_DATA": data.path, "INVISO_HOST": "127.0.0.1"])
        let listening = try #require(
            await server.waitForEvent(timeout: 60) { $0["event"] as? String == "listening" }, "\(server.transcript)")
        return (server, try #require(listening["url"] as? String))
    }

    /// The binary, a temporary root directory and a server on a free port.
    static func setUp() async throws -> (URL, URL, ChildProcess, String) {
        let binary = try NoiseInteropTests.invisoBinary()
        let root = try temporaryDirectory()
        let (server, url) = try await startServer(binary, data: root.appendingPathComponent("server"))
        return (binary, root, server, url)
    }

    static func tearDown(_ root: URL, _ server: ChildProcess) {
        server.kill()
        try? FileManager.default.removeItem(at: root)
    }

    /// `inviso invite --json` with `arguments`, and its `invite` event.
    static func invite(_ binary: URL, _ url: String, _ arguments: [String]) async throws -> (ChildProcess, [String: Any]) {
        let process = try ChildProcess(binary, ["invite", "--json", "--server", url] + arguments)
        let invite = await process.waitForEvent(timeout: 60) { $0["event"] as? String == "invite" }
        guard let invite else {
            process.kill()
            throw CLITestFailure("no invite event: \(process.transcript)")
        }
        return (process, invite)
    }

    @Test("v2: invite and join pair verified, 50 messages each way arrive in order and are delivered, EOF leaves")
    func inviteAndJoin() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let aliceData = root.appendingPathComponent("alice").path
        let bobData = root.appendingPathComponent("bob").path
        let (alice, invite) = try await Self.invite(binary, url, ["--data", aliceData, "--name", "bob"])
        defer { alice.kill() }
        let inviteText = try #require(invite["invite"] as? String)
        let code = try #require(invite["code"] as? String)
        #expect(inviteText.hasPrefix(code + "-") && inviteText.split(separator: "-").count == 4)
        // The test server is not the default one: the link names it, so a peer who only
        // has the link reaches the same server.
        let encodedServer = try #require(url.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))))
        #expect(invite["link"] as? String
            == "inviso://join/\(code)?server=\(encodedServer)#" + inviteText.split(separator: "-").dropFirst().joined(separator: "-"))

        let bob = try ChildProcess(binary, ["join", inviteText, "--json", "--server", url, "--data", bobData])
        defer { bob.kill() }
        for process in [alice, bob] {
            let connected = try #require(
                await process.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(process.transcript)")
            #expect(connected["protocol"] as? String == "v2")
            #expect(connected["verified"] as? Bool == true)
            #expect(["relay", "direct"].contains(connected["path"] as? String))
        }
        let fromAlice = (1...50).map { "alice says \($0) — ünïcødé 👋" }
        let fromBob = (1...50).map { "bob says \($0)" }
        for line in fromAlice { alice.write(line + "\n") }
        for line in fromBob { bob.write(line + "\n") }
        #expect(await bob.waitForMessageTexts(count: 50) == fromAlice, "\(bob.transcript)")
        #expect(await alice.waitForMessageTexts(count: 50) == fromBob, "\(alice.transcript)")
        // Every message sent got an id and was acknowledged.
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, alice.events.filter({ $0["event"] as? String == "delivered" }).count < 50 {
            try await Task.sleep(for: .milliseconds(50))
        }
        let sent = alice.events.filter { $0["event"] as? String == "sent" }.compactMap { $0["id"] as? Int }
        let delivered = alice.events.filter { $0["event"] as? String == "delivered" }.compactMap { $0["id"] as? Int }
        #expect(sent == Array(1...50))
        #expect(Set(delivered) == Set(1...50))

        // End of Bob's input: Bob leaves once all is acknowledged; Alice hears it.
        bob.closeInput()
        #expect(await bob.waitForExit(timeout: 60) == 0, "\(bob.transcript)")
        #expect(bob.events.last?["event"] as? String == "closed")
        #expect(bob.events.last?["reason"] as? String == "left")
        let closed = await alice.waitForEvent(timeout: 60) { $0["event"] as? String == "closed" }
        #expect(closed?["reason"] as? String == "peerLeft")
        #expect(await alice.waitForExit(timeout: 30) == 0, "\(alice.transcript)")

        // The stores hold the session, and no plaintext.
        for directory in [aliceData, bobData] {
            for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(file))
                #expect(bytes.range(of: Data("alice says".utf8)) == nil, "\(file)")
                #expect(bytes.range(of: Data("bob says".utf8)) == nil, "\(file)")
            }
        }
        // The server's log of the whole session, at its most verbose, holds no message text.
        #expect(!server.transcript.contains("says"), "\(server.transcript)")
        let list = try ChildProcess(binary, ["sessions", "--json", "--data", aliceData])
        #expect(await list.waitForExit(timeout: 30) == 0, "\(list.transcript)")
        let sessions = try #require(list.events.first?["sessions"] as? [[String: Any]], "\(list.transcript)")
        #expect(sessions.count == 1 && sessions.first?["name"] as? String == "bob")
        // Deleting it locally also has the server purge its device.
        let id = try #require(sessions.first?["id"] as? String)
        let delete = try ChildProcess(binary, ["sessions", "delete", id, "--json", "--yes", "--data", aliceData])
        #expect(await delete.waitForExit(timeout: 60) == 0, "\(delete.transcript)")
        #expect(
            delete.events.first?["server"] as? String == "purged",
            "\(delete.transcript)\nserver (running: \(server.isRunning)):\n\(server.transcript.suffix(4_000))")
    }

    @Test("resume: a killed chat process is resumed from its store; nothing lost or repeated, still verified")
    func resumeAfterKill() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let aliceData = root.appendingPathComponent("alice").path
        let (alice, invite) = try await Self.invite(binary, url, ["--data", aliceData])
        defer { alice.kill() }
        // Bob has only the link: it names the server (no --server given).
        let link = try #require(invite["link"] as? String)
        let bob = try ChildProcess(binary, ["join", link, "--json", "--ephemeral"])
        defer { bob.kill() }
        for process in [alice, bob] {
            _ = try #require(
                await process.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(process.transcript)")
        }
        alice.write("a1\n")
        bob.write("b1\n")
        #expect(await bob.waitForMessageTexts(count: 1) == ["a1"], "\(bob.transcript)")
        #expect(await alice.waitForMessageTexts(count: 1) == ["b1"], "\(alice.transcript)")
        for process in [alice, bob] {
            _ = try #require(
                await process.waitForEvent(timeout: 60) { $0["event"] as? String == "delivered" }, "\(process.transcript)")
        }
        alice.kill()  // SIGKILL: no leave, the stored state stays
        // Bob is told alice's connection dropped, and that his messages wait for her.
        let away = await bob.waitForEvent(timeout: 60) { $0["event"] as? String == "presence" }
        #expect(away?["online"] as? Bool == false, "\(bob.transcript)")
        bob.write("b2\n")

        let list = try ChildProcess(binary, ["sessions", "--json", "--data", aliceData])
        #expect(await list.waitForExit(timeout: 30) == 0, "\(list.transcript)")
        let sessions = try #require(list.events.first?["sessions"] as? [[String: Any]], "\(list.transcript)")
        let id = try #require(sessions.first?["id"] as? String)
        // A unique prefix of the id, and no --server: the session's own server.
        let resumed = try ChildProcess(binary, ["resume", String(id.prefix(8)), "--json", "--data", aliceData])
        defer { resumed.kill() }
        let connected = try #require(
            await resumed.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(resumed.transcript)")
        #expect(connected["protocol"] as? String == "v2" && connected["verified"] as? Bool == true)
        resumed.write("a2\n")
        #expect(await bob.waitForMessageTexts(count: 2) == ["a1", "a2"], "\(bob.transcript)")
        let back = await bob.waitForEvent(timeout: 60) { $0["event"] as? String == "presence" && $0["online"] as? Bool == true }
        #expect(back != nil, "\(bob.transcript)")
        #expect(await resumed.waitForMessageTexts(count: 1) == ["b2"], "\(resumed.transcript)")
        let sent = try #require(
            await resumed.waitForEvent(timeout: 60) { $0["event"] as? String == "sent" }, "\(resumed.transcript)")
        #expect(sent["id"] as? Int == 2)

        bob.closeInput()
        #expect(await bob.waitForExit(timeout: 60) == 0, "\(bob.transcript)")
        let closed = await resumed.waitForEvent(timeout: 60) { $0["event"] as? String == "closed" }
        #expect(closed?["reason"] as? String == "peerLeft", "\(resumed.transcript)")
        #expect(await resumed.waitForExit(timeout: 30) == 0, "\(resumed.transcript)")
        #expect(resumed.messageTexts == ["b2"] && bob.messageTexts == ["a1", "a2"])
    }

    @Test("v1: a bare six-digit code joins unverified with a warning; messages flow both ways")
    func bareCodeIsV1() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral"])
        defer { alice.kill() }
        let code = try #require(invite["code"] as? String)
        let bob = try ChildProcess(binary, ["join", code, "--json", "--ephemeral", "--server", url])
        defer { bob.kill() }
        #expect(await bob.waitForEvent(timeout: 60) { $0["event"] as? String == "warning" } != nil, "\(bob.transcript)")
        for process in [alice, bob] {
            let connected = try #require(
                await process.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(process.transcript)")
            #expect(connected["protocol"] as? String == "v1")
            #expect(connected["verified"] as? Bool == false)
        }
        alice.write("over v1\n")
        bob.write("back over v1\n")
        #expect(await bob.waitForMessageTexts(count: 1) == ["over v1"], "\(bob.transcript)")
        #expect(await alice.waitForMessageTexts(count: 1) == ["back over v1"], "\(alice.transcript)")
        alice.closeInput()
        #expect(await alice.waitForExit(timeout: 60) == 0, "\(alice.transcript)")
        #expect(await bob.waitForEvent(timeout: 60) { $0["event"] as? String == "closed" }?["reason"] as? String == "peerLeft")
        #expect(await bob.waitForExit(timeout: 30) == 0, "\(bob.transcript)")
    }

    @Test("a wrong invite word fails the pairing on both sides with a clear error and exit status 1")
    func wrongWords() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral"])
        defer { alice.kill() }
        var words = try #require(invite["invite"] as? String).split(separator: "-").map(String.init)
        words[3] = words[3] == "zoo" ? "abandon" : "zoo"
        // Bob reads plain text: one sentence with what to do, not nested error texts.
        let bob = try ChildProcess(binary, ["join", words.joined(separator: "-"), "--ephemeral", "--server", url])
        defer { bob.kill() }
        #expect(await Self.waitForLine(bob, containing: "* pairing failed: the invite's words did not match"), "\(bob.transcript)")
        #expect(await bob.waitForExit(timeout: 60) == 1, "\(bob.transcript)")
        let plain = String(decoding: bob.standardOutput, as: UTF8.self)
        #expect(plain.components(separatedBy: "pairing failed").count == 2 && plain.contains("Ask your peer for a new invite."), "\(plain)")
        for process in [alice] {
            let error = await process.waitForEvent(timeout: 90) { $0["event"] as? String == "error" }
            #expect(error != nil, "\(process.transcript)")
            #expect(await process.waitForExit(timeout: 60) == 1, "\(process.transcript)")
            #expect(process.events.last?["reason"] as? String == "pairingFailed", "\(process.transcript)")
        }
    }

    /// Waits until `process` printed a line containing `text` (plain mode); returns whether it did.
    static func waitForLine(_ process: ChildProcess, containing text: String, timeout: TimeInterval = 60) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if String(decoding: process.standardOutput, as: UTF8.self).contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("plain mode: // sends a slash, a leading space is text, lifetimes read as sentences, /leave asks once, reasons are sentences")
    func plainModeReadsLikeSentences() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let alice = try ChildProcess(binary, ["invite", "--server", url, "--data", root.appendingPathComponent("alice").path])
        defer { alice.kill() }
        #expect(await Self.waitForLine(alice, containing: "Your peer runs: inviso join "), "\(alice.transcript)")
        #expect(await Self.waitForLine(alice, containing: " --server \(url)\n"), "\(alice.transcript)")
        let printed = String(decoding: alice.standardOutput, as: UTF8.self)
        let invite = try #require(printed.split(separator: "\n").first { $0.hasPrefix("Invite: ") }?.dropFirst("Invite: ".count))
        let bob = try ChildProcess(binary, ["join", String(invite), "--server", url, "--data", root.appendingPathComponent("bob").path])
        defer { bob.kill() }
        for process in [alice, bob] { #expect(await Self.waitForLine(process, containing: "* connected"), "\(process.transcript)") }

        bob.write("//slash at the start\n")
        bob.write(" /help is text here\n")
        #expect(await Self.waitForLine(alice, containing: "peer: /slash at the start"), "\(alice.transcript)")
        #expect(await Self.waitForLine(alice, containing: "peer:  /help is text here"), "\(alice.transcript)")

        bob.write("/lifetime ephemeral\n")
        #expect(await Self.waitForLine(bob, containing: "* proposed that messages are not kept"), "\(bob.transcript)")
        #expect(await Self.waitForLine(alice, containing: "* your peer proposes that messages are not kept: /accept or /reject"))
        alice.write("/reject\n")
        #expect(await Self.waitForLine(bob, containing: "* your peer rejected the proposed lifetime"), "\(bob.transcript)")

        bob.write("/leave\n")
        #expect(await Self.waitForLine(bob, containing: "/leave again to end this chat for good"), "\(bob.transcript)")
        bob.write("/leave\n")
        #expect(await Self.waitForLine(bob, containing: "* you left the chat"), "\(bob.transcript)")
        #expect(await Self.waitForLine(alice, containing: "* your peer left the chat"), "\(alice.transcript)")
        #expect(await bob.waitForExit(timeout: 30) == 0, "\(bob.transcript)")
        #expect(await alice.waitForExit(timeout: 30) == 0, "\(alice.transcript)")
        for process in [alice, bob] {
            let output = String(decoding: process.standardOutput, as: UTF8.self)
            #expect(!output.contains("[lifetime change]") && !output.contains("closed: ") && !output.contains("after ephemeral"), "\(output)")
        }
    }

    @Test("v1 in plain mode: told plainly it is unverified; /verified after comparing marks it verified in the store")
    func v1CanBeMarkedVerified() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral"])
        defer { alice.kill() }
        let bobData = root.appendingPathComponent("bob").path
        let bob = try ChildProcess(binary, ["join", try #require(invite["code"] as? String), "--server", url, "--data", bobData])
        defer { bob.kill() }
        #expect(await Self.waitForLine(bob, containing: "* this chat is encrypted but not verified"), "\(bob.transcript)")
        bob.write("/verify\n")
        #expect(await Self.waitForLine(bob, containing: "over another channel, then /verified"), "\(bob.transcript)")
        // The number's rows are lines of their own, not joined by replacement characters.
        #expect(!String(decoding: bob.standardOutput, as: UTF8.self).contains("\u{FFFD}"), "\(bob.transcript)")
        bob.write("/verified\n")
        #expect(await Self.waitForLine(bob, containing: "* marked verified"), "\(bob.transcript)")
        let list = try ChildProcess(binary, ["sessions", "--json", "--data", bobData])
        #expect(await list.waitForExit(timeout: 30) == 0, "\(list.transcript)")
        let sessions = try #require(list.events.first?["sessions"] as? [[String: Any]], "\(list.transcript)")
        #expect(sessions.first?["verified"] as? Bool == true && sessions.first?["protocol"] as? String == "v1", "\(sessions)")
    }

    @Test("--json: commands as JSON objects, every event with the session id, errors as JSON")
    func jsonCommands() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral"])
        defer { alice.kill() }
        let aliceSession = try #require(invite["session"] as? String, "\(invite)")
        let bob = try ChildProcess(binary, ["join", try #require(invite["invite"] as? String), "--json", "--ephemeral", "--server", url])
        defer { bob.kill() }
        for process in [alice, bob] {
            _ = try #require(await process.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(process.transcript)")
        }
        // A second joiner with the same invite is told it was used, not that it expired.
        let carol = try ChildProcess(binary, ["join", try #require(invite["invite"] as? String), "--json", "--ephemeral", "--server", url])
        defer { carol.kill() }
        let used = try #require(await carol.waitForEvent(timeout: 60) { $0["event"] as? String == "error" }, "\(carol.transcript)")
        #expect((used["error"] as? String)?.contains("already used") == true && !((used["error"] as? String)?.contains("expired") ?? true), "\(used)")
        #expect(await carol.waitForExit(timeout: 30) == 1)
        alice.write(#"{"command":"verify"}"# + "\n")
        bob.write(#"{"command":"verify"}"# + "\n")
        let aliceNumber = try #require(await alice.waitForEvent(timeout: 30) { $0["event"] as? String == "safety_number" })
        let bobNumber = try #require(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "safety_number" })
        #expect((aliceNumber["digits"] as? String)?.count == 60 && aliceNumber["digits"] as? String == bobNumber["digits"] as? String)
        bob.write(#"{"command":"lifetime","lifetime":"7d"}"# + "\n")
        #expect(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "lifetime_sent" } != nil, "\(bob.transcript)")
        #expect(await alice.waitForEvent(timeout: 30) { $0["event"] as? String == "lifetime_proposed" } != nil, "\(alice.transcript)")
        alice.write(#"{"command":"reject"}"# + "\n")
        #expect(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "lifetime_rejected" } != nil, "\(bob.transcript)")
        bob.write(#"{"command":"teleport"}"# + "\n")
        let error = try #require(await bob.waitForEvent(timeout: 30) { $0["event"] as? String == "error" }, "\(bob.transcript)")
        #expect((error["error"] as? String)?.contains("unknown command teleport") == true)
        bob.write(#"{"text":"{\"command\":\"verify\"} is just text"}"# + "\n")
        #expect(await alice.waitForMessageTexts(count: 1) == [#"{"command":"verify"} is just text"#], "\(alice.transcript)")
        bob.write(#"{"command":"leave"}"# + "\n")
        #expect(await bob.waitForExit(timeout: 30) == 0, "\(bob.transcript)")
        // Every event carries its session id: the same one on alice's side throughout.
        let bobSession = try #require(bob.events.first { $0["event"] as? String == "connected" }?["session"] as? String)
        for event in bob.events { #expect(event["session"] as? String == bobSession, "\(event)") }
        for event in alice.events { #expect(event["session"] as? String == aliceSession, "\(event)") }
        #expect(!alice.events.contains { $0["kind"] as? String == "lifetime" })
    }

    @Test("on a terminal, an invite that expires ends on a line of its own: the spinner erased itself first")
    func spinnerIsErasedBeforeTheLastLine() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let command = [binary.path, "invite", "--expires", "2s", "--ephemeral", "--server", url].map { "'\($0)'" }.joined(separator: " ")
        let alice = try ChildProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qfec", command, "/dev/null"], environment: ["TERM": "xterm"])
        defer { alice.kill() }
        _ = await alice.waitForExit(timeout: 60)
        var terminal = TerminalModel(rows: 60, columns: 100)
        terminal.play(String(decoding: alice.standardOutput, as: UTF8.self))
        let lines = (0..<60).map(terminal.line)
        let end = try #require(lines.first { $0.contains("the invite expired") }, "\(lines.joined(separator: "\n"))")
        #expect(end.hasPrefix("* the invite expired"), "\(end)")
        #expect(!lines.contains { $0.contains("waiting for your peer") && $0.contains("expired") })
    }

    @Test("--as: the name a peer chose travels inside the channel, labels its messages and names the joiner's session")
    func peerNames() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral", "--as", "Alice"])
        defer { alice.kill() }
        let bobData = root.appendingPathComponent("bob").path
        let bob = try ChildProcess(binary, ["join", try #require(invite["invite"] as? String), "--server", url, "--data", bobData])
        defer { bob.kill() }
        _ = try #require(await alice.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(alice.transcript)")
        alice.write("hello from alice\n")
        #expect(await Self.waitForLine(bob, containing: "* your peer's name is Alice"), "\(bob.transcript)")
        #expect(await Self.waitForLine(bob, containing: "Alice: hello from alice"), "\(bob.transcript)")
        // The message numbers the user sees are not shifted by the name's frame on the
        // receiving side; the name is not a stored message.
        bob.closeInput()
        #expect(await bob.waitForExit(timeout: 60) == 0, "\(bob.transcript)")
        let list = try ChildProcess(binary, ["sessions", "--json", "--data", bobData])
        #expect(await list.waitForExit(timeout: 30) == 0, "\(list.transcript)")
        let session = try #require((list.events.first?["sessions"] as? [[String: Any]])?.first, "\(list.transcript)")
        #expect(session["name"] as? String == "Alice" && session["peer"] as? String == "Alice" && session["messages"] as? Int == 1, "\(session)")
    }

    @Test("Ctrl-C (SIGINT) detaches: the chat is kept, the closing line says how to resume, and resume works")
    func interruptDetaches() async throws {
        let (binary, root, server, url) = try await Self.setUp()
        defer { Self.tearDown(root, server) }
        let (alice, invite) = try await Self.invite(binary, url, ["--ephemeral"])
        defer { alice.kill() }
        let bobData = root.appendingPathComponent("bob").path
        let bob = try ChildProcess(binary, ["join", try #require(invite["invite"] as? String), "--server", url, "--data", bobData])
        defer { bob.kill() }
        #expect(await Self.waitForLine(bob, containing: "* connected"), "\(bob.transcript)")
        _ = try #require(await alice.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(alice.transcript)")
        bob.signal(SIGINT)
        #expect(await Self.waitForLine(bob, containing: "* detached; the chat is kept: continue it with inviso resume "), "\(bob.transcript)")
        #expect(await bob.waitForExit(timeout: 30) == 0, "\(bob.transcript)")
        // Alice still waits: bob did not leave. He comes back and says hello.
        let resumed = try ChildProcess(binary, ["resume", "--json", "--data", bobData] + [
            try #require(String(decoding: bob.standardOutput, as: UTF8.self).components(separatedBy: "inviso resume ").last?
                .trimmingCharacters(in: .whitespacesAndNewlines)),
        ])
        defer { resumed.kill() }
        _ = try #require(await resumed.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(resumed.transcript)")
        resumed.write("back again\n")
        #expect(await alice.waitForMessageTexts(count: 1) == ["back again"], "\(alice.transcript)")
    }
}

struct CLITestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
