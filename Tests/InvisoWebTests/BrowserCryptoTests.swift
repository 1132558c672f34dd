import Foundation
import Testing

/// The page's crypto modules (`web/js/crypto`) run in a real headless Chromium against the
/// public vectors: RFC 8439 for ChaCha20-Poly1305, the Noise vectors the Swift tests use
/// (cacophony and snow), CPace draft-21 and RFC 9380's Elligator 2 — and the page asks no
/// other origin for anything.
@Suite("Browser: crypto vectors in Chromium", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserCryptoTests {
    @Test("ChaCha20-Poly1305, Noise, CPace and Elligator 2 pass their vectors in the browser")
    func vectors() async throws {
        // Noise: the 448 and BLAKE2 vectors are skipped (no WebCrypto for them).
        try await runBrowserVectors(
            "import('/test/crypto-vectors.js').then(m => m.runCryptoVectors('/vectors')).then(r => JSON.stringify(r))",
            minimums: [("rfc8439", 30), ("noise", 400), ("cpace", 30)])
    }
}

/// The page's Double Ratchet, safety number and v2 pairing against libsignal's vectors and
/// the v2 session the Swift side writes (`web/test/vectors/v2-session.json`): the page
/// plays the creator and then the joiner with their recorded randomness and must send the
/// Swift side's frames byte for byte.
@Suite("Browser: ratchet and v2 session in Chromium", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserSessionTests {
    @Test("libsignal's chain step and safety numbers, the iOS app's v1 frames, and the Swift v2 session replayed as either side")
    func sessionVectors() async throws {
        try await runBrowserVectors(
            "import('/test/session-vectors.js').then(m => m.runSessionVectors('/vectors')).then(r => JSON.stringify(r))",
            minimums: [("signal", 4), ("v1", 10), ("v2", 20)])
    }
}

/// The page's decoders (file offers and chunks, kept sessions, JSON with bytes, sender
/// names) under mutated and random input, with a fixed seed (`web/test/fuzz.js`).
@Suite("Browser: the page's decoders fuzzed", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserFuzzTests {
    @Test("mutated offers, chunk frames, kept sessions and names: refused or whole, never half-valid")
    func fuzz() async throws {
        try await runBrowserVectors(
            "import('/test/fuzz.js').then(m => m.runFuzz()).then(r => JSON.stringify(r))", minimums: [("fuzz", 8)])
    }
}

/// The page's QR encoder (`web/js/chat/qr.js`, a port of the CLI's) against the vectors
/// the CLI's encoder passes: python-qrcode's symbols for every mask, codewords, block
/// layouts, alignment positions, format and version words.
@Suite("Browser: the page's QR encoder", .enabled(if: Chromium.shouldRun, "Chromium is not installed (apt-get install chromium); under CI=true this suite runs and fails without it"))
struct BrowserQRTests {
    @Test("python-qrcode's symbols and the CLI's QR vectors in the page")
    func qrVectors() async throws {
        try await runBrowserVectors(
            "import('/test/qr-vectors.js').then(m => m.runQRVectors('/cli-vectors/qr-vectors.json')).then(r => JSON.stringify(r))",
            minimums: [("qr", 300)])
    }
}

/// Loads the test page in a fresh headless Chromium and returns what `expression` (a
/// promise of a JSON string of `{group: {passed, failed, skipped, failures}}`) gives;
/// checks every group has no failure and at least its minimum of passed checks.
func runBrowserVectors(_ expression: String, minimums: [(String, Int)]) async throws {
    let browser = try await Chromium.launch()
    do {
        try await StaticServer.with { base in
            let page = try await browser.open("\(base)/test/index.html")
            let text = try #require(try await page.evaluate(expression) as? String)
            let results = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [String: Any]])
            for (group, minimum) in minimums {
                let result = try #require(results[group], "no \(group) results")
                let passed = result["passed"] as? Int ?? 0
                let skipped = result["skipped"] as? Int ?? 0
                #expect(result["failed"] as? Int == 0, "\(group): \(result["failures"] ?? [])")
                #expect(passed >= minimum, "\(group): only \(passed) checks ran")
                print("browser \(group): \(passed) passed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
            }
            // Everything the page fetched came from the page's own origin.
            let urls = page.requestedURLs
            #expect(!urls.isEmpty)
            #expect(urls.allSatisfy { $0.hasPrefix(base + "/") }, "requests to another origin: \(urls.filter { !$0.hasPrefix(base + "/") })")
        }
    } catch {
        await browser.close()
        throw error
    }
    await browser.close()
}
