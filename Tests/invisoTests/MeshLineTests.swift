import Foundation
import Testing
import InvisoTesting

/// Five `inviso mesh` processes on 127.0.0.1 in a line 1–2–3–4–5: each names only the node
/// before it with `--peer`, so every message to or from the ends crosses three relays.
@Suite("inviso mesh: five processes in a line", .serialized, .timeLimit(.minutes(6)))
struct MeshLineTests {
    static let timeout: TimeInterval = 40
    static let nicks = ["a", "b", "c", "d", "e"]

    /// A started node and the port it reported.
    struct Node {
        let process: ChildProcess
        let port: Int
        let id: String
    }

    static func start(_ nick: String, data: URL, peer: Int?, extra: [String] = []) async throws -> Node {
        var arguments = ["mesh", "--nick", nick, "--port", "0", "--host", "127.0.0.1", "--json", "--data", data.path] + extra
        if let peer { arguments += ["--peer", "127.0.0.1:\(peer)"] }
        let process = try ChildProcess(try NoiseInteropTests.invisoBinary(), arguments)
        let started = try #require(
            await process.waitForEvent(timeout: timeout) { $0["event"] as? String == "started" }, "\(nick)\n\(process.transcript)")
        return Node(process: process, port: try #require(started["port"] as? Int), id: try #require(started["id"] as? String))
    }

    static func event(_ kind: String, _ fields: [String: String]) -> ([String: Any]) -> Bool {
        { object in
            object["event"] as? String == kind && fields.allSatisfy { object[$0.key] as? String == $0.value }
        }
    }

    @Test("public messages cross the line, a private one is readable at its end only, and a node started later gets both")
    func line() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-mesh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let dirs = Self.nicks.map { root.appendingPathComponent($0) }

        // Node 5's identity exists before the messages are sent, but the node is not running:
        // a first run with no neighbours and no input creates it and leaves.
        let first = try await Self.start("e", data: dirs[4], peer: nil)
        first.process.closeInput()
        #expect(await first.process.waitForExit(timeout: Self.timeout) == 0, "\(first.process.transcript)")
        let idOfE = first.id

