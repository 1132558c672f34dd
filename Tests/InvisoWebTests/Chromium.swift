import Foundation
import InvisoKit
import NIOPosix
import Synchronization

/// A headless Chromium driven over the DevTools protocol (a WebSocket to the browser, one
/// flattened session per page), for the browser tests.
///
/// It is started so that it sends nothing beyond loopback: no background networking, no
/// component updates, sync, extensions or crash reports, and every host name but
/// 127.0.0.1 resolving to nothing.
final class Chromium: Sendable {
    /// Whether the tests can run: a Chromium is installed, or `CI=true` (where a missing
    /// Chromium is a failure, not a skip).
    static var shouldRun: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true" || executable != nil
    }

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    private let process: Process
    private let profile: URL
    /// Forwarders that live as long as the browser (in a namespace).
    private let helpers: [Process]
    let devTools: DevToolsConnection

    private init(process: Process, profile: URL, helpers: [Process], devTools: DevToolsConnection) {
        self.process = process
        self.profile = profile
        self.helpers = helpers
        self.devTools = devTools
    }

    /// Starts a browser and connects to it. In `namespace`, the browser runs there with
    /// WebRTC's host candidates unmasked (no mDNS names), and the test reaches its
    /// DevTools port through the namespace's forwarder; otherwise WebRTC is left to the
    /// pages (which the loopback tests open relay-only).
    static func launch(in namespace: NetworkNamespace? = nil) async throws -> Chromium {
        guard let executable else { throw BrowserTestError("Chromium is not installed (apt-get install chromium)") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        var arguments = [
            "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
            "--disable-default-apps", "--disable-domain-reliability", "--disable-breakpad", "--metrics-recording-only",
            "--no-pings", "--disable-client-side-phishing-detection", "--disable-dev-shm-usage",
            "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,NetworkTimeServiceQuerying,WebRtcHideLocalIpsWithMdns",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--user-data-dir=\(profile.path)", "--remote-debugging-port=0", "about:blank",
        ]
        // Root (CI) cannot use Chromium's sandbox.
        if getuid() == 0 { arguments.insert("--no-sandbox", at: 0) }
        let process: Process
        var helpers: [Process] = []
        if let namespace {
            process = try namespace.spawn(executable, arguments)
        } else {
            process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }
        // Chromium writes its DevTools port and browser path once it listens.
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        let deadline = ContinuousClock.now + .seconds(60)
        var lines: [Substring] = []
        while lines.count < 2 {
            guard ContinuousClock.now < deadline, process.isRunning else {
                process.terminate()
                for helper in helpers { helper.terminate() }
                throw BrowserTestError("Chromium did not open its DevTools port")
            }
            try await Task.sleep(for: .milliseconds(50))
            lines = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        guard let port = Int(lines[0]) else { throw BrowserTestError("unreadable DevToolsActivePort") }
        let devTools: DevToolsConnection
        do {
            if let namespace {
                let forwarder = try namespace.forward(listen: namespace.inside, port: 9223, to: "127.0.0.1:\(port)")
                helpers.append(forwarder)
                // socat may take a moment to listen (seconds, on a loaded host).
                let deadline = ContinuousClock.now + .seconds(30)
                while true {
                    do {
                        devTools = try await DevToolsConnection.connect(host: namespace.inside, port: 9223, path: String(lines[1]))
                        break
                    } catch where ContinuousClock.now < deadline && forwarder.isRunning {
                        try await Task.sleep(for: .milliseconds(100))
                    } catch {
                        throw BrowserTestError("DevTools through the namespace's forwarder: \(error) (forwarder running: \(forwarder.isRunning))")
                    }
                }
            } else {
                // Chromium may still refuse or drop the first upgrade on a loaded host: try again.
                let deadline = ContinuousClock.now + .seconds(30)
                while true {
                    do {
                        devTools = try await DevToolsConnection.connect(host: "127.0.0.1", port: port, path: String(lines[1]))
                        break
                    } catch where ContinuousClock.now < deadline && process.isRunning {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
        } catch {
            process.terminate()
            for helper in helpers { helper.terminate() }
            throw error
        }
        return Chromium(process: process, profile: profile, helpers: helpers, devTools: devTools)
    }

    /// Opens `url` in a new page and waits until it has loaded; returns the page's session.
    func open(_ url: String) async throws -> DevToolsPage {
        let created = try await devTools.send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = created["targetId"] as? String else { throw BrowserTestError("no target id") }
        let attached = try await devTools.send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let sessionID = attached["sessionId"] as? String else { throw BrowserTestError("no session id") }
        let page = DevToolsPage(devTools: devTools, sessionID: sessionID, targetID: targetID)
        _ = try await page.send("Network.enable")
        _ = try await page.send("Page.enable")
        _ = try await page.send("Page.navigate", ["url": url])
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let state = try await page.evaluate("location.href + ' ' + document.readyState") as? String
            if state == "\(url) complete" { break }
            guard ContinuousClock.now < deadline else { throw BrowserTestError("\(url) did not load") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return page
    }

    /// Opens the client page at `url` and waits until its script says it is ready
    /// (`body[data-ready]`, set after every module loaded). A page whose module graph did
    /// not load (a request through the namespace's forwarder that failed on a loaded host)
    /// is loaded again, up to three times; the failed requests go in the error.
    func openApp(_ url: String) async throws -> DevToolsPage {
        let page = try await open(url)
        for attempt in 0..<3 {
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                if (try? await page.evaluate("document.body?.dataset.ready ?? ''")) as? String == "true" { return page }
                try await Task.sleep(for: .milliseconds(50))
            }
            if attempt < 2 { _ = try? await page.send("Page.reload", ["ignoreCache": true]) }
        }
        let failed = page.devTools.events(session: page.sessionID, method: "Network.loadingFailed").compactMap { $0["errorText"] as? String }
        throw BrowserTestError("\(url) never became ready (failed requests: \(failed))")
    }

    /// Closes the browser and deletes its profile.
    func close() async {
        devTools.close()
        process.terminate()
        for helper in helpers { helper.terminate() }
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: profile)
    }
}

/// One page's DevTools session.
struct DevToolsPage: Sendable {
    let devTools: DevToolsConnection
    let sessionID: String
    let targetID: String

    /// Closes the page.
    func close() async {
        _ = try? await devTools.send("Target.closeTarget", ["targetId": targetID])
    }

    /// Sends a command in this page's session.
    func send(_ method: String, _ parameters: [String: any Sendable] = [:]) async throws -> [String: Any] {
        try await devTools.send(method, parameters, session: sessionID)
    }

    /// Evaluates `expression` (awaiting a promise) and returns its value as JSON would.
    func evaluate(_ expression: String) async throws -> Any? {
        let reply = try await send(
            "Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
        if let exception = reply["exceptionDetails"] as? [String: Any] {
            let text = ((exception["exception"] as? [String: Any])?["description"] as? String) ?? "\(exception)"
            throw BrowserTestError("page exception: \(text)")
        }
        return (reply["result"] as? [String: Any])?["value"]
    }

    /// Puts the files at `paths` into the file input `id`, as a user choosing them would.
    func chooseFiles(_ id: String, _ paths: [String]) async throws {
        let reply = try await send("Runtime.evaluate", ["expression": "document.getElementById('\(id)')"])
        guard let objectID = (reply["result"] as? [String: Any])?["objectId"] as? String else {
            throw BrowserTestError("no element \(id)")
        }
        _ = try await send("DOM.setFileInputFiles", ["files": paths, "objectId": objectID])
    }

    /// The responses this page received since `Network.enable`: URL and headers (names
    /// lowercased).
    var responses: [(url: String, headers: [String: String])] {
        devTools.events(session: sessionID, method: "Network.responseReceived").compactMap { event in
            guard let response = event["response"] as? [String: Any], let url = response["url"] as? String else { return nil }
            let headers = (response["headers"] as? [String: Any] ?? [:]).reduce(into: [String: String]()) {
                $0[$1.key.lowercased()] = $1.value as? String
            }
            return (url, headers)
        }
    }

    /// Every URL this page requested since `Network.enable`.
    var requestedURLs: [String] {
        devTools.events(session: sessionID, method: "Network.requestWillBeSent").compactMap {
            ($0["request"] as? [String: Any])?["url"] as? String
        }
    }
}

/// The DevTools protocol over one WebSocket: commands with ids, their replies, and the
/// events (kept, by session, for the tests to read).
final class DevToolsConnection: Sendable {
    private struct State {
        var nextID = 1
        var waiting: [Int: CheckedContinuation<Data, any Error>] = [:]
        var events: [(session: String?, method: String, params: Data)] = []
        var partial: [UInt8] = []
        var closed = false
    }

    private let connection: any SignalingConnection
    private let state = Mutex(State())

    private init(connection: any SignalingConnection) {
        self.connection = connection
    }

    static func connect(host: String, port: Int, path: String) async throws -> DevToolsConnection {
        let connector = WebSocketSignalingConnector(
            endpoint: ServerEndpoint(host: host, port: port, useTLS: false, webSocketPath: path),
            maxFrameBytes: 256 << 20, connectTimeout: .seconds(30), group: MultiThreadedEventLoopGroup.singleton)
        let connection = try await connector.connect(SignalingConnectAttempt())
        let devTools = DevToolsConnection(connection: connection)
        let (opened, openedContinuation) = AsyncStream<Void>.makeStream()
        Task {
            await connection.serve(
                opened: {
                    openedContinuation.yield()
                    return true
                },
                received: { frame in devTools.received(frame) })
            devTools.ended()
            // A connection that ended before it opened must not leave `connect` waiting.
            openedContinuation.finish()
        }
        var didOpen = false
        for await _ in opened {
            didOpen = true
            break
        }
        guard didOpen else { throw BrowserTestError("the DevTools connection ended before it opened") }
        return devTools
    }

    /// Sends a command and waits for its result.
    func send(_ method: String, _ parameters: [String: any Sendable] = [:], session: String? = nil) async throws -> [String: Any] {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        let bytes = try JSONSerialization.data(withJSONObject: message)
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            let closed = state.withLock { state in
                if !state.closed { state.waiting[id] = continuation }
                return state.closed
            }
            if closed {
                continuation.resume(throwing: BrowserTestError("the DevTools connection closed"))
                return
            }
            Task {
                do {
                    try await self.connection.write(.init(opcode: .text, payload: Array(bytes)))
                } catch {
                    let waiting = self.state.withLock { $0.waiting.removeValue(forKey: id) }
                    waiting?.resume(throwing: error)
                }
            }
        }
        guard let object = try JSONSerialization.jsonObject(with: reply) as? [String: Any] else {
            throw BrowserTestError("unreadable DevTools reply to \(method)")
        }
        if let error = object["error"] as? [String: Any] {
            throw BrowserTestError("\(method): \(error["message"] as? String ?? "\(error)")")
        }
        return object["result"] as? [String: Any] ?? [:]
    }

    /// The parameters of the events `method` received in `session`, in order.
    func events(session: String, method: String) -> [[String: Any]] {
        let matching = state.withLock { $0.events.filter { $0.session == session && $0.method == method }.map(\.params) }
        return matching.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    func close() {
        connection.close()
    }

    private func received(_ frame: SignalingMachine.Frame) {
        guard frame.opcode == .text || frame.opcode == .continuation else { return }
        let message: [UInt8]? = state.withLock { state in
            state.partial += frame.payload
            guard frame.fin else { return nil }
            defer { state.partial = [] }
            return state.partial
        }
        guard let message, let object = try? JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else { return }
        if let id = object["id"] as? Int {
            let waiting = state.withLock { $0.waiting.removeValue(forKey: id) }
            waiting?.resume(returning: Data(message))
        } else if let method = object["method"] as? String {
            let params = (try? JSONSerialization.data(withJSONObject: object["params"] ?? [:])) ?? Data()
            state.withLock { $0.events.append((object["sessionId"] as? String, method, params)) }
        }
    }

    private func ended() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: BrowserTestError("the DevTools connection closed")) }
    }
}
