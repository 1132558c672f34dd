import Foundation
import InvisoTesting
import Testing

/// Chats kept in the page's IndexedDB, sealed under a passphrase: a reload resumes one
/// (history, safety number, the messages sent meanwhile), a wrong passphrase opens
/// nothing, and the store holds no plaintext.
@Suite("Browser: a kept chat survives a reload", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserStoreTests {
    static let outgoing = "[...document.querySelectorAll('#messages li.out')].map(li => li.textContent).join('|')"
    static let passphrase = "correct horse battery staple"

    /// Two pages of `url` (relay only); Alice keeps her chats under ``passphrase``.
    static func keptPages(_ browser: Chromium, _ url: String) async throws -> (DevToolsPage, DevToolsPage) {
        let alice = try await browser.openApp(url + "/?relay")
        let bob = try await browser.openApp(url + "/?relay")
        _ = try await alice.evaluate("document.getElementById('keep').click()")
        #expect(try await alice.evaluate("document.getElementById('passphrase-row').hidden") as? Bool == false)
        try await BrowserPagesTests.type(alice, "passphrase-input", Self.passphrase)
        return (alice, bob)
    }

    @Test("keep, reload, unlock, resume: history back, nothing lost or shown twice; a wrong passphrase is refused")
    func reloadResumes() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let (alice, bob) = try await Self.keptPages(browser, url)
            _ = try await BrowserPagesTests.pair(alice, bob)
            let number = try await BrowserChatTests.waitForText(alice, "document.getElementById('safety-number').textContent")
            try await BrowserWebRTCTests.send(alice, "before reload")
            let delivered = "String(document.querySelectorAll('#messages li.out.delivered').length)"
            #expect(try await BrowserPagesTests.waitFor(alice, delivered, "1") == "1")
            // Renamed on this device: kept with the chat.
            _ = try await alice.evaluate("window.prompt = () => 'Robert'")
            try await BrowserPagesTests.click(alice, "rename")
            #expect(try await BrowserPagesTests.waitFor(alice, "document.getElementById('peer-name').textContent", "Robert") == "Robert")

            // The store holds sealed bytes only.
            let plaintextFound = try await alice.evaluate("""
                new Promise((resolve) => { const open = indexedDB.open('inviso');
                  open.onsuccess = () => { const all = open.result.transaction('vault').objectStore('vault').getAll();
                    all.onsuccess = () => { const text = JSON.stringify(all.result, (k, v) => v instanceof Uint8Array ? Array.from(v) : v);
                      const needle = [...new TextEncoder().encode('before reload')].join(',');
                      resolve(all.result.length >= 2 && (text.includes(needle) || text.includes('before reload'))); }; }; })
                """) as? Bool
            #expect(plaintextFound == false)

            _ = try await alice.evaluate("location.reload()")
            #expect(try await BrowserPagesTests.waitFor(alice, "String(document.getElementById('kept')?.hidden)", "false") == "false")
            try await BrowserWebRTCTests.send(bob, "while you were away")

            try await BrowserPagesTests.type(alice, "unlock-input", "not the passphrase")
            try await BrowserPagesTests.click(alice, "unlock")
            #expect(try await BrowserChatTests.waitForText(alice, "document.getElementById('error').textContent") == "wrong passphrase")
            try await BrowserPagesTests.type(alice, "unlock-input", Self.passphrase)
            try await BrowserPagesTests.click(alice, "unlock")
            let buttons = "String(document.querySelectorAll('#kept-list button[id^=resume-]').length)"
            #expect(try await BrowserPagesTests.waitFor(alice, buttons, "1") == "1")
            let label = try await BrowserChatTests.waitForText(alice, "document.querySelector('#kept-list li span')?.textContent ?? ''")
            #expect(label.hasPrefix("Chat with Robert,"), "\(label)")
            _ = try await alice.evaluate("document.querySelector('#kept-list button[id^=resume-]').click()")

            #expect(try await BrowserChatTests.waitForText(alice, "document.getElementById('safety-number').textContent") == number)
            #expect(try await alice.evaluate("document.getElementById('peer-name').textContent") as? String == "Robert")
            // A resumed v2 chat is still verified: its peer can be saved as a contact.
            #expect(try await alice.evaluate("document.getElementById('save-form').hidden") as? Bool == false)
            #expect(
                try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|while you were away")
                    == "first|while you were away")
            #expect(try await alice.evaluate(Self.outgoing) as? String == "before reload")
            #expect(try await BrowserPagesTests.waitFor(alice, delivered, "1") == "1")
            try await BrowserWebRTCTests.send(alice, "after reload")
            #expect(
                try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, "before reload|after reload")
                    == "before reload|after reload")
            #expect(try await BrowserPagesTests.waitFor(alice, delivered, "2") == "2")
            #expect(try await BrowserPagesTests.waitFor(bob, "String(document.querySelectorAll('#messages li.out.delivered').length)", "2") == "2")
        }
    }

    @Test("a kept v1 chat (six digits) resumes after a reload: counters continue both ways, its mark of verified stays")
    func v1Resumes() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let (alice, bob) = try await Self.keptPages(browser, url)
            try await BrowserPagesTests.click(alice, "create")
            let invite = try await BrowserChatTests.waitForText(alice, "document.getElementById('invite').textContent")
            // Six digits alone: v1, and the creator falls back to it.
            try await BrowserPagesTests.type(bob, "invite-input", String(invite.prefix(6)))
            try await BrowserPagesTests.click(bob, "join")
            let number = try await BrowserChatTests.waitForText(alice, "document.getElementById('safety-number').textContent")
            #expect(try await alice.evaluate("invisoChat.protocol") as? String == "v1")
            try await BrowserWebRTCTests.send(bob, "one")
            try await BrowserWebRTCTests.send(alice, "two")
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "one") == "one")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, "two") == "two")
            try await BrowserPagesTests.click(alice, "mark-verified")

            _ = try await alice.evaluate("location.reload()")
            #expect(try await BrowserPagesTests.waitFor(alice, "String(document.getElementById('kept')?.hidden)", "false") == "false")
            try await BrowserPagesTests.type(alice, "unlock-input", Self.passphrase)
            try await BrowserPagesTests.click(alice, "unlock")
            let label = try await BrowserChatTests.waitForText(alice, "document.querySelector('#kept-list li span')?.textContent ?? ''")
            #expect(label.contains("(v1, verified by you)"), "\(label)")
            _ = try await alice.evaluate("document.querySelector('#kept-list button[id^=resume-]').click()")
            #expect(try await BrowserChatTests.waitForText(alice, "document.getElementById('safety-number').textContent") == number)
            #expect(try await alice.evaluate("document.getElementById('v1-warning').textContent") as? String
                == "Marked verified: you compared the safety number with your peer.")
            #expect(try await alice.evaluate(Self.outgoing) as? String == "two")
            // Alice's counter goes on from the kept one: had it started again at 0, Bob would
            // refuse "three" as a replay (and AES-GCM would have sealed twice under one nonce).
            try await BrowserWebRTCTests.send(alice, "three")
            #expect(try await BrowserPagesTests.waitFor(bob, BrowserPagesTests.incoming, "two|three") == "two|three")
            try await BrowserWebRTCTests.send(bob, "four")
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "one|four") == "one|four")
            #expect(try await alice.evaluate("invisoChat.v1.sendCounter") as? Int == 2)
            #expect(try await alice.evaluate("invisoChat.v1.highest") as? Int == 1)
        }
    }

    @Test("a peer that leaves ends a kept chat: its keys are dropped, its messages stay readable until forgotten")
    func endedChatStaysReadable() async throws {
        try await BrowserChatTests.withServerAndBrowser { url, _, browser in
            let (alice, bob) = try await Self.keptPages(browser, url)
            _ = try await BrowserPagesTests.pair(alice, bob)
            try await BrowserWebRTCTests.send(alice, "hi")
            try await BrowserWebRTCTests.send(bob, "hello")
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|hello") == "first|hello")
            _ = try await bob.evaluate("window.confirm = () => true")
            try await BrowserPagesTests.click(bob, "leave")
            let status = "document.getElementById('status').textContent"
            #expect(try await BrowserPagesTests.waitFor(alice, status, "your peer left the chat") == "your peer left the chat")

            _ = try await alice.evaluate("location.reload()")
            #expect(try await BrowserPagesTests.waitFor(alice, "String(document.getElementById('kept')?.hidden)", "false") == "false")
            try await BrowserPagesTests.type(alice, "unlock-input", Self.passphrase)
            try await BrowserPagesTests.click(alice, "unlock")
            let label = try await BrowserChatTests.waitForText(alice, "document.querySelector('#kept-list li span')?.textContent ?? ''")
            #expect(label.contains(", ended ") && label.hasSuffix("your peer left"), "\(label)")
            // The kept copy holds no key, counter, room or device any more.
            let kept = try await alice.evaluate("""
                import('/web/js/store/vault.js').then(async (v) => { const vault = await v.Vault.open(\(BrowserChatTests.jsString(Self.passphrase)));
                  const [id] = await vault.ids(); const stored = await vault.get(id);
                  return [stored.ended, 'session' in stored, 'v1' in stored, 'roomID' in stored, 'deviceID' in stored, 'outbox' in stored].join(','); })
                """) as? String
            #expect(kept == "true,false,false,false,false,false")
            _ = try await alice.evaluate("document.querySelector('#kept-list button[id^=resume-]').click()")
            #expect(try await BrowserPagesTests.waitFor(alice, BrowserPagesTests.incoming, "first|hello") == "first|hello")
            #expect(try await alice.evaluate(Self.outgoing) as? String == "hi")
            #expect(try await alice.evaluate("document.getElementById('send-form').hidden") as? Bool == true)
            // Back, then Forget: gone.
            try await BrowserPagesTests.click(alice, "back")
            _ = try await alice.evaluate("window.confirm = () => true")
            let forget = "document.querySelector('#kept-list button[aria-label^=Forget]')"
            #expect(try await BrowserChatTests.waitForText(alice, "\(forget) ? 'shown' : ''") == "shown")
            _ = try await alice.evaluate("\(forget).click()")
            #expect(try await BrowserPagesTests.waitFor(alice, "document.getElementById('kept-list').textContent", "No chat is kept.") == "No chat is kept.")
        }
    }
}
