import Foundation
import Testing
import InvisoTesting

/// Two `inviso signal` stores talk through the command line alone: init, bundle, encrypt
/// with the bundle, decrypt, reply, fingerprints — and failures leave the store unchanged.
@Suite("inviso signal CLI", .serialized, .timeLimit(.minutes(6)))
struct SignalCLITests {
    struct Result {
        let status: Int32
        let json: [String: Any]
        let transcript: String
    }

    /// Runs `inviso signal …` to completion and parses its single JSON line.
    static func signal(_ arguments: [String]) async throws -> Result {
        let child = try ChildProcess(try NoiseInteropTests.invisoBinary(), ["signal"] + arguments)
        child.closeInput()
        let status = await child.waitForExit(timeout: 60)
        if status == nil { child.kill() }
        let json = child.events.last ?? [:]
        return Result(status: status ?? -1, json: json, transcript: child.transcript)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-signal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("Two stores exchange messages through the CLI, both directions, from a bundle", arguments: [true, false])
    func conversation(kyber: Bool) async throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let alice = root.appendingPathComponent("alice").path
        let bob = root.appendingPathComponent("bob").path

        var initBob = ["init", "--store", bob, "--name", "bob", "--device-id", "2"]
        if !kyber { initBob.append("--no-kyber") }
        let bobInit = try await Self.signal(initBob)
        #expect(bobInit.status == 0, "\(bobInit.transcript)")
        await #expect(try Self.signal(["init", "--store", alice, "--name", "alice"]).status == 0)
        // A second init refuses to overwrite.
        await #expect(try Self.signal(["init", "--store", alice]).status != 0)

        let bundle = try await Self.signal(["bundle", "--store", bob])
        #expect(bundle.status == 0, "\(bundle.transcript)")
        let json = bundle.json
        #expect(json["device_id"] as? Int == 2)
        #expect((json["registration_id"] as? Int).map { (1...0x3FFF).contains($0) } == true)
        let identity = try #require((json["identity_key"] as? String).flatMap { Data(base64Encoded: $0) })
        #expect(identity.count == 33 && identity.first == 0x05)
        let signed = try #require(json["signed_pre_key"] as? [String: Any])
        #expect((signed["public"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 33)
        #expect((signed["signature"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 64)
        let preKey = try #require(json["pre_key"] as? [String: Any])
        #expect((preKey["public"] as? String).flatMap { Data(base64Encoded: $0) }?.first == 0x05)
        if kyber {
            let kyberKey = try #require(json["kyber_pre_key"] as? [String: Any])
            let kyberPublic = try #require((kyberKey["public"] as? String).flatMap { Data(base64Encoded: $0) })
            #expect(kyberPublic.count == 1569 && kyberPublic.first == 0x08)
        } else {
            #expect(json["kyber_pre_key"] is NSNull)
        }
        let bundleFile = root.appendingPathComponent("bob-bundle.json")
        try JSONSerialization.data(withJSONObject: json).write(to: bundleFile)

        // Alice → Bob, starting from the bundle.
        let first = try await Self.signal(["encrypt", "--store", alice, "--to", "bob.2", "--bundle", bundleFile.path, "hello bob"])
        #expect(first.status == 0, "\(first.transcript)")
        #expect(first.json["type"] as? Int == 3)
        let firstBody = try #require(first.json["body"] as? String)
        #expect(Data(base64Encoded: firstBody)?.first == (kyber ? 0x44 : 0x34))

        // A failing decrypt (wrong type) leaves Bob's store byte-identical.
        let storeFile = URL(fileURLWithPath: bob).appendingPathComponent("signal-store.json")
        let before = try Data(contentsOf: storeFile)
        let wrong = try await Self.signal(["decrypt", "--store", bob, "--from", "alice.1", "--type", "2", firstBody])
        #expect(wrong.status != 0)
        #expect(wrong.json["error"] is String)
        #expect(try Data(contentsOf: storeFile) == before)

        let opened = try await Self.signal(["decrypt", "--store", bob, "--from", "alice.1", "--type", "3", firstBody])
        #expect(opened.status == 0, "\(opened.transcript)")
        #expect(opened.json["plaintext"] as? String == "hello bob")

        // Replaying the same message fails and changes nothing.
        let afterFirst = try Data(contentsOf: storeFile)
        let replay = try await Self.signal(["decrypt", "--store", bob, "--from", "alice.1", "--type", "3", firstBody])
        #expect(replay.status != 0)
        #expect(try Data(contentsOf: storeFile) == afterFirst)

        // Bob → Alice, then a few more turns both ways.
        var from = ("bob", bob, "bob.2")
        var to = ("alice", alice, "alice.1")
        for turn in 0..<4 {
            let text = "turn \(turn) from \(from.0) ✓"
            let sealed = try await Self.signal(["encrypt", "--store", from.1, "--to", to.2, text])
            #expect(sealed.status == 0, "\(sealed.transcript)")
            let type = try #require(sealed.json["type"] as? Int)
            #expect(type == 2 || (from.0 == "alice" && type == 3))
            let body = try #require(sealed.json["body"] as? String)
            let read = try await Self.signal(["decrypt", "--store", to.1, "--from", from.2, "--type", "\(type)", body])
            #expect(read.json["plaintext"] as? String == text, "\(read.transcript)")
            swap(&from, &to)
        }

        // Both sides compute the same safety number; versions 1 and 2 agree on the digits.
        for version in ["1", "2"] {
            let a = try await Self.signal(["fingerprint", "--store", alice, "--peer", "bob.2", "--version", version])
            let b = try await Self.signal(["fingerprint", "--store", bob, "--peer", "alice.1", "--version", version])
            let digits = try #require(a.json["fingerprint"] as? String, "\(a.transcript)")
            #expect(digits.count == 60 && digits.allSatisfy(\.isNumber))
            #expect(b.json["fingerprint"] as? String == digits)
        }
    }

    @Test("Bad input gives a JSON error and a non-zero exit")
    func errors() async throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = root.appendingPathComponent("s").path
        let missing = try await Self.signal(["bundle", "--store", store])
        #expect(missing.status != 0 && missing.json["error"] is String)
        await #expect(try Self.signal(["init", "--store", store, "--device-id", "0"]).status != 0)
        await #expect(try Self.signal(["init", "--store", store]).status == 0)
        for arguments in [
            ["encrypt", "--store", store, "--to", "nobody.1", "hi"],
            ["encrypt", "--store", store, "--to", "no-device", "hi"],
            ["decrypt", "--store", store, "--from", "x.1", "--type", "2", "not base64!"],
            ["decrypt", "--store", store, "--from", "x.1", "--type", "7", "AAAA"],
            ["decrypt", "--store", store, "--from", "x.1", "--type", "3", "RERERA=="],
            ["fingerprint", "--store", store, "--peer", "x.1"],
        ] {
            let result = try await Self.signal(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.json["error"] is String, "\(arguments): \(result.transcript)")
        }
    }
}
