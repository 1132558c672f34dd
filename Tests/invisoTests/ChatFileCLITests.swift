import Crypto
import Foundation
import Testing
import InvisoTesting

/// Files in a chat and the one-shot `inviso send` / `inviso receive`, as processes against
/// `inviso serve` on 127.0.0.1: over the direct path and over the relay, with either side
/// killed mid-way and resumed, the SHA-256 checked, hostile names kept inside the
/// downloads folder. (`scripts/files-acceptance.sh` runs the same with 200 MiB files on the
/// release binary in CI.)
@Suite("files in a chat, inviso send / receive", .timeLimit(.minutes(6)))
struct ChatFileCLITests {
    /// The size of the files killed mid-way (MiB).
    static let mib = 24

    /// A server whose relay limits are lifted (files at loopback speed).
    static func fastServer(_ binary: URL, data: URL) async throws -> (ChildProcess, String) {
        let server = try ChildProcess(
            binary, ["serve", "--relay-rate", "1000", "--message-rate", "100000"],
            environment: ["INVISO_PORT": "0", "INVISO_DATA": data.path, "INVISO_HOST": "127.0.0.1"])
        let listening = try #require(
            await server.waitForEvent(timeout: 60) { $0["event"] as? String == "listening" }, "\(server.transcript)")
        return (server, try #require(listening["url"] as? String))
    }

    static func randomFile(_ url: URL, mib: Int) throws -> String {
        var state = UInt64.random(in: .min ... .max)
        var data = Data(count: mib << 20)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices {
                state &+= 0x9E37_79B9_7F4A_7C15
                var word = state
                word = (word ^ (word >> 30)) &* 0xBF58_476D_1CE4_E5B9
                words[index] = word ^ (word >> 27)
            }
        }
        try data.write(to: url)
        return Self.sha256(data)
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    static func sha256(of url: URL) throws -> String { sha256(try Data(contentsOf: url)) }

    static func event(_ process: ChildProcess, _ name: String, timeout: TimeInterval = 120) async -> [String: Any]? {
        await process.waitForEvent(timeout: timeout) { $0["event"] as? String == name }
    }

    /// Waits until `process` reports at least `bytes` of the transfer.
    static func progress(_ process: ChildProcess, atLeast bytes: Int) async -> Bool {
        await process.waitForEvent(timeout: 120) {
            $0["event"] as? String == "file_progress" && ($0["bytes"] as? Int ?? 0) >= bytes
        } != nil
    }

    /// Alice invites, Bob joins (both stored); both connected.
    static func pair(
        _ binary: URL, _ url: String, root: URL, extra: [String]
    ) async throws -> (alice: ChildProcess, bob: ChildProcess, aliceData: String, bobData: String, downloads: URL) {
        let aliceData = root.appendingPathComponent("alice").path
        let bobData = root.appendingPathComponent("bob").path
        let downloads = root.appendingPathComponent("downloads")
        let (alice, invite) = try await ChatCLITests.invite(binary, url, ["--data", aliceData] + extra)
        let bob = try ChildProcess(
            binary, ["join", try #require(invite["invite"] as? String), "--json", "--server", url, "--data", bobData,
                     "--downloads", downloads.path] + extra)
        for process in [alice, bob] {
            _ = try #require(await Self.event(process, "connected"), "\(process.transcript)")
        }
        return (alice, bob, aliceData, bobData, downloads)
    }

    static func sessionID(_ process: ChildProcess) throws -> String {
        try #require(process.events.first { $0["session"] != nil }?["session"] as? String)
    }

