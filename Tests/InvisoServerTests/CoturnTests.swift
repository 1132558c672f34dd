import Foundation
import InvisoServer
import InvisoTesting
import InvisoWire
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs credentials from ``TURNConfiguration`` against a real coturn: `turnserver` with
/// `use-auth-secret` on 127.0.0.1, and coturn's own test client `turnutils_uclient` making
/// one allocation.
///
/// Both programs come from Debian's `coturn` package. Without them on `PATH` the suite is
/// skipped, unless `CI=true`, where it runs and fails.
@Suite(
    "coturn",
    .enabled(
        "needs coturn's turnserver and turnutils_uclient on PATH (apt-get install coturn)",
        { Coturn.isAvailableOrRequired() }
    ),
    .timeLimit(.minutes(6))
)
struct CoturnTests {
    @Test("coturn (use-auth-secret) allocates with a minted credential and refuses tampered and expired ones")
    func coturnChecksMintedCredentials() async throws {
        guard let turnserver = Coturn.executable("turnserver"), let uclient = Coturn.executable("turnutils_uclient")
        else {
            Issue.record("turnserver or turnutils_uclient is not on PATH, and CI=true requires them")
            return
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("inviso-coturn-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let secret = "inviso-coturn-test-" + UUID().uuidString
        let server = try await CoturnServer.start(turnserver, secret: secret, in: directory)
        defer { server.stop() }
        let configuration = try TURNConfiguration(
            secret: secret, urls: ["turn:127.0.0.1:\(server.port)?transport=udp"]
        )

        // A fresh credential: both allocations of the client pair succeed.
        let good = configuration.credential(for: "device-good", now: Date())
        let accepted = try await Coturn.allocate(uclient, port: server.port, credential: good, in: directory)
        #expect(accepted.status == 0, "uclient exited with \(accepted.status): \(accepted.output)")
        #expect(!accepted.output.contains("Cannot complete Allocation"), "\(accepted.output)")
        #expect(
            await server.logHasLine(containing: ["user <\(good.username)>", "ALLOCATE processed, success"]),
            "no successful ALLOCATE for the minted credential in the server log:\n\(server.logTail())"
        )

        // The credential's last character changed: 401, no allocation.
        var tampered = configuration.credential(for: "device-tampered", now: Date())
        let last = tampered.credential.removeLast()
        tampered.credential.append(last == "A" ? "B" : "A")
        try await expectRefused(tampered, server: server, uclient: uclient, in: directory)

        // A correctly signed username whose expiry passed two hours ago: 401, no allocation.
        let issuedAt = Date().addingTimeInterval(-(2 * 60 * 60) - Double(configuration.ttl.components.seconds))
        let expired = configuration.credential(for: "device-expired", now: issuedAt)
        let expiry = try #require(expired.username.split(separator: ":").first.flatMap { Int($0) })
        let twoHoursAgo = Int(Date().timeIntervalSince1970) - 2 * 60 * 60
        #expect((twoHoursAgo - 5)...(twoHoursAgo + 5) ~= expiry)
        try await expectRefused(expired, server: server, uclient: uclient, in: directory)
    }

    /// Runs the client with `credential` and expects coturn to refuse it with 401.
    private func expectRefused(
        _ credential: TURNCredentialsResponse, server: CoturnServer, uclient: URL, in directory: URL,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let refused = try await Coturn.allocate(uclient, port: server.port, credential: credential, in: directory)
        #expect(refused.status != 0, "uclient succeeded: \(refused.output)", sourceLocation: sourceLocation)
        #expect(
            refused.output.contains("Cannot complete Allocation"), "\(refused.output)", sourceLocation: sourceLocation
        )
        #expect(
            await server.logHasLine(containing: ["user <\(credential.username)>", "error 401"]),
            "no 401 for \(credential.username) in the server log:\n\(server.logTail())",
            sourceLocation: sourceLocation
        )
        #expect(
            !server.log().contains { line in
                line.contains("user <\(credential.username)>") && line.contains("ALLOCATE processed, success")
            },
            "coturn allocated for a refused credential",
            sourceLocation: sourceLocation
        )
    }
}

