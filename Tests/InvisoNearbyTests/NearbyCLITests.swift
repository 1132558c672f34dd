import Crypto
import Foundation
import Testing

/// `inviso nearby --json` processes on hosts in network namespaces, each with its own
/// avahi-daemon (`TestNetwork`): discovery, pairing, safety numbers, messages, the outbox
/// for a person who left, disappearing messages across a restart, and a pinned name
/// presenting another identity.
@Suite(.serialized, .enabled(if: TestNetwork.shouldRun)) struct NearbyCLITests {
    /// One `inviso nearby` process.
    final class Person: @unchecked Sendable {
        // @unchecked: used from one test task at a time.
        let name: String
        let data: URL
        private let child: Spawn.Child

        init(_ name: String, host: Int, on network: TestNetwork, data: URL, extra: [String] = []) throws {
            self.name = name
            self.data = data
            child = try network.start(
                host,
                ["env", "-u", "INVISO_PASSPHRASE", try NearbyCLITests.binary(), "nearby", "--json", "--name", name,
                 "--data", data.path, "--port", "7000"] + extra,
                input: true)
        }

        func say(_ line: String) { child.write(line + "\n") }

        /// Every JSON event printed so far.
        func events() -> [[String: Any]] {
            child.output().split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
        }

        /// Waits for an event named `name` whose fields match `fields`; returns it.
        @discardableResult
        func expect(_ event: String, _ fields: [String: String] = [:], seconds: Double = 20) async throws -> [String: Any] {
            var found: [String: Any]?
            let deadline = ContinuousClock.now + .seconds(seconds)
            while found == nil {
                found = events().first { candidate in
                    candidate["event"] as? String == event
                        && fields.allSatisfy { key, value in "\(candidate[key] ?? "")" == value }
                }
                guard found == nil else { break }
                guard ContinuousClock.now < deadline else {
                    Issue.record("timed out waiting for \(name): \(event) \(fields); it printed:\n\(child.output())")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            return found ?? [:]
        }

        /// The byte counts of the `file_progress` events printed so far (of transfer `id`,
        /// or of any).
        func progress(_ id: String? = nil) -> [Int] {
            events().compactMap { event in
                guard event["event"] as? String == "file_progress", id == nil || event["id"] as? String == id else { return nil }
                return event["bytes"] as? Int
            }
        }

        /// Kills the process at once (no goodbye, no flush): a connection cut mid-way.
        func kill() async {
            await child.killAbruptly()
        }

        func quit() async {
            say("/quit")
            child.closeInput()
            let status = await child.exit()
            #expect(status == 0, "\(name) exited with an error:\n\(child.output())")
        }
    }

    static func binary() throws -> String {
        var candidates = [Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        for directory in candidates {
            let path = directory.appendingPathComponent("inviso").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw TestNetworkError(output: "the inviso executable was not found next to the test bundle (swift build first)")
    }

    @Test func threePeopleDiscoverPairChatAndKeepWhatTheyAgreed() async throws {
        let network = try await TestNetwork.start(prefix: "cli", hosts: 3)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-nearby-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let alice = try Person("alice", host: 1, on: network, data: root.appendingPathComponent("alice"))
        let bob = try Person("bob", host: 2, on: network, data: root.appendingPathComponent("bob"))
        var carol = try Person("carol", host: 3, on: network, data: root.appendingPathComponent("carol"))

        // Discovery: everyone sees everyone, with the fingerprint each announces.
        let ready = try await alice.expect("ready")
        let aliceFingerprint = try #require(ready["fingerprint"] as? String)
        try await bob.expect("peer_found", ["name": "alice", "fingerprint": aliceFingerprint, "status": "new"])
        try await carol.expect("peer_found", ["name": "alice"])
        try await alice.expect("peer_found", ["name": "bob"])
        try await alice.expect("peer_found", ["name": "carol"])
        let browsed = try await network.run(2, ["avahi-browse", "-rpt", "_inviso._tcp"]).output
        #expect(browsed.contains(";alice;_inviso._tcp;local;") && browsed.contains("\"id=\(aliceFingerprint)\"") && browsed.contains("\"v=1\""))

        // Pairing: a request each side answers; equal safety numbers on both sides.
        alice.say("/connect bob")
        try await bob.expect("request", ["name": "alice"])
        bob.say("/accept alice")
        try await alice.expect("connected", ["name": "bob"])
        try await bob.expect("connected", ["name": "alice"])
        alice.say("/connect carol")
        try await carol.expect("request", ["name": "alice"])
        carol.say("/accept")
        try await alice.expect("connected", ["name": "carol"])
        alice.say("/verify bob")
        bob.say("/verify alice")
        let aliceBob = try await alice.expect("safety_number", ["name": "bob"])["digits"] as? String
        let bobAlice = try await bob.expect("safety_number", ["name": "alice"])["digits"] as? String
        #expect(aliceBob != nil && aliceBob?.count == 60 && aliceBob == bobAlice)
        carol.say("/verify alice")
        alice.say("/verify carol")
        let carolAlice = try await carol.expect("safety_number")["digits"] as? String
        #expect(try await alice.expect("safety_number", ["name": "carol"])["digits"] as? String == carolAlice)
        #expect(carolAlice != aliceBob)

        // 1:1 messages both ways, with delivery marks.
        alice.say("/msg bob hello bob")
        try await bob.expect("message", ["from": "alice", "text": "hello bob"])
        try await alice.expect("delivered", ["to": "bob", "seq": "1"])
        bob.say("/msg alice hi alice")
        try await alice.expect("message", ["from": "bob", "text": "hi alice"])

        // A group of three: bob and carol meet through it; every message is sealed once with
        // the sender's key and reaches the two others. Removing carol rotates the keys and
        // she gets nothing that follows.
        alice.say("/group create team bob carol")
        try await bob.expect("group", ["group": "team"])
        try await carol.expect("group", ["group": "team"])
        try await bob.expect("connected", ["name": "carol"])
        bob.say("/msg team hello team")
        try await alice.expect("group_message", ["group": "team", "from": "bob", "text": "hello team"])
        try await carol.expect("group_message", ["group": "team", "from": "bob", "text": "hello team"])
        carol.say("/msg team carol here")
        try await alice.expect("group_message", ["from": "carol", "text": "carol here"])
        try await bob.expect("group_message", ["from": "carol", "text": "carol here"])
        // A file to the group: each other member gets an offer of its own, accepts it, and
        // checks the same SHA-256.
        let shared = root.appendingPathComponent("notes.txt")
        let sharedBytes = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try sharedBytes.write(to: shared)
        let sharedHash = SHA256.hash(data: sharedBytes).map { String(format: "%02x", $0) }.joined()
        bob.say("/open team")
        bob.say("/send \(shared.path)")
        for person in [alice, carol] {
            try await person.expect("file_offer", ["from": "bob", "name": "notes.txt", "size": "150000"])
            person.say("/accept file")
            let got = try await person.expect("file_received", ["from": "bob"])
            #expect(got["sha256"] as? String == sharedHash)
            let path = try #require(got["path"] as? String)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == sharedBytes)
        }
        try await bob.expect("file_sent", ["to": "alice"])
        try await bob.expect("file_sent", ["to": "carol"])
        alice.say("/group remove team carol")
        try await carol.expect("group_left", ["group": "team"])
        try await bob.expect("group", ["group": "team", "members": "alice,bob", "epoch": "2"])
        alice.say("/msg team after carol left")
        bob.say("/msg team bob after carol left")
        try await bob.expect("group_message", ["from": "alice", "text": "after carol left"])
        try await alice.expect("group_message", ["from": "bob", "text": "bob after carol left"])
        #expect(!carol.events().contains { ($0["text"] as? String)?.contains("after carol left") == true })

        // The outbox: carol leaves; alice's message waits and arrives when carol is back.
        await carol.quit()
        try await alice.expect("closed", ["peer": "carol"])
        alice.say("/msg carol while you were away")
        // (The group's payloads took the first numbers of this conversation.)
        let queued = try await alice.expect("queued", ["to": "carol"])
        let seq = try #require(queued["seq"] as? Int)
        carol = try Person("carol", host: 3, on: network, data: root.appendingPathComponent("carol"))
        try await carol.expect("message", ["from": "alice", "text": "while you were away"], seconds: 30)
        try await alice.expect("delivered", ["to": "carol", "seq": "\(seq)"])

        // Disappearing messages: agreed by both, gone after the lifetime even though
        // carol's program was not running when it expired.
        alice.say("/open carol")
        alice.say("/lifetime 24h")
        try await carol.expect("lifetime_proposed", ["by": "alice", "lifetime": "24h"])
        carol.say("/open alice")
        carol.say("/lifetime 24h")
        try await alice.expect("lifetime", ["peer": "carol", "lifetime": "24h"])
        try await carol.expect("lifetime", ["peer": "alice", "lifetime": "24h"])
        alice.say("this one disappears")
        let brief = try await carol.expect("message", ["text": "this one disappears"])
        #expect(brief["expires_at"] as? Int != nil)
        await carol.quit()
        let later = try Person(
            "carol", host: 3, on: network, data: root.appendingPathComponent("carol"),
            extra: ["--no-discovery", "--clock-offset", String(25 * 3600)])
        try await later.expect("ready")
        later.say("/history alice")
        try await later.expect("history", ["text": "while you were away"])
        #expect(!later.events().contains { $0["text"] as? String == "this one disappears" })
        await later.quit()

        // A group's lifetime: alice's next messages carry it, bob adopts it, and they are
        // gone from bob's store after it, program running or not.
        alice.say("/open team")
        alice.say("/lifetime 24h")
        try await alice.expect("lifetime", ["peer": "team", "lifetime": "24h"])
        alice.say("fading words")
        let fading = try await bob.expect("group_message", ["group": "team", "text": "fading words"])
        #expect(fading["expires_at"] as? Int != nil)
        try await bob.expect("lifetime", ["peer": "team", "lifetime": "24h"])
        await bob.quit()
        let laterBob = try Person(
            "bob", host: 2, on: network, data: root.appendingPathComponent("bob"),
            extra: ["--no-discovery", "--clock-offset", String(25 * 3600)])
        try await laterBob.expect("ready")
        laterBob.say("/history team")
        try await laterBob.expect("history", ["from": "you", "text": "bob after carol left"])
        try await laterBob.expect("history", ["from": "alice", "text": "after carol left"])
        #expect(!laterBob.events().contains { $0["text"] as? String == "fading words" })
        await laterBob.quit()

        // Someone else announcing as "bob" with another identity is refused by alice,
        // who pinned bob's.
        try await alice.expect("peer_lost", ["name": "bob"])
        let mallory = try Person("bob", host: 2, on: network, data: root.appendingPathComponent("mallory"))
        try await mallory.expect("ready")
        try await eventually("alice to see the new bob") {
            alice.events().filter { $0["event"] as? String == "peer_found" && $0["name"] as? String == "bob" }.count >= 2
        }
        alice.say("/connect bob")
        let changed = try await alice.expect("identity_changed", ["name": "bob"])
        #expect(changed["presented"] as? String != changed["pinned"] as? String)
        #expect(!mallory.events().contains { $0["event"] as? String == "connected" })
        await mallory.quit()
        await alice.quit()
        await network.stop()
    }

    /// A 96 MiB file from alice to bob: offered, accepted, cut mid-way by killing bob's
    /// process, resumed from the chunks bob holds when he is back, and checked.
    @Test func aLargeFileSurvivesACutConnection() async throws {
        let network = try await TestNetwork.start(prefix: "fil", hosts: 2)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-nearby-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var generator = SplitMix(seed: 50)
        let contents = [UInt8](unsafeUninitializedCapacity: 96 * 1024 * 1024) { buffer, count in
            let words = UnsafeMutableRawBufferPointer(buffer).bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
            count = buffer.count
        }
        try Data(contents).write(to: root.appendingPathComponent("big.bin"))
        let expected = SHA256.hash(data: contents).map { String(format: "%02x", $0) }.joined()

        var alice = try Person("alice", host: 1, on: network, data: root.appendingPathComponent("alice"))
        var bob = try Person("bob", host: 2, on: network, data: root.appendingPathComponent("bob"))
        try await alice.expect("peer_found", ["name": "bob"])
        alice.say("/connect bob")
        try await bob.expect("request", ["name": "alice"])
        bob.say("/accept alice")
        try await alice.expect("connected", ["name": "bob"])
        alice.say("/send \(root.appendingPathComponent("big.bin").path)")
        let offer = try await bob.expect("file_offer", ["from": "alice", "name": "big.bin", "size": "\(contents.count)"])
        bob.say("/accept file")
        // Cut once some but not all of it arrived. The transfer takes a fraction of a
        // second here, so this polls every 2 ms (not `eventually`'s 50) and stops bob's
        // process before anything else.
        let deadline = ContinuousClock.now + .seconds(60)
        while !bob.progress().contains(where: { $0 >= 1024 * 1024 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        await bob.kill()
        let held = bob.progress().max() ?? 0
        #expect(held < contents.count, "the whole file arrived before the cut; the test proves nothing")
        try await alice.expect("closed", ["peer": "bob"])
        bob = try Person("bob", host: 2, on: network, data: root.appendingPathComponent("bob"))
        let received = try await bob.expect("file_received", ["from": "alice", "id": offer["id"] as? String ?? ""], seconds: 120)
        #expect(received["sha256"] as? String == expected)
        let path = try #require(received["path"] as? String)
        #expect(path.hasPrefix(root.appendingPathComponent("bob/nearby/downloads").path) || path.contains("/bob/"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contents))
        // Resumed, not restarted: the first progress report after the restart starts past zero.
        let resumedFrom = bob.progress().min() ?? 0
        #expect(resumedFrom > 0)
        let sent = try await alice.expect("file_sent", ["to": "bob"])
        #expect(sent["verified"] as? Bool == true)

        // Now the sender is cut: alice is killed mid-way and restarted; the offer she kept
        // in her store lets bob resume from what he holds.
        alice.say("/send \(root.appendingPathComponent("big.bin").path)")
        let second = try await bob.expect("file_offer", ["from": "alice", "name": "big.bin"])
        let secondID = second["id"] as? String ?? ""
        bob.say("/accept file")
        try await eventually("bob to hold part of the second copy", seconds: 60) {
            bob.progress(secondID).contains { $0 >= 4 * 1024 * 1024 }
        }
        await alice.kill()
        let heldSecond = bob.progress(secondID).max() ?? 0
        #expect(heldSecond < contents.count, "the second copy arrived before the cut; the test proves nothing")
        try await bob.expect("closed", ["peer": "alice"])
        alice = try Person("alice", host: 1, on: network, data: root.appendingPathComponent("alice"))
        let again = try await bob.expect("file_received", ["from": "alice", "id": secondID], seconds: 120)
        #expect(again["sha256"] as? String == expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(again["path"] as? String))) == Data(contents))
        try await alice.expect("file_sent", ["to": "bob", "id": secondID])

        // A transfer cancelled by the receiver stops on both sides.
        alice.say("/send \(root.appendingPathComponent("big.bin").path)")
        try await eventually("a third offer") { bob.events().filter { $0["event"] as? String == "file_offer" }.count >= 2 }
        let thirdID = bob.events().last { $0["event"] as? String == "file_offer" }?["id"] as? String ?? ""
        #expect(thirdID != secondID)
        bob.say("/accept file")
        bob.say("/cancel \(thirdID)")
        #expect(try await alice.expect("file_cancelled", ["peer": "bob", "id": thirdID])["by_peer"] as? Bool == true)
        #expect(try await bob.expect("file_cancelled", ["peer": "alice", "id": thirdID])["by_peer"] as? Bool == false)
        await bob.quit()
        await alice.quit()
        await network.stop()
    }

    /// Dave restarts on another port while cut off, so his goodbye never reaches alice and
    /// her browse reports nothing new: her first dial hits the old port, and the node
    /// resolves the service again and dials where dave now is.
    @Test func aPeerThatMovedToAnotherPortIsReachedAfterResolvingAgain() async throws {
        let network = try await TestNetwork.start(prefix: "mov", hosts: 2)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-nearby-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let alice = try Person("alice", host: 1, on: network, data: root.appendingPathComponent("alice"))
        var dave = try Person("dave", host: 2, on: network, data: root.appendingPathComponent("dave"))
        try await alice.expect("peer_found", ["name": "dave"])
        let hubLink = ["ip", "-n", "\(network.name)-hub", "link", "set", "\(network.name)-v2"]
        #expect(try await Spawn.run(hubLink + ["down"]).status == 0)
        await dave.kill()
        try await Task.sleep(for: .seconds(2))  // dave's daemon withdraws the service; its goodbye is lost
        #expect(try await Spawn.run(hubLink + ["up"]).status == 0)
        dave = try Person("dave", host: 2, on: network, data: root.appendingPathComponent("dave"), extra: ["--port", "7001"])
        try await dave.expect("ready", ["port": "7001"])
        try await Task.sleep(for: .seconds(2))  // dave's new announcement reaches alice's daemon
        alice.say("/connect dave")
        try await dave.expect("request", ["name": "alice"], seconds: 30)
        dave.say("/accept alice")
        try await alice.expect("connected", ["name": "dave"])
        await dave.quit()
        await alice.quit()
        await network.stop()
    }
}
