import Foundation
import InvisoNearby
import Synchronization
import Testing

/// DNS-SD against real avahi-daemons in two network namespaces (`TestNetwork`): this
/// process talks to host 1's daemon over its private D-Bus; avahi's own tools run on host 2.
@Suite(.serialized, .enabled(if: TestNetwork.shouldRun)) struct DNSSDTests {
    @Test func interoperatesWithAvahiToolsBothWays() async throws {
        let network = try await TestNetwork.start(prefix: "dns", hosts: 2)
        // libdbus reads the system bus address when it first connects: this suite is the
        // only user of DNS-SD in the test process.
        setenv("DBUS_SYSTEM_BUS_ADDRESS", network.busAddress(1), 1)
        setenv("AVAHI_COMPAT_NOWARN", "1", 1)

        // 1. Our registration, seen by avahi-browse on the other host with its TXT record.
        let registered = Mutex<[Result<DNSSDService, DNSSDError>]>([])
        let txt = try TXTRecord([("v", Array("1".utf8)), ("id", Array("0123456789abcdef".utf8)), ("caps", Array("7".utf8))])
        let registration = try DNSSD.register(name: "alice", type: "_inviso._tcp", port: 40_123, txt: txt) { result in
            registered.withLock { $0.append(result) }
        }
        defer { registration.cancel() }
        try await eventually("the registration") { registered.withLock { !$0.isEmpty } }
        let first = registered.withLock { $0.first }
        let service = try #require(first).get()
        #expect(service.name == "alice")

        var seen = ""
        let deadline = ContinuousClock.now + .seconds(20)
        while !seen.contains("10.77.0.1;40123;") {
            #expect(ContinuousClock.now < deadline, "avahi-browse on host 2 did not resolve our service:\n\(seen)")
            guard ContinuousClock.now < deadline else { return }
            seen = (try? await network.run(2, ["avahi-browse", "-rpt", "_inviso._tcp"]).output) ?? ""
        }
        let line = try #require(seen.split(separator: "\n").first { $0.hasPrefix("=") && $0.contains(";alice;") })
        #expect(line.contains("\"v=1\"") && line.contains("\"id=0123456789abcdef\"") && line.contains("\"caps=7\""))

        // 2. A name already registered on this host is a conflict.
        let second = Mutex<[Result<DNSSDService, DNSSDError>]>([])
        do {
            let duplicate = try DNSSD.register(name: "alice", type: "_inviso._tcp", port: 40_124, txt: txt) { result in
                second.withLock { $0.append(result) }
            }
            defer { duplicate.cancel() }
            try await eventually("the conflict") { second.withLock { !$0.isEmpty } }
            #expect(second.withLock { (try? $0[0].get()) == nil })
        } catch {
            #expect((error as? DNSSDError)?.code == .nameConflict)
        }

        // 3. avahi-publish on host 2, seen by our browse, resolved, and its address looked up.
        let events = Mutex<[DNSSDBrowseEvent]>([])
        let browse = try DNSSD.browse(type: "_inviso._tcp") { event in events.withLock { $0.append(event) } }
        defer { browse.cancel() }
        let publisher = try network.start(2, ["avahi-publish", "-s", "bob", "_inviso._tcp", "5555", "v=1", "id=fedcba9876543210"])
        func bob(_ event: DNSSDBrowseEvent, added: Bool) -> DNSSDService? {
            switch event {
            case .added(let service) where added && service.name == "bob": service
            case .removed(let service) where !added && service.name == "bob": service
            default: nil
            }
        }
        try await eventually("our browse to see bob") { events.withLock { $0.contains { bob($0, added: true) != nil } } }
        let firstBob = events.withLock { $0.compactMap { bob($0, added: true) }.first }
        let found = try #require(firstBob)
        #expect(found.interfaceIndex != 0 && found.type == "_inviso._tcp." && found.domain == "local.")

        let resolutions = Mutex<[Result<DNSSDResolution, DNSSDError>]>([])
        let resolve = try DNSSD.resolve(found) { result in resolutions.withLock { $0.append(result) } }
        try await eventually("bob resolved") { resolutions.withLock { !$0.isEmpty } }
        resolve.cancel()
        let resolution = try resolutions.withLock { try $0[0].get() }
        #expect(resolution.port == 5555)
        #expect(resolution.hostTarget.hasPrefix("\(network.name)-h2.local"))
        let record = try TXTRecord(decoding: resolution.txt)
        #expect(record.string(for: "v") == "1" && record.string(for: "id") == "fedcba9876543210")

        let addresses = Mutex<[[UInt8]]>([])
        let query = try DNSSD.queryIPv4(host: resolution.hostTarget, interfaceIndex: found.interfaceIndex) { result in
            if case .success(let address) = result { addresses.withLock { $0.append(address) } }
        }
        try await eventually("bob's address") { addresses.withLock { !$0.isEmpty } }
        query.cancel()
        #expect(addresses.withLock { $0.contains([10, 77, 0, 2]) })

        // 4. bob leaves: the removal arrives.
        await publisher.terminate()
        try await eventually("bob's removal") { events.withLock { $0.contains { bob($0, added: false) != nil } } }
        await network.stop()
    }
}