// MARK: - coturn's programs

/// Finding and running coturn's programs, with a time limit on everything.
enum Coturn {
    /// With `CI=true` the suite runs, and fails when coturn is missing.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The `.enabled(_:_:)` condition: run when both programs are on `PATH`, or when CI
    /// requires it.
    static func isAvailableOrRequired() -> Bool {
        isRequired || (executable("turnserver") != nil && executable("turnutils_uclient") != nil)
    }

    /// The executable called `name` in a `PATH` directory, if any.
    static func executable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// What a finished client run left.
    struct Outcome {
        var status: Int32
        var output: String
    }

    /// One client pair (`-y`: two allocations that talk to each other through the relay,
    /// no outside peer needed), one message, no RTCP, over UDP to 127.0.0.1:`port`.
    /// `turnutils_uclient` exits 0 when both allocations work and non-zero (after
    /// retrying) when the server refuses the credential.
    static func allocate(
        _ uclient: URL, port: UInt16, credential: TURNCredentialsResponse, in directory: URL
    ) async throws -> Outcome {
        try await run(
            uclient,
            arguments: [
                "-y", "-c", "-n", "1", "-m", "1", "-u", credential.username, "-w", credential.credential,
                "-p", String(port), "127.0.0.1",
            ],
            timeout: .seconds(10),
            in: directory
        )
    }

    /// Runs `executable` to the end, with standard output and error in a file. Past
    /// `timeout` it is killed and the run throws.
    static func run(
        _ executable: URL, arguments: [String], timeout: Duration, in directory: URL
    ) async throws -> Outcome {
        let outputURL = directory.appendingPathComponent("run-\(UUID().uuidString).txt")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw CoturnTestError("cannot create \(outputURL.path)")
        }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let exited = await waitForExit(process, timeout: timeout)
        if !exited { stop(process) }
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        guard exited else {
            throw CoturnTestError("\(executable.lastPathComponent) ran longer than \(timeout); output:\n\(text)")
        }
        return Outcome(status: process.terminationStatus, output: text)
    }

    /// Polls until `process` exits or `timeout` passes; returns whether it exited.
    static func waitForExit(_ process: Process, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Ends `process` with `SIGKILL` and waits (up to three seconds) until it is reaped.
    /// Synchronous, so it can run in a `defer`.
    ///
    /// Not `SIGTERM`: a child started by `Process` inherits the spawning thread's signal
    /// mask, and the test runner's threads block `SIGTERM` (seen on Linux), so `turnserver`
    /// never sees it. Neither program has anything to flush.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        _ = kill(process.processIdentifier, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(3)
        while process.isRunning, ContinuousClock.now < deadline {
            usleep(10_000)
        }
    }
}

/// A failure of the test's own machinery (a timeout, a server that did not start).
struct CoturnTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - The server

/// A `turnserver` of our own: loopback only, UDP and TCP on a free port, relays on a small
/// range of free UDP ports, REST-API authentication with `secret`, verbose log in a file,
/// no TLS, no CLI, no system configuration or database.
final class CoturnServer {
    let port: UInt16
    private let process: Process
    private let logURL: URL

    private init(port: UInt16, process: Process, logURL: URL) {
        self.port = port
        self.process = process
        self.logURL = logURL
    }

