import Foundation
import GRDB
import InvisoStore
import Testing

/// Shared fixtures: a fresh directory per test, cheap scrypt, whole-second times.
enum Fixture {
    static let passphrase = "correct horse battery staple"
    /// scrypt at N = 2^10 so each open costs about a millisecond (production uses 2^15).
    static let source = MasterKeySource.passphrase(passphrase, parameters: ._insecureForTesting(logN: 10))
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs `body` with a directory path that does not exist yet (the store creates it), and
    /// removes it afterwards.
    static func withDirectory<Result>(_ body: (URL) throws -> Result) throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("inviso-store-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    /// Runs `body` with a store opened (``source``) on a fresh directory.
    static func withStore<Result>(_ body: (InvisoStore, URL) throws -> Result) throws -> Result {
        try withDirectory { directory in
            try body(try InvisoStore(directory: directory, keySource: source), directory)
        }
    }

    /// Expects that no file in `directory` contains any of `needles`.
    static func expectAbsent(
        _ needles: [Data], in directory: URL, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for (name, bytes) in try files(in: directory) {
            for needle in needles {
                #expect(!bytes.contains(needle), "\(name) holds bytes it must not", sourceLocation: sourceLocation)
            }
        }
    }

    static func session(
        _ id: String, lifetime: MessageLifetime = .sevenDays, name: String = "Alice",
        state: SessionState = .active, at createdAt: Date = t0
    ) -> StoredSession {
        StoredSession(
            id: id, createdAt: createdAt, state: state, lifetime: lifetime, name: name,
            serverURL: "https://inviso.example", joinCode: "482913-orbit-velvet-nimbus", roomID: "room-\(id)",
            deviceID: "device-\(id)", protocolVersion: 2, peerDisplayName: "Bob"
        )
    }

    /// Every regular file in `directory` with its bytes.
    static func files(in directory: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            result[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return result
    }

    /// Runs `body` in a write transaction on a second, raw connection to the store's file.
    static func withRawDatabase<Result>(_ directory: URL, _ body: (Database) throws -> Result) throws -> Result {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let queue = try DatabaseQueue(
            path: directory.appendingPathComponent(InvisoStore.databaseFileName).path, configuration: configuration
        )
        defer { try? queue.close() }
        return try queue.write(body)
    }
}

extension Data {
    /// Whether `needle` occurs anywhere in these bytes.
    func contains(_ needle: Data) -> Bool { range(of: needle) != nil }
}
