import Foundation

/// A network namespace for the WebRTC tests: Chromium gathers no ICE candidate without a
/// default route, and the tests must send nothing beyond loopback and the namespaces they
/// create. So the browser runs in a namespace of its own, joined to this one by a veth
/// pair:
///
///     this namespace                         the test's namespace
///     veth …a  10.201.N.1/24  ◀── veth ──▶  veth …b  10.201.N.2/24, lo
///     (inviso serve binds here)              default route: dev …b (no gateway)
///                                            Chromium, two socat forwarders
///
/// The default route names the device and no gateway, so a packet for any other address
/// is never handed to this namespace to forward (nobody answers its ARP): nothing leaves,
/// even on a host whose forwarding is on (it is checked to be off too). Inside, two socat
/// forwarders give the page `http://127.0.0.1:PORT` (a secure context, as WebCrypto needs)
/// that reaches the server at `10.201.N.1:PORT`, and give the test Chromium's DevTools
/// port (which listens on the namespace's loopback only) at `10.201.N.2:9223`.
/// (Chromium writes its `DevToolsActivePort` file only for port 0, so the browser picks
/// its port and the forwarder starts once it is known.)
///
/// Needs root and `ip` (iproute2) and `socat`; ``unavailable`` says why when not.
final class NetworkNamespace: Sendable {
    let name: String
    let outside: String
    let inside: String
    private let hostLink: String

    /// Why the namespace cannot be made here, or nil when it can.
    static var unavailable: String? {
        if getuid() != 0 { return "network namespaces need root" }
        for tool in ["/usr/sbin/ip", "/usr/bin/socat"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (apt-get install iproute2 socat)"
        }
        return nil
    }

    /// Whether the WebRTC tests run: they can, or `CI=true` (where they must).
    static var shouldRun: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true" || (unavailable == nil && Chromium.executable != nil)
    }

    private init(name: String, outside: String, inside: String, hostLink: String) {
        self.name = name
        self.outside = outside
        self.inside = inside
        self.hostLink = hostLink
    }

    /// Creates the namespace and its link.
    static func create() throws -> NetworkNamespace {
        if let unavailable { throw BrowserTestError(unavailable) }
        let forwarding = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_forward", encoding: .utf8)) ?? "0"
        guard forwarding.trimmingCharacters(in: .whitespacesAndNewlines) == "0" else {
            throw BrowserTestError("IPv4 forwarding is on in this namespace: refusing to build a link that could route out")
        }
        removeStale()
        let tag = Int(getpid()) % 100_000
        // A /24 no interface here uses (two links on one subnet would send the test's
        // packets down the wrong one).
        let used = Set(((try? output(["-o", "-4", "addr", "show"])) ?? "").split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "10.201.") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        })
        guard let subnet = (1...250).shuffled().first(where: { !used.contains($0) }) else {
            throw BrowserTestError("no free 10.201.N.0/24 for a test namespace")
        }
        let namespace = NetworkNamespace(
            name: "inviso-web-\(getpid())-\(subnet)", outside: "10.201.\(subnet).1", inside: "10.201.\(subnet).2",
            hostLink: "ivw\(tag)s\(subnet)a")
        let peerLink = "ivw\(tag)s\(subnet)b"
        do {
            try run(["netns", "add", namespace.name])
            try run(["link", "add", namespace.hostLink, "type", "veth", "peer", "name", peerLink])
            try run(["link", "set", peerLink, "netns", namespace.name])
            try run(["addr", "add", "\(namespace.outside)/24", "dev", namespace.hostLink])
            try run(["link", "set", namespace.hostLink, "up"])
            try namespace.exec(["addr", "add", "\(namespace.inside)/24", "dev", peerLink])
            try namespace.exec(["link", "set", peerLink, "up"])
            try namespace.exec(["link", "set", "lo", "up"])
            try namespace.exec(["route", "add", "default", "dev", peerLink])
        } catch {
            namespace.remove()
            throw error
        }
        return namespace
    }

    /// `ip netns exec NAME ip ARGUMENTS`.
    func exec(_ arguments: [String]) throws {
        try Self.run(["netns", "exec", name, "/usr/sbin/ip"] + arguments)
    }

    /// A process started inside the namespace (its output discarded).
    func spawn(_ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", name, executable] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Forwards `listen` (inside) to `target` (`host:port`) with socat.
    func forward(listen host: String, port: Int, to target: String) throws -> Process {
        try spawn("/usr/bin/socat", ["TCP-LISTEN:\(port),bind=\(host),fork,reuseaddr", "TCP:\(target)"])
    }

    /// Deletes the namespaces earlier test processes left behind (killed before their
    /// clean-up): `inviso-web-PID-N` whose process is gone.
    private static func removeStale() {
        for name in ((try? output(["netns", "list"])) ?? "").split(separator: "\n").map({ String($0.split(separator: " ")[0]) })
        where name.hasPrefix("inviso-web-") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let pid = Int32(parts[2]), pid != getpid(), kill(pid, 0) != 0 else { continue }
            try? run(["netns", "delete", name])
        }
    }

    /// Deletes the namespace (which takes its end of the veth pair, and so the pair).
    func remove() {
        try? Self.run(["netns", "delete", name])
        try? Self.run(["link", "delete", hostLink])
    }

    private static func output(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BrowserTestError("ip \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
    }
}
