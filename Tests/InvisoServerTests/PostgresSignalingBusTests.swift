import Foundation
import InvisoServer
import InvisoTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

/// Two or more ``PostgresSignalingBus`` instances on the test database (see
/// ``PostgresTestServer``), each test with a new schema and its own channel so parallel
/// tests never see each other's notifications or spill rows.
enum BusTestServer {
    /// What a test body gets besides the buses.
    struct Context: Sendable {
        /// The configuration the buses use (the test schema first on the search path).
        var configuration: PostgresClient.Configuration
        /// The test's notification channel.
        var channel: String
        /// A client on the test schema for the test's own SQL.
        var admin: PostgresClient

        /// Runs `sql` on the admin client and returns its rows.
        @discardableResult
        func query(_ sql: PostgresQuery) async throws -> [PostgresRow] {
            try await admin.query(sql, logger: BusTestServer.logger).collect()
        }

        /// A new bus on the test schema and channel (not running).
        func makeBus() -> PostgresSignalingBus {
            PostgresSignalingBus(configuration: configuration, channel: channel, logger: BusTestServer.logger)
        }
    }

    struct TimedOut: Error {}
    struct BusStoppedEarly: Error {}

    /// Set `INVISO_TEST_LOG=1` to see the buses' logging on standard error.
    static let logger: Logger = {
        guard ProcessInfo.processInfo.environment["INVISO_TEST_LOG"] != nil else { return PostgresTestServer.logger }
        var logger = Logger(label: "inviso.tests.bus", factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = .debug
        return logger
    }()

    /// Runs `body` with `count` running buses (each already listening), on a new schema
    /// that is dropped afterwards. Everything is cancelled after `timeout`, so a lost
    /// message fails the test instead of hanging the suite.
    static func withBuses(
        _ count: Int = 2, timeout: Duration = .seconds(300),
        _ body: @escaping @Sendable ([PostgresSignalingBus], Context) async throws -> Void
    ) async throws {
        guard await PostgresTestServer.isReachable() else {
            Issue.record("PostgreSQL at INVISO_TEST_POSTGRES_URL is unreachable, and CI=true requires it")
            return
        }
        let suffix = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let schema = "inviso_test_" + suffix
        var configuration = try PostgresRoomStore.configuration(url: PostgresTestServer.url)
        configuration.options.additionalStartupParameters = [("search_path", schema)]
        let admin = PostgresClient(configuration: configuration, backgroundLogger: PostgresTestServer.logger)
        let context = Context(configuration: configuration, channel: "inviso_test_bus_" + suffix, admin: admin)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            let outcome: Result<Void, any Error>
            do {
                // The name is ours (hex digits), not input: identifiers cannot be bound.
                try await context.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"))
                let buses = (0..<count).map { _ in context.makeBus() }
                try await runBuses(buses, timeout: timeout) {
                    for bus in buses { try await bus.waitUntilListening() }
                    try await body(buses, context)
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            _ = try? await context.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"))
            group.cancelAll()
            try outcome.get()
        }
    }

    /// Runs `buses` while `body` runs, then stops them; throws ``TimedOut`` after `timeout`
    /// and ``BusStoppedEarly`` when a bus's `run()` returns by itself.
    static func runBuses(
        _ buses: [PostgresSignalingBus], timeout: Duration, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for bus in buses {
                group.addTask {
                    try await bus.run()
                    return false
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut()
            }
            group.addTask {
                try await body()
                return true
            }
            // Throwing out of the group cancels the rest, which stops the buses.
            guard try await group.next() == true else { throw BusStoppedEarly() }
            group.cancelAll()
        }
    }

    /// The first `count` messages `bus` receives (fewer if the test is cancelled).
    static func receive(_ count: Int, from bus: PostgresSignalingBus) async -> [BusMessage] {
        var received: [BusMessage] = []
        guard count > 0 else { return received }
        for await message in bus.messages() {
            received.append(message)
            if received.count == count { break }
        }
        return received
    }

    /// Publishes `messages` one after the other.
    static func publish(_ messages: [[UInt8]], on bus: PostgresSignalingBus) async throws {
        for message in messages { try await bus.publish(message) }
    }

    /// Messages collected by a task, read by another.
    final class Inbox: Sendable {
        let messages = Mutex<[BusMessage]>([])
    }

    /// Runs `body` while a task appends everything `bus` receives to `inbox`.
    static func collect(
        from bus: PostgresSignalingBus, into inbox: Inbox, while body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await message in bus.messages() { inbox.messages.withLock { $0.append(message) } }
            }
            try await body()
            group.cancelAll()
        }
    }

