import Foundation
import InvisoCrypto
import InvisoKit
import InvisoTesting
import Testing

/// Contacts in the page (`docs/protocol.md`, "Contacts"): the page derives the CLI's call
/// invites and contact secrets; a page and `inviso` save each other in a verified chat,
/// then call each other with no code, the page answers a call while it waits for calls,
/// and a call whose peer does not hold the pinned key ends before any message.
@Suite("Browser: contacts and calls, with the CLI", .serialized, .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserContactsTests {
    static let passphrase = "contacts in the page"

    /// One derivation checked both ways: a call invite and a contact secret.
    struct Case: Sendable {
        var secret: [UInt8], window: Int64, slot: Int, invite: String
        var ours: [UInt8], ourNonce: [UInt8], theirs: [UInt8], theirNonce: [UInt8], contactSecret: String
    }

    @Test("the page's call invites and contact secrets are ContactCall's, byte for byte; malformed offers are refused")
    func derivations() async throws {
        var generator = SystemRandomNumberGenerator()
        let windows: [Int64] = [0, 1, 19, 5_000_000, 5_900_000, 6_000_001, Int64(UInt32.max), 1 << 40]
        let cases: [Case] = windows.enumerated().map { index, window in
            let bytes = { (count: Int) in (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            let secret = bytes(32)
            let (ours, theirs, ourNonce, theirNonce) = (bytes(32), bytes(32), bytes(32), bytes(32))
            let contactSecret = ContactCall.secret(ourIdentity: ours, ourNonce: ourNonce, theirIdentity: theirs, theirNonce: theirNonce)
            return Case(
                secret: secret, window: window, slot: index % ContactCall.slotsPerWindow,
                invite: ContactCall.invite(secret: SecretBytes(secret), window: window, slot: index % ContactCall.slotsPerWindow).text,
                ours: ours, ourNonce: ourNonce, theirs: theirs, theirNonce: theirNonce,
                contactSecret: contactSecret.withUnsafeBytes { Hex.encode(Array($0)) })
        }
        let browser = try await Chromium.launch()
        do {
            try await StaticServer.with { base in
                let page = try await browser.open("\(base)/test/index.html")
                for item in cases {
                    let invite = try await page.evaluate("""
                        import('/js/chat/contacts.js').then(async (m) => { const i = await m.callInvite(new Uint8Array(\(item.secret)), \(item.window), \(item.slot));
                          return [i.joinCode, ...i.words].join('-'); })
                        """) as? String
                    #expect(invite == item.invite, "window \(item.window) slot \(item.slot)")
                    let secret = try await page.evaluate("""
                        import('/js/chat/contacts.js').then(async (m) => { const s = await m.contactSecret({ ourIdentity: new Uint8Array(\(item.ours)),
                          ourNonce: new Uint8Array(\(item.ourNonce)), theirIdentity: new Uint8Array(\(item.theirs)), theirNonce: new Uint8Array(\(item.theirNonce)) });
                          return Array.from(s, (b) => b.toString(16).padStart(2, '0')).join(''); })
                        """) as? String
                    #expect(secret == item.contactSecret)
                }
                let parsed = try await page.evaluate("""
                    import('/js/chat/contacts.js').then((m) => [
                      m.parseContactOffer({ identity: 'ab'.repeat(32), nonce: '01'.repeat(32) }) !== null,
                      m.parseContactOffer({ identity: 'ab'.repeat(31), nonce: '01'.repeat(32) }) === null,
                      m.parseContactOffer({ identity: '00'.repeat(32), nonce: '01'.repeat(32) }) === null,
                      m.parseContactOffer({ identity: 'zz'.repeat(32), nonce: '01'.repeat(32) }) === null,
                      m.parseContactOffer({ identity: 7, nonce: null }) === null,
                      m.parseContactOffer(null) === null])
                    """) as? [Bool]
                #expect(parsed == [true, true, true, true, true, true])
            }
        } catch {
            await browser.close()
            throw error
        }
        await browser.close()
    }

    /// Unlocks the page's vault (after a load) and waits until its contacts are listed.
    static func unlock(_ page: DevToolsPage) async throws {
        #expect(try await BrowserPagesTests.waitFor(page, "String(document.getElementById('kept')?.hidden)", "false") == "false")
        try await BrowserPagesTests.type(page, "unlock-input", Self.passphrase)
        try await BrowserPagesTests.click(page, "unlock")
        #expect(try await BrowserPagesTests.waitFor(page, "String(document.getElementById('contacts').hidden)", "false") == "false")
        _ = try await page.evaluate("window.confirm = () => true")
    }

    static func event(_ process: ChildProcess, _ name: String) async -> [String: Any]? {
        await process.waitForEvent(timeout: 60) { $0["event"] as? String == name }
    }

    /// `inviso` processes against one server and one data folder, killed at the end.
    final class CLI: @unchecked Sendable {
        let binary: URL, url: String, data: String
        var processes: [ChildProcess] = []
        init(url: String, root: URL) throws {
            binary = try InvisoExecutable.locate()
            self.url = url
            data = root.appendingPathComponent("cli").path
        }
        func start(_ arguments: [String]) throws -> ChildProcess {
            let process = try ChildProcess(binary, arguments + ["--json", "--server", url, "--data", data, "--no-direct"])
            processes.append(process)
            return process
        }
        deinit { for process in processes { process.kill() } }
    }

    /// A page of `app` ("Ada", keeping its chats) invites, the CLI ("Grace") joins; both
    /// save each other; the CLI exits. Returns a fresh page of `app` (a reload), unlocked.
    static func pairSaveAndReload(_ browser: Chromium, _ app: String, _ cli: CLI) async throws -> DevToolsPage {
        try await pairAndSave(try await browser.openApp(app), cli)
        let page = try await browser.openApp(app)
        try await Self.unlock(page)
        return page
    }

    /// `page` ("Ada", keeping its chats) invites, the CLI ("Grace") joins; both save each
    /// other; the CLI exits.
    static func pairAndSave(_ page: DevToolsPage, _ cli: CLI) async throws {
        _ = try await page.evaluate("document.getElementById('keep').click()")
        try await BrowserPagesTests.type(page, "passphrase-input", Self.passphrase)
        try await BrowserPagesTests.type(page, "name-input", "Ada")
        try await BrowserPagesTests.click(page, "create")
        let invite = try await BrowserChatTests.waitForText(page, "document.getElementById('invite').textContent")
        let joiner = try cli.start(["join", invite, "--as", "Grace"])
        _ = try #require(await Self.event(joiner, "connected"), "\(joiner.transcript)")
        _ = try await BrowserChatTests.waitForText(page, "document.getElementById('safety-number').textContent")
        #expect(try await BrowserPagesTests.waitFor(page, "String(document.getElementById('save-form').hidden)", "false") == "false")
        try await BrowserPagesTests.type(page, "save-input", "Grace")
        try await BrowserPagesTests.click(page, "save-contact")
        _ = try #require(await Self.event(joiner, "contact_offered"), "\(joiner.transcript)")
        joiner.write(#"{"command":"save","name":"Ada"}"# + "\n")
        let saved = try #require(await Self.event(joiner, "contact_saved"), "\(joiner.transcript)")
        let status = "document.getElementById('status').textContent"
        let said = try await BrowserChatTests.waitForText(page, "(\(status).startsWith('saved Grace') ? \(status) : '')")
        // Each side pinned the other's identity key: the CLI's fingerprint of "Ada" is the page's key.
        let pageKey = try #require(try await page.evaluate(
            "invisoChat.contacts.identityPublic().then((k) => Array.from(k.slice(0, 8), (b) => b.toString(16).padStart(2, '0')).join(''))") as? String)
        #expect(saved["fingerprint"] as? String == pageKey)
        #expect(said.contains("(") && !said.contains(pageKey), "the page shows the CLI's fingerprint, not its own: \(said)")
        joiner.closeInput()
        #expect(await joiner.waitForExit(timeout: 60) == 0, "\(joiner.transcript)")
    }

    @Test("a page and the CLI save each other, then call each other without a code; a second call in the window takes the next slot; a wrong pinned key ends the call")
    func saveAndCall() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, root, browser in
            let cli = try CLI(url: url, root: root)
            let app = url + "/?relay"
            // Later (a reload): the page calls Grace, the CLI calls Ada; no code typed.
            var page = try await Self.pairSaveAndReload(browser, app, cli)
            let listed = try await BrowserChatTests.waitForText(
                page, "[...document.querySelectorAll('#contacts-list li .name')].map(e => e.textContent).join('|')")
            #expect(listed == "Grace")
            _ = try await page.evaluate("document.querySelector('#contacts-list button[data-action=call]').click()")
            let caller = try cli.start(["call", "Ada"])
            let connected = try #require(await Self.event(caller, "connected"), "\(caller.transcript)")
            #expect(connected["protocol"] as? String == "v2" && connected["verified"] as? Bool == true)
            _ = try await BrowserChatTests.waitForText(page, "document.getElementById('safety-number').textContent")
            #expect(try await page.evaluate("document.getElementById('peer-name').textContent") as? String == "Grace")
            try await BrowserWebRTCTests.send(page, "calling you back")
            #expect(await caller.waitForMessageTexts(count: 1) == ["calling you back"], "\(caller.transcript)")
            caller.write("heard you\n")
            #expect(try await BrowserPagesTests.waitFor(page, BrowserPagesTests.incoming, "heard you") == "heard you")
            caller.closeInput()
            _ = await caller.waitForExit(timeout: 60)

            // A second call (this window's first code is used now), to a contact whose pinned
            // key is not the peer's: the page ends it before any message.
            page = try await browser.openApp(app)
            _ = try await page.evaluate("""
                Promise.all([import('/web/js/store/vault.js'), import('/web/js/chat/contacts.js')]).then(async ([v, c]) => {
                  const vault = await v.Vault.open(\(BrowserChatTests.jsString(Self.passphrase)));
                  const [{ id, ...grace }] = await new c.ContactBook(vault).all();
                  await vault.put(id, { version: 1, ...grace, identity: grace.identity.map((b) => b ^ 1) }, 'contact'); })
                """)
            try await Self.unlock(page)
            let second = try cli.start(["call", "Ada"])
            _ = try #require(await Self.event(second, "calling"), "\(second.transcript)")
            _ = try await page.evaluate("document.querySelector('#contacts-list button[data-action=call]').click()")
            let refused = try await BrowserChatTests.waitForText(page, "document.getElementById('error').textContent")
            #expect(refused.hasPrefix("the peer is not Grace"), "\(refused)")
            #expect(try await page.evaluate("document.getElementById('safety-number').textContent") as? String == "")
            #expect(try await page.evaluate("document.getElementById('chat').hidden") as? Bool == true)
        }
    }

    @Test("a page waiting for calls answers the CLI's call")
    func waitForCalls() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, root, browser in
            let cli = try CLI(url: url, root: root)
            let app = url + "/?relay"
            let page = try await Self.pairSaveAndReload(browser, app, cli)
            try await BrowserPagesTests.click(page, "listen")
            // Its room is open once it says it waits: the CLI then joins at once.
            let text = "document.getElementById('calling-text').textContent"
            #expect(try await BrowserChatTests.waitForText(page, "\(text).startsWith('Waiting') ? \(text) : ''") == "Waiting for a call from Grace…")
            let caller = try cli.start(["call", "Ada"])
            _ = try #require(await Self.event(caller, "connected"), "\(caller.transcript)")
            caller.write("picked up?\n")
            #expect(try await BrowserPagesTests.waitFor(page, BrowserPagesTests.incoming, "picked up?") == "picked up?")
            try await BrowserWebRTCTests.send(page, "yes")
            #expect(await caller.waitForMessageTexts(count: 1) == ["yes"], "\(caller.transcript)")
            #expect(try await page.evaluate("document.getElementById('peer-name').textContent") as? String == "Grace")
        }
    }
}
