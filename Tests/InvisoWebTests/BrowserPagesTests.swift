import Foundation
import InvisoTesting
import Testing

/// Two browser pages of `inviso serve`'s client: pairing by invite and chatting over the
/// relay, and the speed figures of issue 21's section 4 (printed as JSON lines, not
/// asserted).
@Suite("Browser: two pages over the relay, and speed", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserPagesTests {
    /// Clicks `id` in `page`.
    static func click(_ page: DevToolsPage, _ id: String) async throws {
        _ = try await page.evaluate("document.getElementById('\(id)').click()")
    }

    /// Types `text` into the input `id` of `page`.
    static func type(_ page: DevToolsPage, _ id: String, _ text: String) async throws {
        _ = try await page.evaluate("document.getElementById('\(id)').value = \(BrowserChatTests.jsString(text))")
    }

    /// The texts of the messages `page` shows from its peer.
    static let incoming = "[...document.querySelectorAll('#messages li.in')].map(li => li.textContent).join('|')"

    /// Polls `expression` in `page` until it gives `expected` (or 60 s pass); returns the
    /// last value.
    static func waitFor(
        _ page: DevToolsPage, _ expression: String, _ expected: String, timeout: Duration = .seconds(60)
    ) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var value = ""
        while ContinuousClock.now < deadline {
            // A page that is navigating (a reload) has no context for a moment: try again.
            value = (try? await page.evaluate(expression)) as? String ?? ""
            if value == expected { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return value
    }

    /// `creator` makes an invite, `joiner` joins it and sends one message; returns the time
    /// from the click on "Create an invite" until the creator shows that message.
    static func pair(_ creator: DevToolsPage, _ joiner: DevToolsPage) async throws -> Duration {
        let start = ContinuousClock.now
        try await click(creator, "create")
        let invite = try await BrowserChatTests.waitForText(creator, "document.getElementById('invite').textContent")
        try await type(joiner, "invite-input", invite)
        try await click(joiner, "join")
        _ = try await BrowserChatTests.waitForText(joiner, "document.getElementById('safety-number').textContent")
        try await type(joiner, "message-input", "first")
        try await click(joiner, "send")
        _ = try await BrowserChatTests.waitForText(creator, incoming)
        return ContinuousClock.now - start
    }

    @Test("two pages pair by invite over the relay, show the same safety number and chat both ways")
    func twoPages() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let alice = try await browser.openApp(url + "/?relay")
            let bob = try await browser.openApp(url + "/?relay")
            _ = try await Self.pair(alice, bob)
            let numbers = [
                try await BrowserChatTests.waitForText(alice, "document.getElementById('safety-number').textContent"),
                try await BrowserChatTests.waitForText(bob, "document.getElementById('safety-number').textContent"),
            ]
            #expect(numbers[0] == numbers[1] && numbers[0].filter(\.isNumber).count == 60)
            for index in 1...20 {
                try await Self.type(alice, "message-input", "alice \(index)")
                try await Self.click(alice, "send")
            }
            try await Self.type(bob, "message-input", "bob says hi")
            try await Self.click(bob, "send")
            let twenty = (1...20).map { "alice \($0)" }.joined(separator: "|")
            #expect(try await Self.waitFor(bob, Self.incoming, twenty) == twenty)
            #expect(try await Self.waitFor(alice, Self.incoming, "first|bob says hi") == "first|bob says hi")
            // Leaving (after its confirmation) tells the peer.
            _ = try await alice.evaluate("window.confirm = () => true")
            try await Self.click(alice, "leave")
            let status = "document.getElementById('status').textContent"
            #expect(try await Self.waitFor(alice, status, "you left the chat: nothing of it is kept") == "you left the chat: nothing of it is kept")
            #expect(try await Self.waitFor(bob, status, "your peer left the chat") == "your peer left the chat")
        }
    }

    @Test("the server restarts under a chat: both pages reconnect on their own, and what was sent meanwhile arrives")
    func serverRestart() async throws {
        let (server, url, root) = try await BrowserChatTests.startServer()
        var current = server
        defer {
            current.kill()
            try? FileManager.default.removeItem(at: root)
        }
        let browser = try await Chromium.launch()
        do {
            let alice = try await browser.openApp(url + "/?relay")
            let bob = try await browser.openApp(url + "/?relay")
            _ = try await Self.pair(alice, bob)
            server.kill()
            _ = await server.waitForExit(timeout: 10)
            let status = "document.getElementById('status').textContent"
            let down = "disconnected from the server: reconnecting…"
            #expect(try await Self.waitFor(alice, status, down) == down)
            try await Self.type(alice, "message-input", "sent while the server was down")
            try await Self.click(alice, "send")
            // The same port and data folder: the room is still there (SQLite).
            let port = try #require(URL(string: url)?.port)
            let again = try ChildProcess(
                try InvisoExecutable.locate(), ["serve"],
                environment: ["INVISO_PORT": String(port), "INVISO_DATA": root.appendingPathComponent("server").path, "INVISO_HOST": "127.0.0.1"])
            current = again
            _ = try #require(await again.waitForEvent(timeout: 60) { $0["event"] as? String == "listening" }, "\(again.transcript)")
            #expect(try await Self.waitFor(bob, Self.incoming, "sent while the server was down") == "sent while the server was down")
            try await Self.type(bob, "message-input", "back")
            try await Self.click(bob, "send")
            #expect(try await Self.waitFor(alice, Self.incoming, "first|back") == "first|back")
            let delivered = "String(document.querySelectorAll('#messages li.out.delivered').length)"
            #expect(try await Self.waitFor(alice, delivered, "1") == "1")
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    /// Presses `key` in `page` as a keyboard would (DevTools `Input.dispatchKeyEvent`).
    static func press(_ page: DevToolsPage, _ key: String) async throws {
        let code: Int = key == "Tab" ? 9 : 13
        var down: [String: any Sendable] = ["type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code]
        if key == "Enter" { down["text"] = "\r" }
        _ = try await page.send("Input.dispatchKeyEvent", down)
        _ = try await page.send("Input.dispatchKeyEvent", ["type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code])
    }

    /// Presses Tab until the element `id` has the focus (at most 40 times).
    static func tab(_ page: DevToolsPage, to id: String) async throws {
        for _ in 0..<40 {
            if try await page.evaluate("document.activeElement?.id") as? String == id { return }
            try await press(page, "Tab")
        }
        throw BrowserTestError("Tab never reached #\(id)")
    }

    /// The controls of `page` (hidden ones too) with no name a screen reader could read.
    static let unnamed = """
        [...document.querySelectorAll('input, select, button, output, progress, textarea')].filter((e) => {
          const labelled = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || [...(e.labels ?? [])].some((l) => l.textContent.trim());
          return !(labelled || (e.tagName === 'BUTTON' && e.textContent.trim()));
        }).map((e) => e.id || e.outerHTML.slice(0, 80))
        """

    /// Whether `page` fits its window's width (nothing to scroll sideways).
    static let fits = "document.documentElement.scrollWidth <= window.innerWidth"

    @Test("with the keyboard alone, at a phone's width: pair and chat; every control has a name; nothing is wider than the window")
    func keyboardAndPhoneWidth() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let alice = try await browser.openApp(url + "/?relay")
            let bob = try await browser.openApp(url + "/?relay")
            for page in [alice, bob] {
                _ = try await page.send("Emulation.setDeviceMetricsOverride", ["width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": true])
                #expect(try await page.evaluate(Self.unnamed) as? [String] == [])
                #expect(try await page.evaluate(Self.fits) as? Bool == true)
            }
            // Alice: Tab to "Create an invite", Enter.
            _ = try await alice.send("Page.bringToFront")
            try await Self.tab(alice, to: "create")
            try await Self.press(alice, "Enter")
            let invite = try await BrowserChatTests.waitForText(alice, "document.getElementById('invite').textContent")
            #expect(try await alice.evaluate(Self.fits) as? Bool == true, "the invite, its link or its QR code is wider than a phone")
            // Bob: Tab to the invite field, type it, Enter.
            _ = try await bob.send("Page.bringToFront")
            try await Self.tab(bob, to: "invite-input")
            _ = try await bob.send("Input.insertText", ["text": invite])
            try await Self.press(bob, "Enter")
            _ = try await BrowserChatTests.waitForText(bob, "document.getElementById('safety-number').textContent")
            // Secured: the message field has the focus; type, Enter.
            #expect(try await BrowserPagesTests.waitFor(bob, "document.activeElement?.id ?? ''", "message-input") == "message-input")
            let long = String(repeating: "unbroken", count: 40)
            _ = try await bob.send("Input.insertText", ["text": "typed " + long])
            try await Self.press(bob, "Enter")
            #expect(try await Self.waitFor(alice, Self.incoming, "typed " + long) == "typed " + long)
            for page in [alice, bob] {
                #expect(try await page.evaluate(Self.unnamed) as? [String] == [])
                #expect(try await page.evaluate(Self.fits) as? Bool == true, "the chat is wider than a phone")
            }
        }
    }

    @Test("speed: invite → first message p50 over 10 runs, messages per second, ChaCha20-Poly1305 against AES-GCM")
    func speed() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let (p50, sender, receiver) = try await Self.pairingP50(browser, url + "/?relay") { _ in }
            Self.emit("browser invite → first message p50, relay (target ≤ 500)", p50, "ms")

            let rate = try await Self.messagesPerSecond(from: sender, to: receiver, count: 300)
            Self.emit("browser messages per second, page to page over the relay", rate, "messages/s")
        }
        let bench = try await Chromium.launch()
        do {
            try await StaticServer.with { base in
                let page = try await bench.open("\(base)/test/index.html")
                let text = try #require(
                    try await page.evaluate("import('/test/bench.js').then(m => m.benchCiphers()).then(r => JSON.stringify(r))") as? String)
                let result = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Double])
                let chacha = try #require(result["chachapoly"])
                let gcm = try #require(result["aesgcm"])
                #expect(result["implementation"] == 1, "the WebAssembly core did not load")
                Self.emit("browser ChaCha20-Poly1305 seal, 1 MiB, WebAssembly (target ≥ 0.2 × AES-GCM)", chacha, "MiB/s", baseline: gcm)
                if let javascript = result["javascript"] {
                    Self.emit("browser ChaCha20-Poly1305 seal, 1 MiB, JavaScript", javascript, "MiB/s", baseline: gcm)
                }
            }
        } catch {
            await bench.close()
            throw error
        }
        await bench.close()
    }

    /// Ten fresh pairs of pages of `app`, each timed from "Create an invite" until the
    /// creator shows the joiner's first message and `then` (also timed) returned; the median
    /// in ms, and the last pair (the earlier ones are closed).
    static func pairingP50(
        _ browser: Chromium, _ app: String, then: (DevToolsPage) async throws -> Void
    ) async throws -> (Double, DevToolsPage, DevToolsPage) {
        var times: [Double] = []
        var last: (DevToolsPage, DevToolsPage)?
        for _ in 0..<10 {
            if let (a, b) = last {
                await a.close()
                await b.close()
            }
            let creator = try await browser.openApp(app)
            let joiner = try await browser.openApp(app)
            let start = ContinuousClock.now
            _ = try await Self.pair(creator, joiner)
            try await then(creator)
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
            last = (creator, joiner)
        }
        let (sender, receiver) = try #require(last)
        return (times.sorted()[times.count / 2], sender, receiver)
    }

    /// Messages per second from `sender` to `receiver` (a fresh pair: `receiver` shows no
    /// message from `sender` yet): `count` typed and sent at once, until all are shown.
    static func messagesPerSecond(from sender: DevToolsPage, to receiver: DevToolsPage, count: Int) async throws -> Double {
        let start = ContinuousClock.now
        _ = try await sender.evaluate("""
            (() => { const input = document.getElementById('message-input'), send = document.getElementById('send');
              for (let i = 1; i <= \(count); i++) { input.value = 'm' + i; send.click(); } })()
            """)
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let shown = try await receiver.evaluate("document.querySelectorAll('#messages li.in').length") as? Int ?? 0
            if shown >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let elapsed = ContinuousClock.now - start
        #expect(try await receiver.evaluate("document.querySelectorAll('#messages li.in').length") as? Int == count)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// One JSON line like the other benches' (`name`, `value`, `unit`, and `baseline` and
    /// `ratio` where there is one).
    static func emit(_ name: String, _ value: Double, _ unit: String, baseline: Double? = nil) {
        var object: [String: Any] = ["name": name, "value": (value * 10).rounded() / 10, "unit": unit]
        if let baseline {
            object["baseline"] = (baseline * 10).rounded() / 10
            object["ratio"] = (value / baseline * 1000).rounded() / 1000
        }
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
