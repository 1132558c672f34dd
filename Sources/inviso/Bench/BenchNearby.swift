import ArgumentParser
import Crypto
import Foundation
import InvisoNearby
import InvisoStore
import InvisoTime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `inviso bench nearby`: a nearby file transfer over loopback TCP beside a plain TCP copy
/// of the same bytes in the same run; pairing time; DNS-SD discovery time where a daemon runs.
struct BenchNearby: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby",
        abstract: "Benchmark nearby file transfer against a plain TCP copy, pairing and discovery.",
        discussion: """
            file: two nearby nodes in this process (stores in a temporary folder, no DNS-SD) \
            send a file over loopback — offered, read, hashed and sealed with AES-GCM chunk by \
            chunk, carried in chunk frames, opened, hashed, written, the hash checked — beside a plain \
            TCP copy of the same file (read, sent over loopback, written) measured in \
            alternating rounds; the ratio is the median over rounds of ours / plain \
            (target ≥ 0.6). A second line times one SHA-256 pass over the same file against \
            the same plain copy: each side makes one, so it bounds the first ratio. pairing: TCP connect → handshake verified on the listener, p50. \
            discovery: DNS-SD register → seen by a browse of the same daemon, p50 (skipped \
            without a daemon). Use -c release.
            """
    )

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "File size in MiB.")
    var mib = 64

    @Option(help: "Alternating rounds of the file figure (the median is reported).")
    var rounds = 3

    @Option(help: "Pairings measured.")
    var pairings = 10

    func run() async throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench nearby`\n".utf8))
        #endif
        // avahi's compatibility library prints a warning on first use unless told not to.
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-bench-nearby-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let report = BenchReport(json: json)
        report.header()

        let source = root.appendingPathComponent("payload.bin")
        try Self.noise(count: mib * 1024 * 1024).write(to: source)

        let pair = try await NodePair.paired(in: root.appendingPathComponent("pair"))
        var oursRates: [Double] = []
        var plainRates: [Double] = []
        var ratios: [Double] = []
        var hashRates: [Double] = []
        var hashRatios: [Double] = []
        let megabytes = Double(mib)
        for _ in 0..<rounds {
            let plain = try Self.plainCopy(source, to: root.appendingPathComponent("copy.bin"))
            let ours = try await pair.transfer(source)
            let hash = try Self.hashTime(source)
            plainRates.append(megabytes / plain)
            oursRates.append(megabytes / ours)
            ratios.append(plain / ours)
            hashRates.append(megabytes / hash)
            hashRatios.append(plain / hash)
        }
        await pair.stop()
        report.emit(BenchResult(
            name: "nearby file \(mib) MiB (send → received, hash checked)", value: Self.median(oursRates), unit: "MiB/s",
            baseline: Self.median(plainRates), ratio: Self.median(ratios)))
        // What one SHA-256 pass over the same bytes costs against the same plain copy: each
        // side makes one such pass, so a transfer cannot beat this ratio.
        report.emit(BenchResult(
            name: "  one SHA-256 pass over the file (each side makes one)", value: Self.median(hashRates), unit: "MiB/s",
            baseline: Self.median(plainRates), ratio: Self.median(hashRatios)))

        var pairingTimes: [Double] = []
        for index in 0..<pairings {
            let fresh = try await NodePair.started(in: root.appendingPathComponent("p\(index)"), autoAccept: false)
            pairingTimes.append(try await fresh.pairingTime())
            await fresh.stop()
        }
        BenchChat.emit(json, "nearby pairing p50 (connect → verified hello)", BenchChat.percentile(pairingTimes, 0.5), "ms")

        if let discovery = try await Self.discoveryTimes(runs: 5) {
            BenchChat.emit(json, "nearby discovery p50 (register → browsed)", BenchChat.percentile(discovery, 0.5), "ms")
        } else {
            BenchChat.emit(json, "nearby discovery p50 (skipped: no DNS-SD daemon)", 0, "ms")
        }
    }

    static func median(_ values: [Double]) -> Double { BenchChat.percentile(values, 0.5) }

    /// `count` incompressible bytes: SplitMix64 from one random seed (the system generator
    /// costs a system call per 8 bytes here).
    static func noise(count: Int) -> Data {
        var state = UInt64.random(in: .min ... .max)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 8) {
                state &+= 0x9E37_79B9_7F4A_7C15
                var word = state
                word = (word ^ (word >> 30)) &* 0xBF58_476D_1CE4_E5B9
                word = (word ^ (word >> 27)) &* 0x94D0_49BB_1331_11EB
                word ^= word >> 31
                withUnsafeBytes(of: word) { bytes in
                    for index in 0..<min(8, raw.count - offset) { raw[offset + index] = bytes[index] }
                }
            }
        }
        return data
    }

    /// Seconds to hash `file` with SHA-256 (read in 1 MiB blocks, as the plain copy reads).
    static func hashTime(_ file: URL) throws -> Double {
        let started = ContinuousClock.now
        let input = try FileHandle(forReadingFrom: file)
        var hasher = SHA256()
        while let block = try input.read(upToCount: 1 << 20), !block.isEmpty { hasher.update(data: block) }
        _ = hasher.finalize()
        try input.close()
        return seconds(ContinuousClock.now - started)
    }

    /// Copies `source` over a loopback TCP connection into `destination`; returns seconds.
    static func plainCopy(_ source: URL, to destination: URL) throws -> Double {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let started = ContinuousClock.now
        // The connection lands in the listen backlog at once; the sender runs on a thread
        // of its own, the receiver here.
        let sending = try connectTCP(host: "127.0.0.1", port: listener.port)
        let receiving = try listener.accept()
        let sent = DispatchSemaphore(value: 0)
        let sender = Thread {
            defer { sent.signal() }
            guard let input = try? FileHandle(forReadingFrom: source) else { return }
            while let block = try? input.read(upToCount: 1 << 20), !block.isEmpty {
                guard (try? sending.writeAll([UInt8](block))) != nil else { break }
            }
            try? input.close()
            sending.shutdownWrite()
        }
        sender.start()
        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
        let output = try FileHandle(forWritingTo: destination)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(receiving.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            try output.write(contentsOf: buffer[0..<count])
        }
        try output.close()
        sent.wait()
        sending.close()
        receiving.close()
        let seconds = Self.seconds(ContinuousClock.now - started)
        try? FileManager.default.removeItem(at: destination)
        return seconds
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Register → seen by a browse, on the machine's DNS-SD daemon; nil without one.
    static func discoveryTimes(runs: Int) async throws -> [Double]? {
        var times: [Double] = []
        for index in 0..<runs {
            let name = "inviso-bench-\(UInt32.random(in: 0...UInt32.max))-\(index)"
            let seen = AsyncStream<Void>.makeStream()
            let started = ContinuousClock.now
            let browse: DNSSDOperation
            let registration: DNSSDOperation
            do {
                browse = try DNSSD.browse(type: NearbyNode.serviceType) { event in
                    if case .added(let service) = event, service.name == name { seen.continuation.yield() }
                }
                registration = try DNSSD.register(name: name, type: NearbyNode.serviceType, port: 9, txt: TXTRecord()) { _ in }
            } catch {
                return nil
            }
            var iterator = seen.stream.makeAsyncIterator()
            _ = await iterator.next()
            times.append(BenchChat.milliseconds(ContinuousClock.now - started))
            registration.cancel()
            browse.cancel()
        }
        return times
    }
}

/// Two nearby nodes in one process, their events logged.
private final class NodePair: Sendable {
    let alice: NearbyNode
    let bob: NearbyNode
    let aliceEvents: EventLog
    let bobEvents: EventLog
    let bobPort: Int
    let downloads: URL

    private init(alice: NearbyNode, bob: NearbyNode, aliceEvents: EventLog, bobEvents: EventLog, bobPort: Int, downloads: URL) {
        self.alice = alice
        self.bob = bob
        self.aliceEvents = aliceEvents
        self.bobEvents = bobEvents
        self.bobPort = bobPort
        self.downloads = downloads
    }

    static func started(in root: URL, autoAccept: Bool) async throws -> NodePair {
        func node(_ name: String) throws -> NearbyNode {
            let directory = root.appendingPathComponent(name)
            let store = try InvisoStore(directory: directory, keySource: .keyFile)
            let identity = try NearbyNode.loadIdentity(from: store, now: 0)
            var configuration = NearbyNode.Configuration(name: name, downloads: directory.appendingPathComponent("downloads"))
            configuration.discovery = false
            configuration.port = 0
            if autoAccept { configuration.autoAcceptBytes = .max }
            return try NearbyNode(identity: identity, store: store, configuration: configuration)
        }
        let alice = try node("alice")
        let bob = try node("bob")
        let aliceEvents = EventLog(alice)
        let bobEvents = EventLog(bob)
        let ready = await bobEvents.wait { if case .ready = $0 { true } else { false } }
        _ = await aliceEvents.wait { if case .ready = $0 { true } else { false } }
        guard case .ready(_, let port, _) = ready else { throw CLIError("bob did not start") }
        return NodePair(
            alice: alice, bob: bob, aliceEvents: aliceEvents, bobEvents: bobEvents, bobPort: port,
            downloads: root.appendingPathComponent("bob/downloads"))
    }

    /// Started, connected, and bob trusting alice (so files are accepted at once).
    static func paired(in root: URL) async throws -> NodePair {
        let pair = try await started(in: root, autoAccept: true)
        _ = try await pair.pairingTime()
        await pair.bob.accept(nil)
        _ = await pair.aliceEvents.wait { if case .connected = $0 { true } else { false } }
        await pair.bob.markVerified("alice")
        return pair
    }

    /// Milliseconds from connect to bob's verified view of alice (the request).
    func pairingTime() async throws -> Double {
        let mark = await bobEvents.mark()
        let started = ContinuousClock.now
        await alice.connect(host: "127.0.0.1", port: bobPort)
        _ = await bobEvents.wait(after: mark) { if case .request = $0 { true } else { false } }
        return BenchChat.milliseconds(ContinuousClock.now - started)
    }

    /// Seconds from offering `file` to bob having it, hash checked.
    func transfer(_ file: URL) async throws -> Double {
        let mark = await bobEvents.mark()
        let started = ContinuousClock.now
        await alice.sendFile(file.path, to: "bob")
        let received = await bobEvents.wait(after: mark) { if case .fileReceived = $0 { true } else { false } }
        let seconds = BenchNearby.seconds(ContinuousClock.now - started)
        if case .fileReceived(_, _, let path, _) = received { try? FileManager.default.removeItem(atPath: path) }
        return seconds
    }

    func stop() async {
        await alice.stop()
        await bob.stop()
    }
}

/// A node's events, kept, with waiting for one.
private actor EventLog {
    private var events: [NearbyEvent] = []
    private var waiters: [(from: Int, matches: @Sendable (NearbyEvent) -> Bool, continuation: CheckedContinuation<NearbyEvent, Never>)] = []

    init(_ node: NearbyNode) {
        Task { [weak self] in
            let runner = Task { try? await node.run() }
            for await event in node.events { await self?.append(event) }
            runner.cancel()
        }
    }

    func mark() -> Int { events.count }

    func append(_ event: NearbyEvent) {
        events.append(event)
        let index = events.count - 1
        var still: [(from: Int, matches: @Sendable (NearbyEvent) -> Bool, continuation: CheckedContinuation<NearbyEvent, Never>)] = []
        for waiter in waiters {
            if index >= waiter.from, waiter.matches(event) { waiter.continuation.resume(returning: event) } else { still.append(waiter) }
        }
        waiters = still
    }

    func wait(after mark: Int = 0, _ matches: @escaping @Sendable (NearbyEvent) -> Bool) async -> NearbyEvent {
        if let found = events[mark...].first(where: matches) { return found }
        return await withCheckedContinuation { waiters.append((mark, matches, $0)) }
    }
}
