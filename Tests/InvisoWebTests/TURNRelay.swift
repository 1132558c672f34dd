import Foundation
import InvisoTesting

/// A coturn `turnserver` for the WebRTC tests, on the namespace link's outer address
/// (``NetworkNamespace/outside``), configured by ``CoturnConfiguration`` with sixteen relay
/// ports. Debian's `coturn` package.
final class TURNRelay: Sendable {
    let secret: String
    let url: String
    let process: Process
    let logURL: URL

    private init(secret: String, url: String, process: Process, logURL: URL) {
        self.secret = secret
        self.url = url
        self.process = process
        self.logURL = logURL
    }

    /// Why it cannot run here, or nil.
    static var unavailable: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver") ? nil : "/usr/bin/turnserver is missing (apt-get install coturn)"
    }

    /// Starts it on `host` and waits (up to 30 s) until its UDP listener is open.
    static func start(on host: String, in directory: URL) async throws -> TURNRelay {
        if let unavailable { throw BrowserTestError(unavailable) }
        // Below Linux's ephemeral range (32768…), so the kernel hands these to no other socket.
        let port = Int.random(in: 20_000...25_999)
        let relays = Int.random(in: 26_000...31_900)
        let secret = UUID().uuidString
        let logURL = CoturnConfiguration.logURL(in: directory)
        let config = CoturnConfiguration.text(
            host: host, port: port, relays: relays...(relays + 15), secret: secret, directory: directory, loopbackPeers: false)
        let configURL = directory.appendingPathComponent("turnserver.conf")
        try Data(config.utf8).write(to: configURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/turnserver")
        process.arguments = ["-c", configURL.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let relay = TURNRelay(secret: secret, url: "turn:\(host):\(port)?transport=udp", process: process, logURL: logURL)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if !process.isRunning { throw BrowserTestError("turnserver exited: \(relay.log().suffix(20).joined(separator: "\n"))") }
            if relay.log().contains(where: { $0.contains("UDP listener opened on") && $0.contains("\(host):\(port)") }) { return relay }
            try await Task.sleep(for: .milliseconds(50))
        }
        relay.stop()
        throw BrowserTestError("turnserver did not open \(host):\(port): \(relay.log().suffix(20).joined(separator: "\n"))")
    }

    /// The log's lines so far.
    func log() -> [Substring] {
        ((try? String(contentsOf: logURL, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// Kills it (SIGKILL: a child of the test runner may have SIGTERM blocked) and waits.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