    /// Starts the server and waits (up to 10 seconds) until it answers a STUN Binding
    /// request on its UDP port.
    static func start(_ turnserver: URL, secret: String, in directory: URL) async throws -> CoturnServer {
        guard let port = FreePorts.listeningPort() else { throw CoturnTestError("no free port on 127.0.0.1") }
        guard let relays = FreePorts.udpRange(count: 16) else {
            throw CoturnTestError("no free range of UDP relay ports on 127.0.0.1")
        }
        let logURL = CoturnConfiguration.logURL(in: directory)
        let configURL = directory.appendingPathComponent("turnserver.conf")
        let config = CoturnConfiguration.text(
            host: "127.0.0.1", port: Int(port), relays: Int(relays.lowerBound)...Int(relays.upperBound), secret: secret,
            directory: directory, loopbackPeers: true)
        try Data(config.utf8).write(to: configURL)

        let outputURL = directory.appendingPathComponent("turnserver.out")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw CoturnTestError("cannot create \(outputURL.path)")
        }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = turnserver
        process.arguments = ["-c", configURL.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let server = CoturnServer(port: port, process: process, logURL: logURL)

        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
                throw CoturnTestError(
                    "turnserver exited with \(process.terminationStatus):\n\(text)\n\(server.logTail())"
                )
            }
            if StunProbe.bindingAnswered(port: port) { return server }
            try? await Task.sleep(for: .milliseconds(50))
        }
        server.stop()
        throw CoturnTestError("turnserver did not answer STUN on 127.0.0.1:\(port) within 10 s:\n\(server.logTail())")
    }

    /// Stops the server (`SIGKILL`); safe to call more than once.
    func stop() {
        Coturn.stop(process)
    }

    /// The server log's lines so far.
    func log() -> [Substring] {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    /// The last 40 lines of the log, for failure messages.
    func logTail() -> String {
        log().suffix(40).joined(separator: "\n")
    }

    /// Whether a log line holds all of `parts`, waiting up to 30 seconds for the server
    /// to write it.
    func logHasLine(containing parts: [String]) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            if log().contains(where: { line in parts.allSatisfy { line.contains($0) } }) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        return false
    }
}

// MARK: - Sockets

/// Free loopback ports, found by binding to them (the usual small race with other
/// programs is accepted).
enum FreePorts {
    /// A port free for both UDP and TCP, picked by the kernel (an ephemeral port).
    static func listeningPort() -> UInt16? {
        for _ in 0..<20 {
            guard let port = bound(type: datagram, port: 0) else { continue }
            if bound(type: stream, port: port) != nil { return port }
        }
        return nil
    }

    /// `count` consecutive free UDP ports below Linux's ephemeral range (32768…), so the
    /// kernel does not hand them to other sockets meanwhile.
    static func udpRange(count: UInt16) -> ClosedRange<UInt16>? {
        for _ in 0..<50 {
            let base = UInt16.random(in: 20_000...(32_000 - count))
            let range = base...(base + count - 1)
            if range.allSatisfy({ bound(type: datagram, port: $0) != nil }) { return range }
        }
        return nil
    }

    #if canImport(Glibc)
    static let datagram = Int32(SOCK_DGRAM.rawValue)
    static let stream = Int32(SOCK_STREAM.rawValue)
    #else
    static let datagram = SOCK_DGRAM
    static let stream = SOCK_STREAM
    #endif

    /// Binds a socket of `type` to 127.0.0.1:`port` and closes it; returns the bound port,
    /// or `nil` when the port is taken.
    static func bound(type: Int32, port: UInt16) -> UInt16? {
        let socketFD = socket(AF_INET, type, 0)
        guard socketFD >= 0 else { return nil }
        defer { close(socketFD) }
        var address = loopback(port: port)
        let bindResult = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bindResult == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let nameResult = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        guard nameResult == 0 else { return nil }
        return UInt16(bigEndian: address.sin_port)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }
}

/// A STUN Binding request (RFC 8489: type 0x0001, no attributes, the magic cookie, a
/// random transaction ID) to see whether the server's UDP listener answers.
enum StunProbe {
    /// Whether a Binding success response (0x0101) with our transaction ID comes back
    /// from 127.0.0.1:`port` within 200 ms.
    static func bindingAnswered(port: UInt16) -> Bool {
        let socketFD = socket(AF_INET, FreePorts.datagram, 0)
        guard socketFD >= 0 else { return false }
        defer { close(socketFD) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        guard setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0
        else { return false }

        let transactionID = (0..<12).map { _ in UInt8.random(in: 0...255) }
        let request: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + transactionID
        var address = FreePorts.loopback(port: port)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socketFD, request, request.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == request.count else { return false }

        var response = [UInt8](repeating: 0, count: 1500)
        let received = recv(socketFD, &response, response.count, 0)
        guard received >= 20 else { return false }
        return response[0] == 0x01 && response[1] == 0x01 && Array(response[8..<20]) == transactionID
    }
}