    @Test("direct path: the receiver killed mid-way resumes the file from its partial copy; hash equal")
    func receiverKilledOnTheDirectPath() async throws {
        let binary = try NoiseInteropTests.invisoBinary()
        let root = try ChatCLITests.temporaryDirectory()
        let (server, url) = try await Self.fastServer(binary, data: root.appendingPathComponent("server"))
        defer { ChatCLITests.tearDown(root, server) }
        let source = root.appendingPathComponent("big.bin")
        let digest = try Self.randomFile(source, mib: Self.mib)
        // Paced (`--file-rate`) so that the kill lands mid-way however slow this host is
        // to notice the progress: 24 MiB at 3 MiB/s take 8 s.
        let (alice, bob, _, bobData, downloads) = try await Self.pair(binary, url, root: root, extra: ["--file-rate", "3M"])
        defer {
            alice.kill()
            bob.kill()
        }
        _ = try #require(await Self.event(alice, "path"), "\(alice.transcript)")  // moved to direct
        alice.write(#"{"command":"send","path":"\#(source.path)"}"# + "\n")
        let offer = try #require(await Self.event(bob, "file_offer"), "\(bob.transcript)")
        #expect(offer["name"] as? String == "big.bin" && offer["size"] as? Int == Self.mib << 20)
        bob.write(#"{"command":"accept_file"}"# + "\n")
        #expect(await Self.progress(bob, atLeast: 4 << 20), "\(bob.transcript)")
        let session = try Self.sessionID(bob)
        bob.kill()  // SIGKILL mid-way: the partial file and the transfer record stay
        let partial = try FileManager.default.contentsOfDirectory(atPath: downloads.appendingPathComponent(".inviso-partial").path)
        #expect(partial.count == 1)

        let resumed = try ChildProcess(
            binary, ["resume", String(session.prefix(8)), "--json", "--data", bobData, "--downloads", downloads.path])
        defer { resumed.kill() }
        let received = try #require(await Self.event(resumed, "file_received"), "\(resumed.transcript)")
        #expect(received["sha256"] as? String == digest)
        let path = try #require(received["path"] as? String)
        #expect(try Self.sha256(of: URL(fileURLWithPath: path)) == digest)
        // The resumed receiver asked from what it held: it never got the whole file again.
        let first = resumed.events.first { $0["event"] as? String == "file_progress" }
        #expect((first?["bytes"] as? Int ?? 0) >= 4 << 20, "\(resumed.transcript)")
        let sent = try #require(await Self.event(alice, "file_sent"), "\(alice.transcript)")
        #expect(sent["verified"] as? Bool == true)
        // No delivery marks for the transfer's own messages: only text gets those.
        #expect(!alice.events.contains { $0["event"] as? String == "delivered" }, "\(alice.transcript)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.appendingPathComponent(".inviso-partial").path).isEmpty)
    }

    @Test("relay: the sender killed mid-way resumes from its stored offer; hash equal")
    func senderKilledOnTheRelay() async throws {
        let binary = try NoiseInteropTests.invisoBinary()
        let root = try ChatCLITests.temporaryDirectory()
        let (server, url) = try await Self.fastServer(binary, data: root.appendingPathComponent("server"))
        defer { ChatCLITests.tearDown(root, server) }
        let source = root.appendingPathComponent("big.bin")
        let digest = try Self.randomFile(source, mib: Self.mib / 2)
        let (alice, bob, aliceData, _, downloads) = try await Self.pair(
            binary, url, root: root, extra: ["--no-direct", "--file-rate", "2M"])  // 12 MiB in 6 s: killed mid-way
        defer {
            alice.kill()
            bob.kill()
        }
        alice.write(#"{"command":"send","path":"\#(source.path)"}"# + "\n")
        _ = try #require(await Self.event(bob, "file_offer"), "\(bob.transcript)")
        bob.write(#"{"command":"accept_file"}"# + "\n")
        #expect(await Self.progress(alice, atLeast: 2 << 20), "\(alice.transcript)")
        let session = try Self.sessionID(alice)
        alice.kill()
        let resumed = try ChildProcess(binary, ["resume", String(session.prefix(8)), "--json", "--no-direct", "--data", aliceData])
        defer { resumed.kill() }
        let sent = try #require(await Self.event(resumed, "file_sent"), "\(resumed.transcript) \(bob.transcript)")
        #expect(sent["verified"] as? Bool == true)
        let received = try #require(await Self.event(bob, "file_received"), "\(bob.transcript)")
        #expect(received["sha256"] as? String == digest)
        #expect(try Self.sha256(of: downloads.appendingPathComponent("big.bin")) == digest)
        #expect(!bob.events.contains { $0["event"] as? String == "path" && $0["path"] as? String == "direct" })
    }

    @Test("hostile names land inside the downloads folder; refusing and cancelling reach the other side")
    func hostileNamesRefusalsAndCancels() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let source = root.appendingPathComponent("small.bin")
        let digest = try Self.randomFile(source, mib: 1)
        let (alice, bob, _, _, downloads) = try await Self.pair(binary, url, root: root, extra: [])
        defer {
            alice.kill()
            bob.kill()
        }
        var count = 0
        for (name, expected) in [("../../x", "x"), ("/etc/passwd", "passwd"), ("..", "file"), ("../../x", "x (2)")] {
            alice.write(#"{"command":"send","path":"\#(source.path)","name":"\#(name)"}"# + "\n")
            count += 1
            _ = try #require(await bob.waitForEvent(timeout: 60) { _ in
                bob.events.filter { $0["event"] as? String == "file_offer" }.count == count
            }, "\(bob.transcript)")
            bob.write(#"{"command":"accept_file"}"# + "\n")
            _ = try #require(await bob.waitForEvent(timeout: 60) { _ in
                bob.events.filter { $0["event"] as? String == "file_received" }.count == count
            }, "\(bob.transcript)")
            let received = bob.events.filter { $0["event"] as? String == "file_received" }.last
            let path = try #require(received?["path"] as? String)
            #expect(URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.path == downloads.standardizedFileURL.path)
            #expect(URL(fileURLWithPath: path).lastPathComponent == expected)
            #expect(try Self.sha256(of: URL(fileURLWithPath: path)) == digest)
        }
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("x").path))
        #expect(!FileManager.default.fileExists(atPath: root.deletingLastPathComponent().appendingPathComponent("x").path))

