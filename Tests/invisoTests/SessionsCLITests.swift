import Foundation
import InvisoCrypto
import InvisoStore
import Testing

@testable import inviso

/// `inviso sessions` and `inviso verify` against a real encrypted store in a temporary data
/// directory, run as the built executable.
@Suite("inviso sessions / verify CLI", .serialized, .timeLimit(.minutes(6)))
struct SessionsCLITests {
    static let passphrase = "correct horse battery staple"
    static let verifiedID = "5f0c1e2a-7b3d-4c8e-9a10-0123456789ab"
    static let pendingID = "9a77d0c4-1111-4e2b-8f00-fedcba987654"
    static let inviteSecret = "271828-orbit-violin-quantum"
    static let safetyNumber = (0..<60).map { String(($0 * 7) % 10) }.joined()

    struct Run {
        let status: Int32
        let stdout: String
        let transcript: String
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:]
        }
    }

    static func inviso(
        _ arguments: [String], environment: [String: String] = ["INVISO_PASSPHRASE": passphrase],
        unsetting: [String] = []
    ) async throws -> Run {
        let child = try ChildProcess(
            try NoiseInteropTests.invisoBinary(), arguments, environment: environment, unsetting: unsetting)
        child.closeInput()
        let status = await child.waitForExit(timeout: 60) ?? -1
        let transcript = child.transcript
        let stdout =
            transcript.components(separatedBy: "stderr:\n").first.map { String($0.dropFirst("stdout:\n".count)) } ?? ""
        return Run(status: status, stdout: stdout, transcript: transcript)
    }

    /// A data directory holding two sessions: a verified v2 one with three messages and a
    /// pinned identity, and a pending ephemeral v1 one.
    static func makeStore(keySource: MasterKeySource = .passphrase(passphrase)) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "inviso-sessions-\(UUID().uuidString)")
        let store = try InvisoStore(directory: directory, keySource: keySource)
        defer { store.close() }
        let created = Date(timeIntervalSince1970: 1_750_000_000)
        try store.saveSession(
            StoredSession(
                id: verifiedID, createdAt: created, state: .active, lifetime: .sevenDays, name: "Alice",
                serverURL: "http://127.0.0.1:8080", joinCode: inviteSecret, roomID: "room-1", deviceID: "device-1",
                protocolVersion: 2, peerDisplayName: "alice's phone"))
        try store.savePinnedIdentity(
            PinnedIdentity(publicKey: Data(repeating: 7, count: 32), safetyNumber: safetyNumber, isVerified: true),
            sessionID: verifiedID)
        for index in 0..<3 {
            try store.appendMessage(
                id: "m\(index)", sessionID: verifiedID, direction: .sent, text: "hello \(index)", at: Date())
        }
        try store.saveSecret(SecretBytes(Array(repeating: 9, count: 32)), kind: .ratchet, sessionID: verifiedID)
        try store.saveSession(
            StoredSession(
                id: pendingID, createdAt: created.addingTimeInterval(60), state: .pending, lifetime: .ephemeral,
                name: "Bob\u{1B}[31m", serverURL: "http://127.0.0.1:8080", joinCode: "314159", protocolVersion: 1))
        return directory
    }

    @Test("--json lists every session with what the store keeps, and never the invite secret")
    func listJSON() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await Self.inviso(["sessions", "--data", directory.path, "--json"])
        #expect(run.status == 0, "\(run.transcript)")
        let sessions = try #require(run.json["sessions"] as? [[String: Any]], "\(run.transcript)")
        #expect(sessions.count == 2)
        let byID = Dictionary(uniqueKeysWithValues: sessions.map { ($0["id"] as? String ?? "", $0) })
        let alice = try #require(byID[Self.verifiedID])
        #expect(alice["name"] as? String == "Alice")
        #expect(alice["state"] as? String == "active")
        #expect(alice["protocol"] as? String == "v2")
        #expect(alice["verified"] as? Bool == true)
        #expect(alice["lifetime"] as? String == "7d")
        #expect(alice["messages"] as? Int == 3)
        #expect(alice["created"] as? String == "2025-06-15T15:06:40.000Z")
        #expect(alice["peer"] as? String == "alice's phone")
        let bob = try #require(byID[Self.pendingID])
        #expect(bob["protocol"] as? String == "v1")
        #expect(bob["verified"] is NSNull)
        #expect(bob["lifetime"] as? String == "ephemeral")
        #expect(bob["messages"] as? Int == 0)
        #expect(!run.transcript.contains(Self.inviteSecret) && !run.transcript.contains("room-1"))
        #expect(!run.transcript.contains(Self.passphrase))
    }

    @Test("The text list is a table with sanitized names; `list` is the default subcommand")
    func listText() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        for arguments in [["sessions", "--data", directory.path], ["sessions", "list", "--data", directory.path]] {
            let run = try await Self.inviso(arguments)
            #expect(run.status == 0, "\(run.transcript)")
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.count == 3, "\(run.transcript)")
            #expect(lines.first?.hasPrefix("ID") == true)
            #expect(lines.dropFirst().first?.hasPrefix(Self.pendingID) == true, "newest first")
            #expect(run.stdout.contains(Self.verifiedID) && run.stdout.contains("Alice"))
            #expect(run.stdout.contains("Bob\u{FFFD}[31m"))
            #expect(!run.stdout.contains("\u{1B}"))
        }
    }

    @Test("An empty data directory lists nothing and creates no store or key")
    func emptyDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "inviso-empty-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await Self.inviso(["sessions", "--data", directory.path], unsetting: ["INVISO_PASSPHRASE"])
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.stdout == "no sessions\n")
        let json = try await Self.inviso(["sessions", "--data", directory.path, "--json"])
        #expect((json.json["sessions"] as? [Any])?.isEmpty == true, "\(json.transcript)")
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        let verify = try await Self.inviso(["verify", Self.verifiedID, "--data", directory.path])
        #expect(verify.status != 0)
        #expect(verify.transcript.contains("no Inviso store"))
    }

    @Test("A wrong or missing passphrase fails cleanly, naming INVISO_PASSPHRASE and not the passphrase")
    func wrongPassphrase() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent(InvisoStore.databaseFileName)
        let before = try Data(contentsOf: database)
        let wrong = try await Self.inviso(
            ["sessions", "--data", directory.path, "--json"], environment: ["INVISO_PASSPHRASE": "guess"])
        #expect(wrong.status != 0)
        #expect(
            (wrong.json["error"] as? String)?.contains("INVISO_PASSPHRASE does not open") == true, "\(wrong.transcript)"
        )
        #expect(!wrong.transcript.contains("guess"))
        let missing = try await Self.inviso(["sessions", "--data", directory.path], unsetting: ["INVISO_PASSPHRASE"])
        #expect(missing.status != 0)
        #expect(missing.transcript.contains("set INVISO_PASSPHRASE"), "\(missing.transcript)")
        #expect(try Data(contentsOf: database) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(InvisoStore.keyFileName).path))
    }

    @Test("A key-file store opens without a passphrase")
    func keyFileStore() async throws {
        let directory = try Self.makeStore(keySource: .keyFile)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await Self.inviso(
            ["sessions", "--data", directory.path, "--json"], environment: [:], unsetting: ["INVISO_PASSPHRASE"])
        #expect((run.json["sessions"] as? [Any])?.count == 2, "\(run.transcript)")
        let withPassphrase = try await Self.inviso(["sessions", "--data", directory.path])
        #expect(withPassphrase.status != 0)
        #expect(withPassphrase.transcript.contains("unset INVISO_PASSPHRASE"), "\(withPassphrase.transcript)")
    }

    @Test("rename by ID prefix; unknown, ambiguous and empty names are refused")
    func rename() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await Self.inviso(["sessions", "rename", "5f0c", "Alice (work)", "--data", directory.path, "--json"])
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.json["renamed"] as? String == Self.verifiedID)
        #expect(run.json["name"] as? String == "Alice (work)")
        let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
        #expect(try store.session(id: Self.verifiedID)?.name == "Alice (work)")
        store.close()

        let unknown = try await Self.inviso(["sessions", "rename", "0000", "x", "--data", directory.path, "--json"])
        #expect(
            unknown.status != 0 && (unknown.json["error"] as? String)?.contains("no session") == true,
            "\(unknown.transcript)")
        let short = try await Self.inviso(["sessions", "rename", "5f", "x", "--data", directory.path])
        #expect(short.status != 0)
        let empty = try await Self.inviso(["sessions", "rename", Self.verifiedID, "  ", "--data", directory.path])
        #expect(empty.status != 0 && empty.transcript.contains("empty"))
        let control = try await Self.inviso(["sessions", "rename", Self.verifiedID, "a\u{1B}b", "--data", directory.path])
        #expect(control.status != 0)
    }

    @Test("delete removes the session with its messages, identity and keys; the other stays")
    func delete() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await Self.inviso(["sessions", "delete", Self.verifiedID, "--local", "--data", directory.path])
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.stdout == "deleted \(Self.verifiedID) (server: skipped)\n")
        let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
        defer { store.close() }
        #expect(try store.session(id: Self.verifiedID) == nil)
        #expect(try store.messages(sessionID: Self.verifiedID, now: Date()).isEmpty)
        #expect(try store.pinnedIdentity(sessionID: Self.verifiedID) == nil)
        #expect(try store.secret(kind: .ratchet, sessionID: Self.verifiedID) == nil)
        #expect(try store.sessions().map(\.id) == [Self.pendingID])
        let again = try await Self.inviso(["sessions", "delete", Self.verifiedID, "--data", directory.path, "--json"])
        #expect(again.status != 0 && again.json["error"] is String)
    }

    @Test("verify prints the stored safety number; a session without one is an error")
    func verify() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try await Self.inviso(["verify", Self.verifiedID, "--data", directory.path])
        #expect(text.status == 0, "\(text.transcript)")
        #expect(text.stdout.contains(SafetyNumberText.grouped(Self.safetyNumber)))
        #expect(text.stdout.contains("verified"))
        let json = try await Self.inviso(["verify", "5f0c1e", "--data", directory.path, "--json"])
        #expect(json.json["safety_number"] as? String == Self.safetyNumber, "\(json.transcript)")
        #expect(json.json["verified"] as? Bool == true)
        #expect(json.json["protocol"] as? String == "v2")
        let none = try await Self.inviso(["verify", Self.pendingID, "--data", directory.path, "--json"])
        #expect(none.status != 0)
        #expect((none.json["error"] as? String)?.contains("no safety number") == true, "\(none.transcript)")
    }
}

/// The text table, in-process.
@Suite("Session table")
struct SessionTableTests {
    @Test("Columns line up under their headings; no sessions gives a sentence")
    func table() {
        let session = StoredSession(
            id: "abcd", createdAt: Date(timeIntervalSince1970: 0), state: .active, lifetime: .oneDay, name: "Zoë",
            serverURL: "http://x", protocolVersion: 2)
        let summary = SessionSummary(
            session, identity: PinnedIdentity(publicKey: Data(), isVerified: false), messageCount: 12)
        let table = SessionTable.render([summary], timeZone: TimeZone(identifier: "UTC")!)
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0] == "ID    NAME  STATE   PROTOCOL  VERIFIED  LIFETIME  CREATED           MESSAGES")
        #expect(lines[1] == "abcd  Zoë   active  v2        no        1d        1970-01-01 00:00  12")
        #expect(SessionTable.render([]) == "no sessions")
        #expect(SessionSummary.iso8601(Date(timeIntervalSince1970: 1.5)) == "1970-01-01T00:00:01.500Z")
    }
}