        var nodes: [Node] = []
        defer { for node in nodes { node.process.kill() } }
        for index in 0..<4 {
            await nodes.append(try Self.start(Self.nicks[index], data: dirs[index], peer: nodes.last?.port))
        }
        for nick in ["b", "c", "d"] {
            #expect(
                await nodes[0].process.waitForEvent(timeout: Self.timeout, Self.event("peer", ["nick": nick])) != nil,
                "a never heard of \(nick)\n\(nodes[0].process.transcript)")
        }

        // While node 5 is down: a public message and a private one for it (by peer ID).
        nodes[0].process.write("before e started\n/msg \(idOfE) a secret kept for e\n")
        #expect(
            await nodes[3].process.waitForEvent(timeout: Self.timeout, Self.event("public", ["from": "a", "text": "before e started"])) != nil,
            "d\n\(nodes[3].process.transcript)")
        let queued = try #require(
            await nodes[0].process.waitForEvent(timeout: Self.timeout, Self.event("sent", [:])), "\(nodes[0].process.transcript)")
        let queuedID = try #require(queued["id"] as? String)

        // Node 5 starts: the relays' gossip sync brings the public message, a's outbox the private one.
        await nodes.append(try Self.start("e", data: dirs[4], peer: nodes[3].port))
        #expect(nodes[4].id == idOfE, "node 5's identity was not kept in its data directory")
        let e = nodes[4].process
        #expect(
            await e.waitForEvent(timeout: Self.timeout, Self.event("public", ["from": "a", "text": "before e started"])) != nil,
            "e missed the public message sent before it started\n\(e.transcript)")
        #expect(
            await e.waitForEvent(timeout: Self.timeout, Self.event("private", ["from": "a", "text": "a secret kept for e"])) != nil,
            "e missed the private message sent before it started\n\(e.transcript)")
        #expect(
            await nodes[0].process.waitForEvent(timeout: Self.timeout, Self.event("delivered", ["id": queuedID])) != nil,
            "a never heard that e got it\n\(nodes[0].process.transcript)")

        // All five up: a public message reaches e through three relays, a private one by nickname.
        #expect(await nodes[0].process.waitForEvent(timeout: Self.timeout, Self.event("peer", ["nick": "e"])) != nil)
        nodes[0].process.write("hello everyone\n/msg e live secret for e\n")
        let live = try #require(
            await e.waitForEvent(timeout: Self.timeout, Self.event("public", ["from": "a", "text": "hello everyone"])), "\(e.transcript)")
        // Four links; a relay that got its copy by gossip sync first restarts the TTL, so the
        // count read from the TTL can be lower, but never 1 (that is a neighbour). When e's
        // own copy came by gossip sync (a sync response), the hops are unknown: null.
        let hops = live["hops"] as? Int
        #expect(hops.map { (2...4).contains($0) } ?? (live["hops"] is NSNull), "hops \(live["hops"] ?? "missing")")
        #expect(await e.waitForEvent(timeout: Self.timeout, Self.event("private", ["from": "a", "text": "live secret for e"])) != nil)
        for index in 1..<4 {
            #expect(
                await nodes[index].process.waitForEvent(timeout: Self.timeout, Self.event("public", ["text": "hello everyone"])) != nil)
        }
        #expect(await nodes[0].process.waitForEvent(timeout: Self.timeout) { object in
            object["event"] as? String == "delivered" && object["id"] as? String != queuedID
        } != nil)

        for node in nodes { node.process.closeInput() }
        for (index, node) in nodes.enumerated() {
            #expect(await node.process.waitForExit(timeout: Self.timeout) == 0, "\(Self.nicks[index])\n\(node.process.transcript)")
        }
        // The relays saw the private messages only as ciphertext.
        for index in 1..<4 {
            let transcript = nodes[index].process.transcript
            #expect(!nodes[index].process.events.contains { $0["event"] as? String == "private" })
            #expect(!transcript.contains("secret"), "\(Self.nicks[index]) printed a private message\n\(transcript)")
        }
    }

    @Test("with --discover and no --peer, three nodes on this machine find each other by broadcast and talk")
    func discovery() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-mesh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // A port of this run's own, so that concurrent runs on one machine do not meet.
        let port = Int.random(in: 40_000...59_999)
        let discover = ["--discover", "--discovery-port", "\(port)", "--broadcast", "127.255.255.255"]
        var nodes: [Node] = []
        defer { for node in nodes { node.process.kill() } }
        for nick in ["a", "b", "c"] {
            await nodes.append(try Self.start(nick, data: root.appendingPathComponent(nick), peer: nil, extra: discover))
        }
        for (index, nick) in ["a", "b", "c"].enumerated() {
            for other in ["a", "b", "c"] where other != nick {
                #expect(
                    await nodes[index].process.waitForEvent(timeout: Self.timeout, Self.event("peer", ["nick": other])) != nil,
                    "\(nick) never found \(other)\n\(nodes[index].process.transcript)")
            }
        }
        nodes[0].process.write("found you\n/msg c only for c\n")
        for index in 1..<3 {
            #expect(
                await nodes[index].process.waitForEvent(timeout: Self.timeout, Self.event("public", ["from": "a", "text": "found you"]))
                    != nil, "\(nodes[index].process.transcript)")
        }
        #expect(
            await nodes[2].process.waitForEvent(timeout: Self.timeout, Self.event("private", ["from": "a", "text": "only for c"]))
                != nil, "\(nodes[2].process.transcript)")
        for node in nodes { node.process.closeInput() }
        for node in nodes { #expect(await node.process.waitForExit(timeout: Self.timeout) == 0, "\(node.process.transcript)") }
        #expect(!nodes[1].process.events.contains { $0["event"] as? String == "private" })
    }

    @Test("undelivered private messages are kept sealed in the data directory and survive a restart")
    func sealedOutbox() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-mesh-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let node = try await Self.start("a", data: data, peer: nil)
        node.process.write("/msg 0123456789abcdef plaintext that must not be on disk\n")
        #expect(await node.process.waitForEvent(timeout: Self.timeout, Self.event("sent", ["to": "0123456789abcdef"])) != nil)
        node.process.closeInput()
        #expect(await node.process.waitForExit(timeout: Self.timeout) == 0, "\(node.process.transcript)")

        for file in try FileManager.default.contentsOfDirectory(atPath: data.path) {
            let bytes = try Data(contentsOf: data.appendingPathComponent(file))
            #expect(bytes.range(of: Data("must not be on disk".utf8)) == nil, "\(file) holds the plaintext")
            let mode = try FileManager.default.attributesOfItem(atPath: data.appendingPathComponent(file).path)[.posixPermissions]
            #expect(mode as? Int == 0o600, "\(file) is not owner-only")
        }
        let again = try await Self.start("a", data: data, peer: nil)
        defer { again.process.kill() }
        #expect(again.id == node.id)
        #expect(again.process.events.first?["pending"] as? Int == 1)
        again.process.closeInput()
        #expect(await again.process.waitForExit(timeout: Self.timeout) == 0)
    }
}

@Suite("inviso erase-all")
struct EraseAllTests {
    @Test("lists without --yes, then deletes the store and mesh files, keys included, and nothing else")
    func eraseAll() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-erase-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let binary = try NoiseInteropTests.invisoBinary()
        let node = try await MeshLineTests.start("a", data: data, peer: nil)
        node.process.closeInput()
        #expect(await node.process.waitForExit(timeout: MeshLineTests.timeout) == 0)
        for name in ["inviso.sqlite", "store.key", "unrelated.txt"] {
            #expect(FileManager.default.createFile(atPath: data.appendingPathComponent(name).path, contents: Data([1])))
        }
        let dryRun = try ChildProcess(binary, ["erase-all", "--data", data.path])
        #expect(await dryRun.waitForExit(timeout: MeshLineTests.timeout) == 0)
        #expect(dryRun.transcript.contains("mesh.key"))
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("mesh.key").path))

        let erase = try ChildProcess(binary, ["erase-all", "--data", data.path, "--yes"])
        #expect(await erase.waitForExit(timeout: MeshLineTests.timeout) == 0, "\(erase.transcript)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["unrelated.txt"])
    }
}
