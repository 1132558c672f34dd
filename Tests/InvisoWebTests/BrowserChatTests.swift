import Foundation
import InvisoTesting
import Testing

/// The browser client as `inviso serve` serves it: the page and its headers, then a
/// browser that creates an invite and an `inviso join --json` process that joins it, and
/// messages both ways over the relay.
@Suite("Browser: the page served by inviso serve, chatting with the CLI", .serialized, .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserChatTests {
    /// `inviso serve` on a free port and its URL.
    static func startServer() async throws -> (ChildProcess, String, URL) {
        let binary = try InvisoExecutable.locate()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let server = try ChildProcess(
            binary, ["serve"],
            environment: ["INVISO_PORT": "0", "INVISO_DATA": root.appendingPathComponent("server").path, "INVISO_HOST": "127.0.0.1"])
        guard let listening = await server.waitForEvent(timeout: 60, { $0["event"] as? String == "listening" }),
            let url = listening["url"] as? String
        else {
            server.kill()
            throw BrowserTestError("the server did not start: \(server.transcript)")
        }
        return (server, url, root)
    }

    /// Runs `body` with a fresh `inviso serve` (its URL and data folder) and a fresh
    /// Chromium; closes and deletes both afterwards, also when `body` throws.
    static func withServerAndBrowser(_ body: (String, URL, Chromium) async throws -> Void) async throws {
        let (server, url, root) = try await startServer()
        defer {
            server.kill()
            try? FileManager.default.removeItem(at: root)
        }
        let browser = try await Chromium.launch()
        do {
            try await body(url, root, browser)
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    /// Polls `expression` in `page` until it returns a non-empty string.
    static func waitForText(_ page: DevToolsPage, _ expression: String, timeout: Duration = .seconds(60)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let text = (try? await page.evaluate(expression)) as? String, !text.isEmpty { return text }
            try await Task.sleep(for: .milliseconds(50))
        }
        // What the page itself said, for the failure's message.
        let said = (try? await page.evaluate(
            "'status: ' + document.getElementById('status')?.textContent + '; error: ' + document.getElementById('error')?.textContent")) as? String
        let requests = page.requestedURLs.suffix(8).joined(separator: ", ")
        let answered = page.responses.suffix(8).map(\.url).joined(separator: ", ")
        throw BrowserTestError(
            "timed out waiting for \(expression) (\(said ?? "the page does not answer"); requests: \(requests); answered: \(answered))")
    }

    /// The page's v1 safety number and the CLI's (`verify`) for the same chat.
    static func v1Numbers(_ page: DevToolsPage, _ cli: ChildProcess) async throws -> (String, String) {
        let pageNumber = try await Self.waitForText(page, "document.getElementById('safety-number').textContent")
        cli.write("{\"command\":\"verify\"}\n")
        let verify = try #require(await cli.waitForEvent(timeout: 60) { $0["event"] as? String == "safety_number" }, "\(cli.transcript)")
        return (pageNumber.replacingOccurrences(of: " ", with: ""), (verify["digits"] as? String ?? "").replacingOccurrences(of: " ", with: ""))
    }

    @Test("v1 with the CLI: the page joins with six digits, or invites and the CLI joins with six digits; unverified, same safety number, messages both ways", arguments: [true, false])
    func v1WithTheCLI(pageJoins: Bool) async throws {
        var cli: ChildProcess?
        defer { cli?.kill() }
        try await Self.withServerAndBrowser { url, root, browser in
            let page = try await browser.openApp(url + "/?relay")
            let data = root.appendingPathComponent("cli").path
            if pageJoins {
                let inviter = try ChildProcess(try InvisoExecutable.locate(), ["invite", "--json", "--server", url, "--data", data, "--no-direct"])
                cli = inviter
                let invite = try #require(await inviter.waitForEvent(timeout: 60) { $0["event"] as? String == "invite" }, "\(inviter.transcript)")
                let code = try #require(invite["code"] as? String)
                try await BrowserPagesTests.type(page, "invite-input", code)
                try await BrowserPagesTests.click(page, "join")
            } else {
                try await BrowserPagesTests.click(page, "create")
                let invite = try await Self.waitForText(page, "document.getElementById('invite').textContent")
                let joiner = try ChildProcess(
                    try InvisoExecutable.locate(),
                    ["join", String(invite.prefix(6)), "--json", "--server", url, "--data", data, "--no-direct"])
                cli = joiner
            }
            let process = try #require(cli)
            let connected = try #require(
                await process.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(process.transcript)")
            #expect(connected["protocol"] as? String == "v1")
            #expect(connected["verified"] as? Bool == false)
            #expect(try await BrowserPagesTests.waitFor(page, "String(document.getElementById('v1-warning').hidden)", "false") == "false")
            #expect(try await page.evaluate("document.getElementById('status').textContent") as? String == "encrypted, unverified (v1)")
            let (pageNumber, cliNumber) = try await Self.v1Numbers(page, process)
            #expect(pageNumber == cliNumber && pageNumber.count == 60)
            try await BrowserWebRTCTests.send(page, "over v1 from the page")
            process.write("over v1 from the CLI\n")
            #expect(await process.waitForMessageTexts(count: 1) == ["over v1 from the page"], "\(process.transcript)")
            #expect(try await BrowserPagesTests.waitFor(page, BrowserPagesTests.incoming, "over v1 from the CLI") == "over v1 from the CLI")
            // Marked verified once compared.
            try await BrowserPagesTests.click(page, "mark-verified")
            #expect(try await page.evaluate("document.getElementById('status').textContent") as? String == "encrypted, verified by you (v1)")
        }
    }

    @Test("files between a page and the CLI over the relay, both ways, with the CLI's protocol; a hostile name is cleaned")
    func filesWithTheCLI() async throws {
        var cli: ChildProcess?
        defer { cli?.kill() }
        let (toPage, toPageDigest) = try BrowserWebRTCTests.randomFile(mib: 2, name: "from-cli.bin")
        let (toCLI, toCLIDigest) = try BrowserWebRTCTests.randomFile(mib: 1, name: "from-page.bin")
        defer {
            try? FileManager.default.removeItem(at: toPage.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: toCLI.deletingLastPathComponent())
        }
        try await Self.withServerAndBrowser { url, root, browser in
            let page = try await browser.openApp(url + "/?relay")
            _ = try await page.evaluate("document.getElementById('create').click()")
            let invite = try await Self.waitForText(page, "document.getElementById('invite').textContent")
            let downloads = root.appendingPathComponent("downloads")
            let joiner = try ChildProcess(
                try InvisoExecutable.locate(),
                ["join", invite, "--json", "--server", url, "--data", root.appendingPathComponent("cli").path, "--no-direct",
                 "--downloads", downloads.path])
            cli = joiner
            _ = try #require(await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(joiner.transcript)")

            // CLI → page, under a name that tries to leave the folder.
            joiner.write(#"{"command":"send","path":"\#(toPage.path)","name":"../../evil.bin"}"# + "\n")
            let accept = "document.querySelector('#transfers li[data-state=incoming] button[data-action=accept]')"
            #expect(try await BrowserPagesTests.waitFor(page, "String(!!\(accept))", "true") == "true")
            #expect(try await page.evaluate("document.querySelector('#transfers li .label').textContent") as? String
                == "Your peer offers evil.bin (2.0 MiB)")
            _ = try await page.evaluate("\(accept).click()")
            let received = try await Self.waitForText(
                page, "document.querySelector('#transfers li[data-state=received] a')?.dataset.sha256 ?? ''", timeout: .seconds(120))
            #expect(received == toPageDigest)
            #expect(try await page.evaluate("document.querySelector('#transfers li a').download") as? String == "evil.bin")
            let sent = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "file_sent" }
            #expect(sent?["verified"] as? Bool == true, "\(joiner.transcript)")

            // Page → CLI.
            try await page.chooseFiles("file-input", [toCLI.path])
            try await BrowserPagesTests.click(page, "send-file")
            _ = try #require(await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "file_offer" }, "\(joiner.transcript)")
            joiner.write(#"{"command":"accept_file"}"# + "\n")
            let arrived = try #require(
                await joiner.waitForEvent(timeout: 120) { $0["event"] as? String == "file_received" }, "\(joiner.transcript)")
            #expect(arrived["sha256"] as? String == toCLIDigest)
            let path = try #require(arrived["path"] as? String)
            #expect(URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL.path == downloads.standardizedFileURL.path)
            let state = "[...document.querySelectorAll('#transfers li')].map(li => li.dataset.state).join(',')"
            #expect(try await BrowserPagesTests.waitFor(page, state, "received,sent") == "received,sent")
            // File control messages are not chat messages: nothing shown, no delivery marks.
            #expect(try await page.evaluate("document.querySelectorAll('#messages li').length") as? Int == 0)
            #expect(!joiner.events.contains { $0["event"] as? String == "message" }, "\(joiner.transcript)")
        }
    }

    @Test("a browser creates an invite, the CLI joins it, both are verified and messages go both ways")
    func browserAndCLI() async throws {
        var cli: ChildProcess?
        defer { cli?.kill() }
        try await Self.withServerAndBrowser { url, root, browser in
            // Relay only (`?relay`): outside a test namespace, the page opens no WebRTC connection.
            let page = try await browser.openApp(url + "/?relay")
            // The page came with its security headers, and from nowhere else.
            let document = try #require(page.responses.first { $0.url == url + "/?relay" }, "no response for the page")
            #expect(document.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            #expect(document.headers["x-content-type-options"] == "nosniff")
            #expect(try await page.evaluate("document.title") as? String == "Inviso")
            // The page's CSP lets it compile its own WebAssembly (and nothing else).
            #expect(document.headers["content-security-policy"]?.contains("script-src 'self' 'wasm-unsafe-eval';") == true)
            #expect(try await page.evaluate(
                "import('/web/js/crypto/chacha20poly1305.js').then(m => m.ready.then(() => m.implementation()))") as? String == "wasm")

            try await BrowserPagesTests.type(page, "name-input", "Ada")
            _ = try await page.evaluate("document.getElementById('create').click()")
            let invite = try await Self.waitForText(page, "document.getElementById('invite').textContent")
            #expect(invite.split(separator: "-").count == 4)
            // The link's QR code is drawn in the page, module for module what `inviso qr` makes of it.
            let link = try await Self.waitForText(page, "document.getElementById('invite-link').textContent")
            #expect(link == url + "/#join=" + invite)
            #expect(try await page.evaluate("document.querySelectorAll('#invite-qr svg path').length") as? Int == 1)
            let pageRows = try await page.evaluate("""
                import('/web/js/chat/qr.js').then(m => { const c = m.encodeQRText(\(Self.jsString(link)));
                  return Array.from({ length: c.size }, (_, y) => Array.from(c.modules.subarray(y * c.size, (y + 1) * c.size)).join('')); })
                """) as? [String]
            let qr = try ChildProcess(try InvisoExecutable.locate(), ["qr", link, "--json"])
            let symbol = try #require(await qr.waitForEvent(timeout: 60) { $0["rows"] != nil }, "\(qr.transcript)")
            #expect(pageRows == symbol["rows"] as? [String])
            let joiner = try ChildProcess(
                try InvisoExecutable.locate(),
                ["join", invite, "--json", "--server", url, "--data", root.appendingPathComponent("cli").path, "--no-direct",
                 "--as", "Grace"])
            cli = joiner
            let connected = try #require(
                await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "connected" }, "\(joiner.transcript)")
            #expect(connected["protocol"] as? String == "v2")
            #expect(connected["verified"] as? Bool == true)
            let pageNumber = try await Self.waitForText(page, "document.getElementById('safety-number').textContent")
            joiner.write("{\"command\":\"verify\"}\n")
            let verify = try #require(
                await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "safety_number" }, "\(joiner.transcript)")
            let cliNumber = try #require(verify["digits"] as? String)
            #expect(pageNumber.replacingOccurrences(of: " ", with: "") == cliNumber.replacingOccurrences(of: " ", with: ""))

            // Each side's chosen name reached the other, inside the session.
            let named = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "peer_name" }
            #expect(named?["name"] as? String == "Ada", "\(joiner.transcript)")
            #expect(try await BrowserPagesTests.waitFor(page, "document.getElementById('peer-name').textContent", "Grace") == "Grace")
            // Lifetimes: the CLI proposes, the page accepts; the page proposes, the CLI rejects.
            joiner.write(#"{"command":"lifetime","lifetime":"1h"}"# + "\n")
            #expect(try await BrowserPagesTests.waitFor(page, "String(document.getElementById('lifetime-proposal').hidden)", "false") == "false")
            try await BrowserPagesTests.click(page, "accept-lifetime")
            let agreed = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "lifetime" }
            #expect(agreed?["lifetime"] as? String == "1h", "\(joiner.transcript)")
            #expect(try await page.evaluate("document.getElementById('lifetime').textContent") as? String == "1 hour")
            _ = try await page.evaluate("document.getElementById('lifetime-select').value = 'ephemeral'")
            try await BrowserPagesTests.click(page, "propose-lifetime")
            let proposed = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "lifetime_proposed" }
            #expect(proposed?["lifetime"] as? String == "ephemeral", "\(joiner.transcript)")
            joiner.write(#"{"command":"reject"}"# + "\n")
            let status = "document.getElementById('status').textContent"
            #expect(try await BrowserPagesTests.waitFor(page, status, "your peer rejected the lifetime you proposed") == "your peer rejected the lifetime you proposed")
            #expect(try await page.evaluate("document.getElementById('lifetime').textContent") as? String == "1 hour")
            // Browser → CLI.
            for text in ["hello from the browser", "ünïcødé 👋 and more"] {
                _ = try await page.evaluate(
                    "(() => { const i = document.getElementById('message-input'); i.value = \(Self.jsString(text)); document.getElementById('send').click(); })()")
            }
            #expect(await joiner.waitForMessageTexts(count: 2) == ["hello from the browser", "ünïcødé 👋 and more"], "\(joiner.transcript)")
            // CLI → browser, delivered and marked.
            joiner.write("hello from the CLI\n")
            let shown = try await Self.waitForText(
                page, "[...document.querySelectorAll('#messages li.in')].map(li => li.textContent).join('|')")
            #expect(shown == "hello from the CLI")
            let delivered = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "delivered" }
            #expect(delivered != nil, "the browser's ack never reached the CLI: \(joiner.transcript)")
            let marked = try await Self.waitForText(
                page, "String(document.querySelectorAll('#messages li.out.delivered').length || '')")
            #expect(marked == "2")
            // The page leaves the moment a message arrives, before its ack's 20 ms delay: the
            // ack still goes out first, so the CLI sees its last message delivered.
            _ = try await page.evaluate("""
                (() => { window.confirm = () => true;
                  new MutationObserver(() => { if (document.getElementById('messages').textContent.includes('last one'))
                    document.getElementById('leave').click(); }).observe(document.getElementById('messages'), { childList: true, subtree: true }); })()
                """)
            joiner.write("last one\n")
            let left = await joiner.waitForEvent(timeout: 60) { $0["event"] as? String == "closed" }
            #expect(left?["reason"] as? String == "peerLeft", "\(joiner.transcript)")
            let last = try #require(joiner.events.last { $0["event"] as? String == "sent" }?["id"] as? Int, "\(joiner.transcript)")
            #expect(joiner.events.contains { $0["event"] as? String == "delivered" && $0["id"] as? Int == last }, "\(joiner.transcript)")
            // `INVISO_WEB_SCREENSHOT=PATH` keeps a picture of the chat (docs/web-chat.png).
            if let path = ProcessInfo.processInfo.environment["INVISO_WEB_SCREENSHOT"] {
                let shot = try await page.send("Page.captureScreenshot", ["format": "png"])
                let data = try #require((shot["data"] as? String).flatMap { Data(base64Encoded: $0) })
                try data.write(to: URL(fileURLWithPath: path))
            }
            // Every request of the page went to its own origin.
            #expect(page.requestedURLs.allSatisfy { $0.hasPrefix(url + "/") || $0.hasPrefix(url.replacingOccurrences(of: "http", with: "ws") + "/") },
                    "\(page.requestedURLs)")
        }
    }

    static func jsString(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text])
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
