import Foundation
import Testing
import InvisoTesting

/// Two `inviso offline` stores talk through the command line alone: invites and messages in
/// every encoding and both forms, both directions, PQXDH and X3DH; rotation on an injected
/// clock; order, replays and tampering; the clipboard; export, import and reset.
@Suite("inviso offline CLI", .serialized, .timeLimit(.minutes(8)))
struct OfflineCLITests {
    struct Result {
        let status: Int32
        let events: [[String: Any]]
        let transcript: String
        var last: [String: Any] { events.last ?? [:] }
    }

    static let start: Int64 = 1_795_743_453_000
    static let day: Int64 = 24 * 3600 * 1000

    /// Runs `inviso offline ARGS --data DATA --json [--now NOW]` with `input` on standard input.
    static func offline(
        _ arguments: [String], data: URL, input: String? = nil, now: Int64? = nil, environment: [String: String] = [:]
    ) async throws -> Result {
        var all = ["offline"] + arguments + ["--data", data.path, "--json"]
        if let now { all += ["--now", String(now)] }
        // A key file, not a passphrase: scrypt would cost each process 80 ms.
        let child = try ChildProcess(
            try NoiseInteropTests.invisoBinary(), all, environment: environment, unsetting: ["INVISO_PASSPHRASE"])
        if let input { child.write(input) }
        child.closeInput()
        let status = await child.waitForExit(timeout: 60)
        if status == nil { child.kill() }
        return Result(status: status ?? -1, events: child.events, transcript: child.transcript)
    }

    final class Root {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-offline-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func child(_ name: String) -> URL { url.appendingPathComponent(name) }
    }

