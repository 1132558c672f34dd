import Crypto
import Foundation
import InvisoTesting
import Testing

/// Two pages of `inviso serve`'s client in one Chromium inside a network namespace of the
/// test's own (``NetworkNamespace``): they pair over the relay, open a WebRTC DataChannel
/// through the server's signaling and chat on it, also after the server is gone; with
/// WebRTC off on either side they stay on the relay; a channel that closes mid-burst loses
/// nothing. Prints the DataChannel's figures as JSON lines.
@Suite(
    "Browser: WebRTC DataChannels between pages, in a network namespace", .serialized,
    .enabled(if: NetworkNamespace.shouldRun, "needs root, iproute2, socat and Chromium; under CI=true this suite runs and fails without them"))
struct BrowserWebRTCTests {
    static let direct = "peer to peer (WebRTC)"
    static let path = "document.getElementById('path').textContent"

    /// A namespace, `inviso serve` on its outer address, the page's forwarder and a
    /// Chromium inside; `body` gets the page URL (`http://127.0.0.1:PORT`, a secure
    /// context in the namespace), the browser and the server. All removed afterwards.
    /// With `turn`, a coturn on the link's outer address too, whose credentials the server
    /// hands out (`INVISO_TURN_SECRET`, `INVISO_TURN_URL`).
    static func withNamespace(
        turn: Bool = false, _ body: (String, Chromium, ChildProcess, NetworkNamespace, TURNRelay?) async throws -> Void
    ) async throws {
        let namespace = try NetworkNamespace.create()
        defer { namespace.remove() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-webrtc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let relay = turn ? try await TURNRelay.start(on: namespace.outside, in: root) : nil
        defer { relay?.stop() }
        var environment = ["INVISO_PORT": "0", "INVISO_DATA": root.appendingPathComponent("server").path, "INVISO_HOST": namespace.outside]
        if let relay {
            environment["INVISO_TURN_SECRET"] = relay.secret
            environment["INVISO_TURN_URL"] = relay.url
        }
        let server = try ChildProcess(try InvisoExecutable.locate(), ["serve"], environment: environment)
        defer { server.kill() }
        let listening = try #require(
            await server.waitForEvent(timeout: 60) { $0["event"] as? String == "listening" }, "\(server.transcript)")
        let port = try #require((listening["url"] as? String).flatMap { URL(string: $0)?.port })
        let forwarder = try namespace.forward(listen: "127.0.0.1", port: port, to: "\(namespace.outside):\(port)")
        defer { forwarder.terminate() }
        let browser = try await Chromium.launch(in: namespace)
        do {
            try await body("http://127.0.0.1:\(port)", browser, server, namespace, relay)
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    static func send(_ page: DevToolsPage, _ text: String) async throws {
        _ = try await page.evaluate(
            "(() => { const i = document.getElementById('message-input'); i.value = \(BrowserChatTests.jsString(text)); document.getElementById('send').click(); })()")
    }

    /// `invisoChat.sent` / `.arrived` of `page`: frames per path.
    static func counts(_ page: DevToolsPage, _ which: String) async throws -> (relay: Int, direct: Int) {
        let object = try await page.evaluate("({ relay: invisoChat.\(which).relay, direct: invisoChat.\(which).direct })") as? [String: Any]
        return (object?["relay"] as? Int ?? -1, object?["direct"] as? Int ?? -1)
    }

    /// Two pages of `url`, paired by invite, both on the DataChannel.
    static func pairedOnDataChannel(_ browser: Chromium, _ url: String) async throws -> (DevToolsPage, DevToolsPage) {
        let alice = try await browser.openApp(url + "/")
        let bob = try await browser.openApp(url + "/")
        _ = try await BrowserPagesTests.pair(alice, bob)
        #expect(try await BrowserPagesTests.waitFor(alice, Self.path, Self.direct) == Self.direct)
        #expect(try await BrowserPagesTests.waitFor(bob, Self.path, Self.direct) == Self.direct)
        return (alice, bob)
    }

    @Test("two pages pair by invite, move to a DataChannel and chat on it, also once the server is gone")
    func dataChannel() async throws {
        try await Self.withNamespace { url, browser, server, _, _ in
            let (alice, bob) = try await Self.pairedOnDataChannel(browser, url)
            let before = (try await Self.counts(alice, "sent"), try await Self.counts(bob, "sent"))
            for index in 1...20 { try await Self.send(alice, "alice \(index)") }
            try await Self.send(bob, "bob says hi")
            let twenty = (1...20).map { "alice \($0)" }.joined(separator: "|")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, twenty) == twenty)
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|bob says hi") == "first|bob says hi")
            // Every frame of those (messages and acks) went on the DataChannel.
            let after = (try await Self.counts(alice, "sent"), try await Self.counts(bob, "sent"))
            #expect(after.0.relay == before.0.relay && after.1.relay == before.1.relay)
            #expect(after.0.direct >= before.0.direct + 20 && after.1.direct > before.1.direct)
            #expect(try await Self.counts(bob, "arrived").direct >= 20)

            // Peer to peer: the server can go away.
            server.kill()
            _ = await server.waitForExit(timeout: 10)
            try await Self.send(alice, "without the server")
            try await Self.send(bob, "still here")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, twenty + "|without the server") == twenty + "|without the server")
            #expect(
                try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|bob says hi|still here")
                    == "first|bob says hi|still here")
            let delivered = "String(document.querySelectorAll('#messages li.out.delivered').length)"
            #expect(try await BrowserPagesTests.waitFor(alice, delivered, "21") == "21")
        }
    }

    @Test("relay only on either side: no DataChannel, messages go through the server both ways", arguments: [true, false])
    func relayOnly(creatorOnly: Bool) async throws {
        try await Self.withNamespace { url, browser, _, _, _ in
            let alice = try await browser.openApp(url + (creatorOnly ? "/?relay" : "/"))
            let bob = try await browser.openApp(url + (creatorOnly ? "/" : "/?relay"))
            _ = try await BrowserPagesTests.pair(alice, bob)
            for index in 1...5 { try await Self.send(alice, "a\(index)") }
            try await Self.send(bob, "b")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, "a1|a2|a3|a4|a5") == "a1|a2|a3|a4|a5")
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|b") == "first|b")
            // Time enough for a DataChannel on this link (well under a second when allowed).
            try await Task.sleep(for: .seconds(2))
            for page in [alice, bob] {
                #expect(try await page.evaluate(Self.path) as? String == "through the server")
                #expect(try await Self.counts(page, "sent").direct == 0)
                #expect(try await Self.counts(page, "arrived").direct == 0)
            }
        }
    }

    @Test("relay only with a TURN relay: the DataChannel runs through coturn, and neither page tells its own address")
    func relayOnlyThroughTURN() async throws {
        try await Self.withNamespace(turn: true) { url, browser, _, namespace, relay in
            let relay = try #require(relay)
            let alice = try await browser.openApp(url + "/?relay")
            let bob = try await browser.openApp(url + "/?relay")
            _ = try await BrowserPagesTests.pair(alice, bob)
            let turn = "through the server's TURN relay (WebRTC)"
            #expect(try await BrowserPagesTests.waitFor(alice, Self.path, turn) == turn)
            #expect(try await BrowserPagesTests.waitFor(bob, Self.path, turn) == turn)
            let before = try await Self.counts(alice, "sent")
            for index in 1...10 { try await Self.send(alice, "t\(index)") }
            let ten = (1...10).map { "t\($0)" }.joined(separator: "|")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, ten) == ten)
            let after = try await Self.counts(alice, "sent")
            #expect(after.relay == before.relay && after.direct >= before.direct + 10)
            // Only the relay's candidates, in each description and in what was signaled.
            for page in [alice, bob] {
                let sdp = try #require(try await page.evaluate("invisoChat.link.connection.localDescription.sdp") as? String)
                #expect(sdp.contains("typ relay") && !sdp.contains("typ host") && !sdp.contains("typ srflx"), "\(sdp)")
                #expect(!sdp.contains(namespace.inside), "the page told its own address: \(sdp)")
            }
            // coturn allocated for both (with credentials the server minted).
            let allocations = relay.log().filter { $0.contains("ALLOCATE processed, success") }
            #expect(allocations.count >= 2, "\(relay.log().suffix(30).joined(separator: "\n"))")
        }
    }

    @Test("a DataChannel that closes mid-burst: the rest goes on the relay, all arrive once and in order; it opens again")
    func movingBetweenPaths() async throws {
        try await Self.withNamespace { url, browser, _, _, _ in
            let (alice, bob) = try await Self.pairedOnDataChannel(browser, url)
            // 100 messages; once the first 40 were handed to the channel, the creator's
            // channel closes (what it still buffered is lost) and the rest follow at once.
            _ = try await alice.evaluate("""
                (async () => { const input = document.getElementById('message-input'), send = document.getElementById('send');
                  for (let i = 1; i <= 40; i++) { input.value = 'm' + i; send.click(); }
                  await invisoChat.queue; invisoChat.link.close();
                  for (let i = 41; i <= 100; i++) { input.value = 'm' + i; send.click(); } })()
                """)
            let hundred = (1...100).map { "m\($0)" }.joined(separator: "|")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, hundred) == hundred)
            #expect(try await BrowserPagesTests.waitFor(alice, Self.path, "through the server") == "through the server")
            #expect(try await Self.counts(alice, "sent").relay > 0)
            let delivered = "String(document.querySelectorAll('#messages li.out.delivered').length)"
            #expect(try await BrowserPagesTests.waitFor(alice, delivered, "100") == "100")
            // The creator offers again; both move back, and nothing is shown twice.
            _ = try await alice.evaluate("invisoChat.openLink()")
            #expect(try await BrowserPagesTests.waitFor(alice, Self.path, Self.direct) == Self.direct)
            #expect(try await BrowserPagesTests.waitFor(bob, Self.path, Self.direct) == Self.direct)
            try await Self.send(alice, "back on the channel")
            #expect(
                try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, hundred + "|back on the channel")
                    == hundred + "|back on the channel")
        }
    }

    /// A file of `mib` MiB of random bytes in a fresh folder; its path and SHA-256 (hex).
    static func randomFile(mib: Int, name: String) throws -> (URL, String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-webfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: mib << 20)
        data.withUnsafeMutableBytes { raw in
            for index in raw.bindMemory(to: UInt64.self).indices { raw.bindMemory(to: UInt64.self)[index] = generator.next() }
        }
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return (url, SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined())
    }

    /// `sender` offers the file at `path` through its file input; `receiver` accepts it;
    /// returns the SHA-256 the receiver's page computed (its Save link carries it).
    static func transfer(_ path: URL, from sender: DevToolsPage, to receiver: DevToolsPage, timeout: Duration) async throws -> String {
        try await sender.chooseFiles("file-input", [path.path])
        try await BrowserPagesTests.click(sender, "send-file")
        let accept = "document.querySelector('#transfers li[data-state=incoming] button[data-action=accept]')"
        #expect(try await BrowserPagesTests.waitFor(receiver, "String(!!\(accept))", "true") == "true")
        _ = try await receiver.evaluate("\(accept).click()")
        return try await BrowserChatTests.waitForText(
            receiver, "document.querySelector('#transfers li[data-state=received] a')?.dataset.sha256 ?? ''", timeout: timeout)
    }

    @Test("a 50 MiB file between two pages over the DataChannel: SHA-256 equal on both ends, the sender told")
    func fiftyMiB() async throws {
        let (source, digest) = try Self.randomFile(mib: 50, name: "fifty.bin")
        defer { try? FileManager.default.removeItem(at: source.deletingLastPathComponent()) }
        try await Self.withNamespace { url, browser, _, _, _ in
            let (alice, bob) = try await Self.pairedOnDataChannel(browser, url)
            let start = ContinuousClock.now
            #expect(try await Self.transfer(source, from: alice, to: bob, timeout: .seconds(180)) == digest)
            let elapsed = ContinuousClock.now - start
            let state = "document.querySelector('#transfers li')?.dataset.state ?? ''"
            #expect(try await BrowserPagesTests.waitFor(alice, state, "sent") == "sent")
            // The SHA-256 above is of the blob the Save link hands out (the CSP keeps the page
            // from fetching even its own blob: URLs, so the test cannot read it back).
            #expect(try await bob.evaluate("document.querySelector('#transfers li .label').textContent") as? String
                == "fifty.bin (50.0 MiB) arrived; SHA-256 checked")
            #expect(try await bob.evaluate("document.querySelector('#transfers li a').download") as? String == "fifty.bin")
            // Chunks went peer to peer.
            #expect(try await Self.counts(bob, "arrived").direct > 800)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            BrowserPagesTests.emit("browser file over the DataChannel, 50 MiB, accept to checked", 50 / seconds, "MiB/s")
        }
    }

    @Test("speed: invite → DataChannel open p50 over 10 runs, messages per second over the DataChannel")
    func speed() async throws {
        try await Self.withNamespace { url, browser, _, _, _ in
            let (p50, sender, receiver) = try await BrowserPagesTests.pairingP50(browser, url + "/") { (creator: DevToolsPage) async throws in
                let path = try await BrowserPagesTests.waitFor(creator, Self.path, Self.direct)
                #expect(path == Self.direct)
            }
            BrowserPagesTests.emit("browser invite → first message and DataChannel open, p50 (target ≤ 500)", p50, "ms")
            #expect(try await BrowserPagesTests.waitFor(receiver, Self.path, Self.direct) == Self.direct)
            let rate = try await BrowserPagesTests.messagesPerSecond(from: sender, to: receiver, count: 1_000)
            #expect(try await Self.counts(sender, "sent").relay < 20)
            BrowserPagesTests.emit("browser messages per second, page to page over the DataChannel", rate, "messages/s")
        }
    }
}