        // Refused: the sender is told; cancelled while offered: the receiver is told.
        alice.write(#"{"command":"send","path":"\#(source.path)"}"# + "\n")
        _ = try #require(await bob.waitForEvent(timeout: 60) { _ in
            bob.events.filter { $0["event"] as? String == "file_offer" }.count == count + 1
        })
        bob.write(#"{"command":"refuse_file"}"# + "\n")
        _ = try #require(await Self.event(alice, "file_refused"), "\(alice.transcript)")
        alice.write(#"{"command":"send","path":"\#(source.path)"}"# + "\n")
        let offered = try #require(await alice.waitForEvent(timeout: 60) { _ in
            alice.events.filter { $0["event"] as? String == "file_offered" }.count == count + 2
        })
        _ = offered
        let id = try #require(alice.events.filter { $0["event"] as? String == "file_offered" }.last?["id"] as? String)
        alice.write(#"{"command":"cancel_file","id":"\#(id.prefix(8))"}"# + "\n")
        let cancelled = try #require(await Self.event(bob, "file_cancelled"), "\(bob.transcript)")
        #expect(cancelled["by_peer"] as? Bool == true)
        // An unreadable path is a JSON error, and nothing is offered.
        alice.write(#"{"command":"send","path":"\#(root.path)/missing"}"# + "\n")
        let error = try #require(await Self.event(alice, "error"), "\(alice.transcript)")
        #expect((error["error"] as? String ?? "").contains("cannot read missing"))
    }

    @Test("inviso send / receive: a folder arrives as one checked archive; both exit 0")
    func oneShotSendReceive() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let folder = root.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("trip"), withIntermediateDirectories: true)
        try Data("sea".utf8).write(to: folder.appendingPathComponent("trip/beach.txt"))
        let downloads = root.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let sender = try ChildProcess(binary, ["send", folder.path, "--json", "--server", url])
        defer { sender.kill() }
        let invite = try #require(await Self.event(sender, "invite"), "\(sender.transcript)")
        let receiver = try ChildProcess(
            binary, ["receive", try #require(invite["link"] as? String), "--json", "--downloads", downloads.path])
        defer { receiver.kill() }
        #expect(await receiver.waitForExit(timeout: 120) == 0, "\(receiver.transcript)")
        #expect(await sender.waitForExit(timeout: 60) == 0, "\(sender.transcript)")
        let received = try #require(receiver.events.first { $0["event"] as? String == "file_received" })
        let archive = URL(fileURLWithPath: try #require(received["path"] as? String))
        #expect(archive.lastPathComponent == "photos.tar")
        #expect(try Self.sha256(of: archive) == received["sha256"] as? String)
        let list = Process()
        list.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        list.arguments = ["tar", "-tf", archive.path]
        let pipe = Pipe()
        list.standardOutput = pipe
        try list.run()
        list.waitUntilExit()
        let names = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(names.contains("photos/trip/beach.txt"))
        #expect(sender.events.contains { $0["event"] as? String == "file_sent" && $0["verified"] as? Bool == true })
        // Nothing kept: no data directory was needed or made.
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("alice").path))
    }

    @Test("inviso receive takes one file: a second offer is refused, the first arrives and it exits 0")
    func oneShotReceiveRefusesASecondOffer() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let first = root.appendingPathComponent("first.bin")
        let digest = try Self.randomFile(first, mib: 4)
        let second = root.appendingPathComponent("second.bin")
        _ = try Self.randomFile(second, mib: 1)
        let downloads = root.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        // A chat on the sending side offers two files at once; `receive` is the other end.
        let (alice, invite) = try await ChatCLITests.invite(binary, url, ["--data", root.appendingPathComponent("alice").path])
        defer { alice.kill() }
        let receiver = try ChildProcess(
            binary, ["receive", try #require(invite["invite"] as? String), "--json", "--server", url, "--downloads", downloads.path])
        defer { receiver.kill() }
        _ = try #require(await Self.event(alice, "connected"), "\(alice.transcript)")
        alice.write(#"{"command":"send","path":"\#(first.path)"}"# + "\n")
        alice.write(#"{"command":"send","path":"\#(second.path)"}"# + "\n")
        #expect(await receiver.waitForExit(timeout: 120) == 0, "\(receiver.transcript)")
        let received = receiver.events.filter { $0["event"] as? String == "file_received" }
        #expect(received.count == 1)
        #expect(received.first?["sha256"] as? String == digest)
        let refused = try #require(await Self.event(alice, "file_refused"), "\(alice.transcript)")
        let offered = alice.events.filter { $0["event"] as? String == "file_offered" }
        #expect(offered.count == 2)
        #expect(refused["id"] as? String == offered.last?["id"] as? String)
        let names = try FileManager.default.contentsOfDirectory(atPath: downloads.path).filter { !$0.hasPrefix(".") }
        #expect(names == ["first.bin"])
    }
}
