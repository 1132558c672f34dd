import Foundation
import InvisoCrypto
import InvisoStore
import Testing

@testable import inviso
import InvisoTesting

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
        unsetting: [String] = [], input: String? = nil
    ) async throws -> Run {
        let child = try ChildProcess(
            try NoiseInteropTests.invisoBinary(), arguments, environment: environment, unsetting: unsetting)
        if let input { child.write(input) }
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
        // Asked first: no answer (or "n") deletes nothing.
        let unanswered = try await Self.inviso(["sessions", "delete", Self.verifiedID, "--local", "--data", directory.path])
        #expect(unanswered.status != 0 && unanswered.transcript.contains("not deleted"), "\(unanswered.transcript)")
        #expect(unanswered.transcript.contains("Delete session \(Self.verifiedID) (Alice)"))
        let refused = try await Self.inviso(
            ["sessions", "delete", Self.verifiedID, "--local", "--data", directory.path], input: "n\n")
        #expect(refused.status != 0)
        do {
            let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
            defer { store.close() }
            #expect(try store.session(id: Self.verifiedID) != nil)
        }
        let run = try await Self.inviso(
            ["sessions", "delete", Self.verifiedID, "--local", "--data", directory.path], input: "y\n")
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.stdout == "deleted \(Self.verifiedID) (server: skipped)\n")
        let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
        defer { store.close() }
        #expect(try store.session(id: Self.verifiedID) == nil)
        #expect(try store.messages(sessionID: Self.verifiedID, now: Date()).isEmpty)
        #expect(try store.pinnedIdentity(sessionID: Self.verifiedID) == nil)
        #expect(try store.secret(kind: .ratchet, sessionID: Self.verifiedID) == nil)
        #expect(try store.sessions().map(\.id) == [Self.pendingID])
        let again = try await Self.inviso(["sessions", "delete", Self.verifiedID, "--data", directory.path, "--json", "--yes"])
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

    @Test("IDs match in either case; a prefix under 4 characters is refused with that reason")
    func idsInEitherCase() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let upper = try await Self.inviso(["verify", "5F0C1E", "--data", directory.path, "--json"])
        #expect(upper.json["safety_number"] as? String == Self.safetyNumber, "\(upper.transcript)")
        let whole = try await Self.inviso(["history", Self.verifiedID.uppercased(), "--data", directory.path, "--json"])
        #expect(whole.json["session"] as? String == Self.verifiedID, "\(whole.transcript)")
        let short = try await Self.inviso(["verify", "5f0", "--data", directory.path])
        #expect(short.status != 0 && short.transcript.contains("at least 4 characters"), "\(short.transcript)")
    }

    @Test("history prints a session's kept messages, as text and JSON, and --last cuts it")
    func history() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try await Self.inviso(["history", "5f0c", "--data", directory.path])
        #expect(text.status == 0, "\(text.transcript)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 3 && lines[0].hasSuffix("  you: hello 0") && lines[2].hasSuffix("  you: hello 2"), "\(text.stdout)")
        let json = try await Self.inviso(["history", "5f0c", "--data", directory.path, "--json", "--last", "1"])
        let messages = try #require(json.json["messages"] as? [[String: Any]], "\(json.transcript)")
        #expect(messages.count == 1 && messages[0]["text"] as? String == "hello 2" && messages[0]["direction"] as? String == "sent")
        let none = try await Self.inviso(["history", Self.pendingID, "--data", directory.path])
        #expect(none.status == 0 && none.stdout.contains("no messages kept"))
    }

    @Test("prune removes left sessions and old invites that never paired; resumable ones stay; resuming a left one says so")
    func prune() async throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let leftID = "0b0b0b0b-2222-4e2b-8f00-000000000001"
        let freshID = "0c0c0c0c-3333-4e2b-8f00-000000000002"
        do {
            let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
            defer { store.close() }
            try store.saveSession(StoredSession(
                id: leftID, createdAt: Date(), state: .closed, lifetime: .sevenDays, name: "left",
                serverURL: "http://127.0.0.1:8080", protocolVersion: 2))
            try store.saveSession(StoredSession(
                id: freshID, createdAt: Date(), state: .pending, lifetime: .sevenDays, name: "waiting",
                serverURL: "http://127.0.0.1:8080", protocolVersion: 2))
        }
        let resume = try await Self.inviso(["resume", "0b0b0b", "--data", directory.path])
        #expect(resume.status != 0 && resume.transcript.contains("was left or ended: it cannot be resumed"), "\(resume.transcript)")
        #expect(!resume.transcript.contains("store failed"))
        let pruned = try await Self.inviso(["sessions", "prune", "--data", directory.path, "--json"])
        #expect(Set(pruned.json["pruned"] as? [String] ?? []) == [leftID, Self.pendingID], "\(pruned.transcript)")
        let store = try InvisoStore(directory: directory, keySource: .passphrase(Self.passphrase))
        defer { store.close() }
        #expect(Set(try store.sessions().map(\.id)) == [Self.verifiedID, freshID])
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