    /// The spill rows ever inserted in the test schema (the sequence survives deletes).
    static func spillRowsInserted(_ context: Context) async throws -> Int {
        let rows = try await context.query(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM inviso_bus_spill_id_seq"
        )
        return try rows.first?.decode(Int.self) ?? -1
    }
}

/// Seeded payloads (InvisoTesting's SplitMix64 generator), so every run sends the same bytes.
enum BusPayloadGenerator {
    /// `count` messages whose sizes cycle through `sizes`.
    static func messages(_ count: Int, seed: UInt64, sizes: [Int] = BusSizes.mixed) -> [[UInt8]] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { generator.bytes(sizes[$0 % sizes.count]) }
    }
}

enum BusSizes {
    /// Inline (0, 10, 1000, 5800 bytes: 7755 with a 16-byte origin, just under 7800) and
    /// spilled (5900, just over; 7000; 64 KiB) sizes, interleaved.
    static let mixed = [10, 7_000, 65_536, 0, 5_800, 5_900, 1_000, 65_536, 10, 7_000]

    /// How many of `messages` a bus with a 16-byte instance ID spills.
    static func spilled(_ messages: [[UInt8]]) -> Int {
        messages.filter {
            BusNotification.inlineLength(originLength: 16, payloadCount: $0.count) > BusNotification.maximumInlineLength
        }.count
    }
}

/// The index and sizes of the first difference, for a short failure message.
private func firstDifference(_ received: [[UInt8]], _ sent: [[UInt8]]) -> String? {
    if received == sent { return nil }
    for index in 0..<min(received.count, sent.count) where received[index] != sent[index] {
        return "message \(index): received \(received[index].count) bytes, sent \(sent[index].count)"
    }
    return "received \(received.count) messages, sent \(sent.count)"
}

@Suite(
    "PostgresSignalingBus",
    .enabled(
        "needs PostgreSQL at INVISO_TEST_POSTGRES_URL (default 127.0.0.1:5432; start one with scripts/start-postgres.sh)",
        { await PostgresTestServer.isReachableOrRequired() }
    )
)
struct PostgresSignalingBusTests {
    @Test("200 messages of mixed sizes arrive in order at the other instance, never at the publisher")
    func oneWayInOrder() async throws {
        try await BusTestServer.withBuses { buses, context in
            let (a, b) = (buses[0], buses[1])
            let sent = BusPayloadGenerator.messages(200, seed: 1)
            async let receivedAtB = BusTestServer.receive(sent.count, from: b)
            for message in sent { try await a.publish(message) }
            let received = await receivedAtB

            #expect(firstDifference(received.map(\.payload), sent) == nil)
            #expect(received.allSatisfy { $0.origin == a.instanceID })
            // Both forms were used: the spill table got exactly the large ones.
            let spilled = BusSizes.spilled(sent)
            #expect(spilled > 0 && spilled < sent.count)
            #expect(try await BusTestServer.spillRowsInserted(context) == spilled)

            // A's own 200 notifications reached A's listener before this one (one
            // channel, commit order), so if A delivered any of them it comes first.
            try await b.publish([0xEE])
            let atA = await BusTestServer.receive(1, from: a)
            #expect(atA == [BusMessage(origin: b.instanceID, payload: [0xEE])])
        }
    }

    @Test("both instances publish at once: each receives exactly the other's messages, in order")
    func bothDirections() async throws {
        try await BusTestServer.withBuses { buses, _ in
            let (a, b) = (buses[0], buses[1])
            let fromA = BusPayloadGenerator.messages(100, seed: 2)
            let fromB = BusPayloadGenerator.messages(100, seed: 3)
            async let receivedAtA = BusTestServer.receive(fromB.count, from: a)
            async let receivedAtB = BusTestServer.receive(fromA.count, from: b)
            async let sendA: Void = BusTestServer.publish(fromA, on: a)
            async let sendB: Void = BusTestServer.publish(fromB, on: b)
            try await sendA
            try await sendB
            let (atA, atB) = await (receivedAtA, receivedAtB)

            #expect(firstDifference(atA.map(\.payload), fromB) == nil)
            #expect(atA.allSatisfy { $0.origin == b.instanceID })
            #expect(firstDifference(atB.map(\.payload), fromA) == nil)
            #expect(atB.allSatisfy { $0.origin == a.instanceID })
        }
    }