    /// Seals `text` from `data` to `name` and returns the text to paste.
    static func seal(
        _ text: String, from data: URL, to name: String, encoding: String = "base64", format: String = "android", now: Int64? = nil
    ) async throws -> String {
        let result = try await offline(["seal", "--to", name, "--encoding", encoding, "--format", format, text], data: data, now: now)
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.last["event"] as? String == "sealed" && result.last["encoding"] as? String == encoding)
        return try #require(result.last["text"] as? String)
    }

    /// Opens `text` in `data`; returns the event.
    static func open(_ text: String, in data: URL, as name: String? = nil, now: Int64? = nil) async throws -> Result {
        try await offline(["open"] + (name.map { ["--as", $0] } ?? []), data: data, input: text, now: now)
    }

    /// Alice and Bob with accounts, Bob having opened Alice's invite and written first.
    static func pair(in root: Root, kyber: Bool = true, inviteEncoding: String = "fairytale", format: String = "android") async throws -> (alice: URL, bob: URL) {
        let alice = root.child("alice")
        let bob = root.child("bob")
        for data in [alice, bob] {
            let created = try await offline(["init"], data: data, now: start)
            #expect(created.status == 0 && created.last["event"] as? String == "account", "\(created.transcript)")
        }
        let invite = try await offline(
            ["invite", "--encoding", inviteEncoding, "--format", format] + (kyber ? [] : ["--no-kyber"]), data: alice, now: start)
        #expect(invite.status == 0, "\(invite.transcript)")
        let inviteText = try #require(invite.last["text"] as? String)
        let opened = try await open(inviteText, in: bob, as: "alice", now: start)
        #expect(opened.last["event"] as? String == "contact" && opened.last["added"] as? Bool == true, "\(opened.transcript)")
        #expect(opened.last["session"] as? String == (kyber ? "PQXDH" : "X3DH"))
        let first = try await seal("hello alice", from: bob, to: "alice", encoding: inviteEncoding, format: format, now: start + 1)
        let read = try await open(first, in: alice, as: "bob", now: start + 2)
        #expect(read.last["event"] as? String == "message" && read.last["text"] as? String == "hello alice", "\(read.transcript)")
        #expect(read.last["from"] as? String == "bob")
        return (alice, bob)
    }

    @Test("every encoding and both forms, both directions, over PQXDH and X3DH", arguments: [true, false])
    func everyEncoding(kyber: Bool) async throws {
        let root = try Root()
        let (alice, bob) = try await Self.pair(in: root, kyber: kyber)
        var now = Self.start + 10
        for format in ["android", "ios"] {
            for encoding in ["raw", "fairytale", "base64"] {
                now += 10
                let toBob = try await Self.seal("alice → bob \(encoding) \(format) ✓", from: alice, to: "bob", encoding: encoding, format: format, now: now)
                let atBob = try await Self.open(toBob, in: bob, now: now + 1)
                #expect(atBob.last["text"] as? String == "alice → bob \(encoding) \(format) ✓", "\(atBob.transcript)")
                let toAlice = try await Self.seal("bob → alice \(encoding) \(format)", from: bob, to: "alice", encoding: encoding, format: format, now: now + 2)
                let atAlice = try await Self.open(toAlice, in: alice, now: now + 3)
                #expect(atAlice.last["text"] as? String == "bob → alice \(encoding) \(format)", "\(atAlice.transcript)")
                #expect(atAlice.last["timestamp"] as? Int == Int(now + 2))
            }
        }
        let contacts = try await Self.offline(["contacts"], data: alice)
        #expect(contacts.last["name"] as? String == "bob" && contacts.last["session"] as? String == (kyber ? "PQXDH" : "X3DH"))
        let history = try await Self.offline(["history", "bob"], data: alice)
        #expect(history.events.count == 13 && history.events.first?["text"] as? String == "hello alice")
    }

    @Test("invites in the iOS form and as raw JSON; safety numbers match on both sides")
    func iOSInvite() async throws {
        let root = try Root()
        let (alice, bob) = try await Self.pair(in: root, inviteEncoding: "raw", format: "ios")
        let fromAlice = try await Self.offline(["contacts", "show", "bob"], data: alice)
        let fromBob = try await Self.offline(["contacts", "verify", "alice"], data: bob)
        let number = try #require(fromAlice.last["safetyNumber"] as? String)
        #expect(number.count == 60 && number.allSatisfy(\.isNumber))
        #expect(fromBob.last["safetyNumber"] as? String == number)
        #expect(fromAlice.last["verified"] as? Bool == false && fromBob.last["verified"] as? Bool == true)
    }

    @Test("after two days (injected clock) the next message is a rotation; out of order, replayed and tampered pastes")
    func rotationOrderReplayTamper() async throws {
        let root = try Root()
        let (alice, bob) = try await Self.pair(in: root)
        let later = Self.start + 2 * Self.day + 1
        let rotated = try await Self.seal("fresh keys", from: alice, to: "bob", now: later)
        let atBob = try await Self.open(rotated, in: bob, now: later + 1)
        #expect(atBob.last["kind"] as? String == "rotation" && atBob.last["text"] as? String == "fresh keys", "\(atBob.transcript)")

        var texts: [String] = []
        for index in 0..<3 { texts.append(try await Self.seal("m\(index)", from: bob, to: "alice", now: later + 10 + Int64(index))) }
        for index in [2, 0, 1] {
            let read = try await Self.open(texts[index], in: alice, now: later + 20)
            #expect(read.last["text"] as? String == "m\(index)", "\(read.transcript)")
        }
        let database = alice.appendingPathComponent("offline/inviso.sqlite")
        let before = try Data(contentsOf: database)
        let replay = try await Self.open(texts[1], in: alice, now: later + 30)
        #expect(replay.status == 1 && replay.last["event"] as? String == "error")
        #expect(replay.last["error"] as? String == "this message was already read")

        let fresh = try #require(Data(base64Encoded: try await Self.seal("untouched", from: bob, to: "alice", now: later + 40)))
        let afterSeal = try Data(contentsOf: database)
        #expect(afterSeal == before)
        // Flip every byte of the ciphertext (the base64 of the envelope's first field) in turn.
        let json = String(decoding: fresh, as: UTF8.self)
        let field = try #require(json.range(of: "[\"")).upperBound
        let ciphertextBase64 = String(json[field...].prefix { $0 != "\"" })
        let ciphertext = try #require(Data(base64Encoded: ciphertextBase64))
        #expect(json.contains("\",2,1,null,"), "an ordinary message (type 2)")
        for index in 0..<ciphertext.count {
            var tampered = ciphertext
            tampered[index] ^= 0x01
            let text = json.replacingOccurrences(of: ciphertextBase64, with: tampered.base64EncodedString())
            let refused = try await Self.open(text, in: alice, now: later + 50)
            #expect(refused.status == 1 && refused.last["event"] as? String == "error", "byte \(index): \(refused.transcript)")
            #expect(try Data(contentsOf: database) == before, "byte \(index) changed the store")
        }
        let read = try await Self.open(json, in: alice, now: later + 60)
        #expect(read.last["text"] as? String == "untouched")
    }

    @Test("--copy and --paste go through the clipboard tool; garbage and missing accounts give clear errors")
    func clipboardAndErrors() async throws {
        let root = try Root()
        let (alice, bob) = try await Self.pair(in: root)
        // Stand-ins for wl-copy / wl-paste that keep the clipboard in a file.
        let bin = root.child("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let board = root.child("clipboard").path
        for (name, body) in [("wl-copy", "cat > '\(board)'"), ("wl-paste", "cat '\(board)'")] {
            let url = bin.appendingPathComponent(name)
            try "#!/bin/sh\n\(body)\n".write(to: url, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        }
        let environment = ["WAYLAND_DISPLAY": "wayland-test", "PATH": bin.path + ":/usr/bin:/bin"]
        let copied = try await Self.offline(["seal", "--to", "bob", "--copy", "via the clipboard"], data: alice, environment: environment)
        #expect(copied.status == 0 && copied.last["text"] is NSNull, "\(copied.transcript)")
        #expect(try String(contentsOfFile: board, encoding: .utf8).unicodeScalars.count > 100)
        let pasted = try await Self.offline(["open", "--paste"], data: bob, environment: environment)
        #expect(pasted.last["text"] as? String == "via the clipboard", "\(pasted.transcript)")
        let noTool = try await Self.offline(["open", "--paste"], data: bob, environment: ["WAYLAND_DISPLAY": "", "DISPLAY": "", "PATH": bin.path + "-none"])
        #expect(noTool.status == 1 && (noTool.last["error"] as? String)?.contains("no clipboard tool") == true)

        let garbage = try await Self.open("Hello, how are you?", in: bob)
        #expect(garbage.last["error"] as? String == "no hidden message: the app you copied from may remove invisible characters — ask the sender for base64")
        let nobody = try await Self.open("[\"AAAA\",2,1,null,\"x\",1]", in: root.child("nobody"))
        #expect(nobody.status == 1 && (nobody.last["error"] as? String)?.contains("inviso offline init") == true)
        #expect(!FileManager.default.fileExists(atPath: root.child("nobody").path))
    }

    @Test("export, import elsewhere and carry on; reset erases everything")
    func exportImportReset() async throws {
        let root = try Root()
        let (alice, bob) = try await Self.pair(in: root)
        let backup = root.child("alice.backup").path
        let environment = ["INVISO_BACKUP_PASSPHRASE": "a long backup passphrase"]
        let exported = try await Self.offline(["export", backup], data: alice, environment: environment)
        #expect(exported.status == 0 && exported.last["event"] as? String == "exported", "\(exported.transcript)")
        let attributes = try FileManager.default.attributesOfItem(atPath: backup)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let wrong = try await Self.offline(["import", backup], data: root.child("elsewhere"), environment: ["INVISO_BACKUP_PASSPHRASE": "nope"])
        #expect(wrong.status == 1 && wrong.last["error"] as? String == "wrong passphrase, or the backup file was changed")
        let imported = try await Self.offline(["import", backup], data: root.child("elsewhere"), environment: environment)
        #expect(imported.status == 0 && imported.last["contacts"] as? Int == 1 && imported.last["messages"] as? Int == 1, "\(imported.transcript)")
        let again = try await Self.offline(["import", backup], data: root.child("elsewhere"), environment: environment)
        #expect(again.status == 1 && again.last["error"] as? String == "this store already has an offline account")

        let moved = try await Self.seal("from the new machine", from: root.child("elsewhere"), to: "bob")
        #expect(try await Self.open(moved, in: bob).last["text"] as? String == "from the new machine")

        let reset = try await Self.offline(["reset", "--yes"], data: alice)
        #expect(reset.status == 0, "\(reset.transcript)")
        let files = try FileManager.default.contentsOfDirectory(atPath: alice.appendingPathComponent("offline").path)
        #expect(files.isEmpty, "\(files)")
        let gone = try await Self.offline(["invite"], data: alice)
        #expect(gone.status == 1 && (gone.last["error"] as? String)?.contains("inviso offline init") == true)

        // erase-all takes the offline account with everything else.
        let child = try ChildProcess(try NoiseInteropTests.invisoBinary(), ["erase-all", "--data", bob.path, "--yes"])
        child.closeInput()
        #expect(await child.waitForExit(timeout: 60) == 0, "\(child.transcript)")
        let left = try FileManager.default.contentsOfDirectory(atPath: bob.appendingPathComponent("offline").path)
        #expect(left.isEmpty, "\(left)")
    }
}
