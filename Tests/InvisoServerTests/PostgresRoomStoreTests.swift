import Foundation
import InvisoServer
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use: `INVISO_TEST_POSTGRES_URL`, default
/// `postgres://inviso:inviso@127.0.0.1:5432/inviso_test` (what `scripts/start-postgres.sh`
/// sets up). Without a reachable server the tests are skipped, unless `CI=true`, where
/// they run and fail.
enum PostgresTestServer {
    static let url =
        ProcessInfo.processInfo.environment["INVISO_TEST_POSTGRES_URL"]
        ?? "postgres://inviso:inviso@127.0.0.1:5432/inviso_test"

    static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    static let logger = Logger(label: "inviso.tests.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Whether a TCP connection to the server's host and port opens within two seconds.
    static func isReachable() async -> Bool {
        guard let configuration = try? PostgresRoomStore.configuration(url: url),
            let host = configuration.host, let port = configuration.port
        else { return false }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(2))
                .connect(host: host, port: port)
                .get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }

    /// The `.enabled(if:)` condition: run when the server answers, or when CI requires it.
    static func isReachableOrRequired() async -> Bool {
        if isRequired { return true }
        return await isReachable()
    }

    /// Runs `body` with `count` stores (separate pools, like separate server instances) on
    /// a new, empty schema of the test database, migrated by the first store unless
    /// `migrate` is false; the schema is dropped afterwards.
    static func withStores(
        _ count: Int = 1, migrate: Bool = true, _ body: ([PostgresRoomStore]) async throws -> Void
    ) async throws {
        guard await isReachable() else {
            Issue.record("PostgreSQL at INVISO_TEST_POSTGRES_URL is unreachable, and CI=true requires it")
            return
        }
        let base = try PostgresRoomStore.configuration(url: url)
        // A fresh schema per test: reruns and parallel tests never see each other's rows.
        let schema = "inviso_test_" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        var scoped = base
        scoped.options.additionalStartupParameters = [("search_path", schema)]
        let admin = PostgresClient(configuration: base, backgroundLogger: logger)
        let stores = (0..<count).map { _ in PostgresRoomStore(configuration: scoped, logger: logger) }

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            for store in stores {
                group.addTask { try await store.run() }
            }
            let outcome: Result<Void, any Error>
            do {
                // The name is ours (hex digits), not input: identifiers cannot be bound.
                try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
                if migrate { try await stores[0].migrate() }
                try await body(stores)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            _ = try? await admin.query(
                PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
            group.cancelAll()
            try outcome.get()
        }
    }
}

@Suite(
    "PostgresRoomStore",
    .enabled(
        "needs PostgreSQL at INVISO_TEST_POSTGRES_URL (default 127.0.0.1:5432; start one with scripts/start-postgres.sh)",
        { await PostgresTestServer.isReachableOrRequired() }
    )
)
struct PostgresRoomStoreTests {
    @Test("conformance", arguments: RoomStoreConformance.allCases)
    func conformance(_ check: RoomStoreConformance) async throws {
        try await PostgresTestServer.withStores { stores in
            try await check.run(stores[0])
        }
    }

    @Test("two instances on one database race on one code: one accept wins")
    func twoInstancesRaceAccepts() async throws {
        try await PostgresTestServer.withStores(2) { stores in
            try await RoomStoreConformance.racingAccepts(stores)
        }
    }

    @Test("two instances on one database race on one code: one insert wins")
    func twoInstancesRaceInserts() async throws {
        try await PostgresTestServer.withStores(2) { stores in
            try await RoomStoreConformance.racingInserts(stores)
        }
    }

    @Test("instances migrating at once apply each version once")
    func concurrentMigrations() async throws {
        try await PostgresTestServer.withStores(3, migrate: false) { stores in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores {
                    group.addTask { try await store.migrate() }
                }
                try await group.waitForAll()
            }
            try await stores[1].migrate()
            try await RoomStoreConformance.insertThenTaken(stores[2])
        }
    }

    @Test("database errors become .unavailable without device IDs in the detail")
    func errorsAreMapped() async throws {
        try await PostgresTestServer.withStores(migrate: false) { stores in
            let secret = "device-secret-1234"
            do {
                _ = try await stores[0].check(joinID: "100001", client1: secret, now: RoomStoreConformance.t0)
                Issue.record("querying an unmigrated schema succeeded")
            } catch let error as RoomStoreError {
                #expect(error.code == .unavailable)
                #expect(!error.detail.contains(secret))
                #expect(!error.description.contains(secret))
            }
        }
    }
}

@Suite("PostgresRoomStore.configuration(url:)")
struct PostgresConfigurationTests {
    @Test("parses user, password, host, port and database")
    func parsesURL() throws {
        let configuration = try PostgresRoomStore.configuration(url: "postgres://inviso:s%40cret@db.example:6543/rooms")
        #expect(configuration.host == "db.example")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "inviso")
        #expect(configuration.password == "s@cret")
        #expect(configuration.database == "rooms")
    }

    @Test("postgresql:// scheme, default port, no password, no database")
    func defaults() throws {
        let configuration = try PostgresRoomStore.configuration(url: "postgresql://inviso@localhost")
        #expect(configuration.host == "localhost")
        #expect(configuration.port == 5432)
        #expect(configuration.password == nil)
        #expect(configuration.database == nil)
    }

    @Test(
        "rejects malformed URLs without echoing them",
        arguments: [
            "mysql://inviso:pw@127.0.0.1/db", "postgres://127.0.0.1/db", "postgres://inviso:pw@/db",
            "postgres://inviso:pw@127.0.0.1/a/b", "postgres://inviso:pw@127.0.0.1/db?sslmode=verify-full",
            "not a url",
        ]
    )
    func rejects(_ url: String) {
        do {
            _ = try PostgresRoomStore.configuration(url: url)
            Issue.record("accepted \(url)")
        } catch let error as RoomStoreError {
            #expect(error.code == .unavailable)
            #expect(!error.detail.contains("pw"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("sslmode overrides are accepted", arguments: ["disable", "prefer", "require"])
    func sslModes(_ mode: String) throws {
        let configuration = try PostgresRoomStore.configuration(url: "postgres://u:p@127.0.0.1/db?sslmode=\(mode)")
        #expect(configuration.database == "db")
    }
}