    @Test("three instances: each message reaches both others, in each publisher's order")
    func threeInstances() async throws {
        try await BusTestServer.withBuses(3) { buses, _ in
            let sent = buses.indices.map { BusPayloadGenerator.messages(30, seed: 10 + UInt64($0)) }
            try await withThrowingTaskGroup(of: (Int, [BusMessage]).self) { group in
                for (index, bus) in buses.enumerated() {
                    group.addTask { (index, await BusTestServer.receive(60, from: bus)) }
                    group.addTask {
                        for message in sent[index] { try await bus.publish(message) }
                        return (-1, [])
                    }
                }
                for try await (index, received) in group where index >= 0 {
                    for (other, bus) in buses.enumerated() where other != index {
                        let fromOther = received.filter { $0.origin == bus.instanceID }.map(\.payload)
                        #expect(firstDifference(fromOther, sent[other]) == nil)
                    }
                    #expect(!received.contains { $0.origin == buses[index].instanceID })
                }
            }
        }
    }

    @Test("1 MiB is carried; 1 MiB + 1 is refused with .payloadTooLarge")
    func payloadLimit() async throws {
        try await BusTestServer.withBuses { buses, _ in
            let (a, b) = (buses[0], buses[1])
            await #expect(throws: SignalingBusError(.payloadTooLarge)) {
                try await a.publish([UInt8](repeating: 7, count: PostgresSignalingBus.maximumPayloadSize + 1))
            }
            var generator = SeededGenerator(seed: 4)
            let largest = generator.bytes(PostgresSignalingBus.maximumPayloadSize)
            async let received = BusTestServer.receive(1, from: b)
            try await a.publish(largest)
            #expect(await received == [BusMessage(origin: a.instanceID, payload: largest)])
        }
    }

    @Test("other notifications on the channel are ignored, and messages still arrive after them")
    func ignoresForeignNotifications() async throws {
        try await BusTestServer.withBuses { buses, context in
            let (a, b) = (buses[0], buses[1])
            // Plain SQL, as another program would send it (the channel name is ours).
            try await context.query(PostgresQuery(unsafeSQL: "NOTIFY \(context.channel), 'junk'"))
            let junk = BusNotificationTests.malformed + [
                "someone:r:424242",  // well-formed, but there is no such spill row
                "\(b.instanceID):i:AAAA",  // claims to be b itself: b drops its own origin
            ]
            for text in junk {
                try await context.query("SELECT pg_notify(\(context.channel), \(text))")
            }
            async let received = BusTestServer.receive(2, from: b)
            try await a.publish([1, 2, 3])
            try await a.publish([UInt8](repeating: 9, count: 10_000))
            #expect(
                await received == [
                    BusMessage(origin: a.instanceID, payload: [1, 2, 3]),
                    BusMessage(origin: a.instanceID, payload: [UInt8](repeating: 9, count: 10_000)),
                ]
            )
        }
    }

    @Test("after its listening connection is killed, a bus listens again and messages arrive in order")
    func reconnects() async throws {
        try await BusTestServer.withBuses { buses, context in
            let (a, b) = (buses[0], buses[1])
            let killed = try await context.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name = \("inviso-bus-listen-" + b.instanceID)
                """
            )
            #expect(killed.count == 1)

            let received = BusTestServer.Inbox()
            let sent = BusPayloadGenerator.messages(40, seed: 5).map { [0x01] + $0 }
            try await BusTestServer.collect(from: b, into: received) {
                // Messages sent before b listens again are lost: probe until one arrives.
                try await Self.probe(from: a, until: received)
                for message in sent { try await a.publish(message) }
                try await Self.wait(for: sent.count, in: received) { $0.payload.first == 0x01 }
            }
            let after = received.messages.withLock { $0 }.filter { $0.payload.first == 0x01 }
            #expect(firstDifference(after.map(\.payload), sent) == nil)
            #expect(after.allSatisfy { $0.origin == a.instanceID })
        }
    }

    /// Publishes probes (`FF …`) from `bus` every 50 ms until `inbox` holds a message.
    private static func probe(from bus: PostgresSignalingBus, until inbox: BusTestServer.Inbox) async throws {
        var probe: UInt16 = 0
        while inbox.messages.withLock({ $0.isEmpty }) {
            probe &+= 1
            try await bus.publish([0xFF, UInt8(probe >> 8), UInt8(probe & 0xFF)])
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Returns once `inbox` holds `count` messages that satisfy `isCounted`.
    private static func wait(
        for count: Int, in inbox: BusTestServer.Inbox, where isCounted: @escaping @Sendable (BusMessage) -> Bool
    ) async throws {
        while inbox.messages.withLock({ $0.filter(isCounted).count }) < count {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("a bus deletes spill rows older than a minute when it starts, and keeps newer ones")
    func deletesOldSpillRows() async throws {
        try await BusTestServer.withBuses(1) { buses, context in
            // A large message makes sure the table exists.
            try await buses[0].publish([UInt8](repeating: 1, count: 20_000))
            let old = try await context.query(
                "INSERT INTO inviso_bus_spill (payload, created_at) VALUES (\(ByteBuffer(bytes: [2])), now() - interval '2 minutes') RETURNING id"
            )
            let oldID = try #require(try old.first?.decode(Int64.self))

            let second = context.makeBus()
            try await BusTestServer.runBuses([second], timeout: .seconds(180)) {
                while true {
                    let rows = try await context.query("SELECT 1 FROM inviso_bus_spill WHERE id = \(oldID)")
                    if rows.isEmpty { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let left = try await context.query("SELECT count(*) FROM inviso_bus_spill")
            #expect(try left.first?.decode(Int.self) == 1)
        }
    }

    @Test("publish after the bus stopped throws .notRunning, run() again throws .alreadyStarted, messages() ends")
    func afterStop() async throws {
        try await BusTestServer.withBuses(1) { _, context in
            let bus = context.makeBus()
            try await BusTestServer.runBuses([bus], timeout: .seconds(180)) {
                try await bus.waitUntilListening()
            }
            await #expect(throws: SignalingBusError(.notRunning)) { try await bus.publish([1]) }
            await #expect(throws: SignalingBusError(.alreadyStarted)) { try await bus.run() }
            var messages = bus.messages().makeAsyncIterator()
            #expect(await messages.next() == nil)
        }
    }

    @Test("a ServiceGroup's graceful shutdown stops the bus; each publish under way is sent or refused, none hangs")
    func gracefulShutdown() async throws {
        try await BusTestServer.withBuses(1) { buses, context in
            let bus = context.makeBus()
            let group = ServiceGroup(configuration: .init(services: [bus], logger: BusTestServer.logger))
            let outcomes = try await withThrowingTaskGroup(of: String?.self) { tasks in
                tasks.addTask {
                    try await group.run()
                    return nil
                }
                try await bus.waitUntilListening()
                for index in 0..<50 {
                    tasks.addTask {
                        do {
                            try await bus.publish([UInt8(index)] + [UInt8](repeating: 0, count: index * 400))
                            return "sent"
                        } catch let error as SignalingBusError where error.code == .notRunning {
                            return "refused"
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(20))
                await group.triggerGracefulShutdown()
                return try await tasks.reduce(into: [String]()) { if let outcome = $1 { $0.append(outcome) } }
            }
            #expect(outcomes.count == 50)
            await #expect(throws: SignalingBusError(.notRunning)) { try await bus.publish([1]) }
            // The first instance saw the messages that were sent, in order.
            let sent = outcomes.filter { $0 == "sent" }.count
            let received = await BusTestServer.receive(sent, from: buses[0])
            #expect(received.count == sent)
            #expect(received.allSatisfy { $0.origin == bus.instanceID })
        }
    }

    @Test("throughput (printed, not asserted)")
    func throughput() async throws {
        try await BusTestServer.withBuses { buses, _ in
            let (a, b) = (buses[0], buses[1])
            for (label, count, size) in [("inline, 100 B", 1_000, 100), ("spilled, 16 KiB", 200, 16_384)] {
                let sent = BusPayloadGenerator.messages(count, seed: 6, sizes: [size])
                let clock = ContinuousClock()
                let start = clock.now
                async let received = BusTestServer.receive(count, from: b)
                for message in sent { try await a.publish(message) }
                let publishedAfter = clock.now - start
                #expect(await received.count == count)
                let elapsed = clock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print(
                    "PostgresSignalingBus throughput, \(label): \(count) messages in \(elapsed) "
                        + "(published in \(publishedAfter)), \(Int(Double(count) / seconds)) messages/s"
                )
            }
        }
    }
}

@Suite("PostgresSignalingBus without a database")
struct PostgresSignalingBusOfflineTests {
    static func bus(channel: String = "inviso_signaling", instanceID: String? = nil) throws -> PostgresSignalingBus {
        let configuration = try PostgresRoomStore.configuration(url: "postgres://nobody@127.0.0.1:1/none")
        if let instanceID {
            return PostgresSignalingBus(
                configuration: configuration, channel: channel, instanceID: instanceID, logger: PostgresTestServer.logger
            )
        }
        return PostgresSignalingBus(configuration: configuration, channel: channel, logger: PostgresTestServer.logger)
    }

    @Test("publish before run() throws .notRunning")
    func publishBeforeRun() async throws {
        let bus = try Self.bus()
        await #expect(throws: SignalingBusError(.notRunning)) { try await bus.publish([1, 2, 3]) }
    }

    @Test("a message over 1 MiB is refused before anything else")
    func tooLargeBeforeRun() async throws {
        let bus = try Self.bus()
        await #expect(throws: SignalingBusError(.payloadTooLarge)) {
            try await bus.publish([UInt8](repeating: 0, count: (1 << 20) + 1))
        }
    }

    @Test("the default instance ID is 16 hex digits, new for each bus")
    func defaultInstanceID() throws {
        let (first, second) = (try Self.bus(), try Self.bus())
        #expect(first.instanceID.count == 16)
        #expect(first.instanceID.allSatisfy { $0.isHexDigit })
        #expect(first.instanceID != second.instanceID)
    }

    @Test(
        "run() refuses an unusable channel or instance ID",
        arguments: [
            ("Inviso", "a"), ("1abc", "a"), ("", "a"), ("with space", "a"), ("a\"b", "a"),
            (String(repeating: "c", count: 64), "a"), ("ok", ""), ("ok", "a:b"), ("ok", String(repeating: "i", count: 65)),
            ("ok", "é"),
        ]
    )
    func invalidConfiguration(_ channel: String, _ instanceID: String) async throws {
        let bus = try Self.bus(channel: channel, instanceID: instanceID)
        await #expect(throws: SignalingBusError(.invalidConfiguration)) { try await bus.run() }
        await #expect(throws: SignalingBusError(.notRunning)) { try await bus.publish([1]) }
    }
}

@Suite("PostgresSignalingBus notification format")
struct BusNotificationTests {
    /// Texts that are not bus notifications.
    static let malformed = [
        "junk", "", ":", "a", "a:", "a:i", ":i:AAAA", "a:i:!!!!", "a:i:AAA", "a:i:AA==AA==x", "a:x:AAAA", "a:I:AAAA",
        "a:r:", "a:r:-5", "a:r:0", "a:r:00", "a:r:12a", "a:r:+7", "a:r: 7", "a:r:1234567890123456789",
        "bad origin:i:AAAA", "é:i:AAAA", String(repeating: "o", count: 65) + ":i:AAAA", "a;i:AAAA", "a:i;AAAA",
    ]

    @Test("malformed texts are rejected", arguments: malformed)
    func rejects(_ text: String) {
        #expect(BusNotification(text: text) == nil)
    }

    @Test("a text longer than PostgreSQL can deliver is rejected, even when well-formed")
    func rejectsOverlong() {
        let longest = "abcd:i:" + String(repeating: "A", count: 7_992)
        #expect(longest.utf8.count == BusNotification.maximumTextLength)
        #expect(BusNotification(text: longest) != nil)
        #expect(BusNotification(text: longest + "AAAA") == nil)
    }

    @Test("inline messages round-trip, and their length is what inlineLength(originLength:payloadCount:) says")
    func inlineRoundTrip() {
        var generator = SeededGenerator(seed: 7)
        for size in Array(0...64) + [1_000, 5_800, 5_810] {
            let notification = BusNotification.inline(origin: "A.b_c-9", payload: generator.bytes(size))
            #expect(BusNotification(text: notification.text) == notification)
            #expect(notification.text.utf8.count == BusNotification.inlineLength(originLength: 7, payloadCount: size))
        }
    }

    @Test("spilled references round-trip", arguments: [Int64(1), 42, 999_999_999_999_999_999])
    func spilledRoundTrip(_ id: Int64) {
        let notification = BusNotification.spilled(origin: String(repeating: "x", count: 64), id: id)
        #expect(BusNotification(text: notification.text) == notification)
        #expect(notification.text.hasSuffix(":r:\(id)"))
    }

    @Test("every single-byte change of a valid text parses to something else or nothing, never crashes")
    func mutations() {
        let valid = BusNotification.inline(origin: "origin", payload: [1, 2, 3, 4, 5]).text
        let bytes = Array(valid.utf8)
        for index in bytes.indices {
            for replacement in [UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "!"), 0, 0x80] {
                var mutated = bytes
                guard mutated[index] != replacement else { continue }
                mutated[index] = replacement
                let parsed = BusNotification(text: String(decoding: mutated, as: UTF8.self))
                #expect(parsed != BusNotification(text: valid))
            }
        }
    }
}
