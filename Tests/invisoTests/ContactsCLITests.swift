import Foundation
import Testing
import InvisoTesting

/// Contacts as processes against `inviso serve`: two people pair with an invite, save each
/// other, exit, and later `inviso call` each other with no code; the server sees nothing
/// that links the two rooms; the old invite does not open the call.
@Suite("inviso contacts / call", .timeLimit(.minutes(6)))
struct ContactsCLITests {
    static func event(_ process: ChildProcess, _ name: String) async -> [String: Any]? {
        await process.waitForEvent(timeout: 120) { $0["event"] as? String == name }
    }

    /// Alice invites, Bob joins, both connected (stored in `alice` and `bob` under `root`).
    static func pair(_ binary: URL, _ url: String, root: URL) async throws -> (ChildProcess, ChildProcess, String) {
        let (alice, invite) = try await ChatCLITests.invite(binary, url, ["--data", root.appendingPathComponent("alice").path])
        let inviteText = try #require(invite["invite"] as? String)
        let bob = try ChildProcess(
            binary, ["join", inviteText, "--json", "--server", url, "--data", root.appendingPathComponent("bob").path])
        for process in [alice, bob] { _ = try #require(await Self.event(process, "connected"), "\(process.transcript)") }
        return (alice, bob, inviteText)
    }

    /// ``pair(_:_:root:)``, then both save each other (Alice calls Bob "bob", Bob calls her
    /// "alice") and both saw `contact_saved`.
    static func pairAndSave(_ binary: URL, _ url: String, root: URL) async throws -> (ChildProcess, ChildProcess) {
        let (alice, bob, _) = try await Self.pair(binary, url, root: root)
        alice.write(#"{"command":"save","name":"bob"}"# + "\n")
        bob.write(#"{"command":"save","name":"alice"}"# + "\n")
        for process in [alice, bob] { _ = try #require(await Self.event(process, "contact_saved"), "\(process.transcript)") }
        return (alice, bob)
    }

    /// Both connected, `speaker` says `text`, `listener` reads it; both exit.
    static func converse(_ listener: ChildProcess, _ speaker: ChildProcess, _ text: String) async throws {
        for process in [listener, speaker] { _ = try #require(await Self.event(process, "connected"), "\(process.transcript)") }
        speaker.write(text + "\n")
        #expect(await listener.waitForMessageTexts(count: 1) == [text], "\(listener.transcript)")
        listener.closeInput()
        speaker.closeInput()
        _ = await listener.waitForExit(timeout: 60)
        _ = await speaker.waitForExit(timeout: 60)
    }

    @Test("save each other, exit, call each other later without a code; an old invite opens nothing")
    func saveThenCall() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let aliceData = root.appendingPathComponent("alice").path
        let bobData = root.appendingPathComponent("bob").path
        let (alice, bob, inviteText) = try await Self.pair(binary, url, root: root)
        defer {
            alice.kill()
            bob.kill()
        }
        alice.write(#"{"command":"save","name":"bob"}"# + "\n")
        // Bob is told, then saves too; both end with the contact.
        _ = try #require(await Self.event(bob, "contact_offered"), "\(bob.transcript)")
        bob.write(#"{"command":"save","name":"alice"}"# + "\n")
        let savedByAlice = try #require(await Self.event(alice, "contact_saved"), "\(alice.transcript)")
        let savedByBob = try #require(await Self.event(bob, "contact_saved"), "\(bob.transcript)")
        #expect(savedByAlice["name"] as? String == "bob" && savedByBob["name"] as? String == "alice")
        alice.closeInput()
        bob.closeInput()
        #expect(await alice.waitForExit(timeout: 60) == 0, "\(alice.transcript)")
        #expect(await bob.waitForExit(timeout: 60) == 0, "\(bob.transcript)")

        let list = try ChildProcess(binary, ["contacts", "list", "--json", "--data", aliceData])
        #expect(await list.waitForExit(timeout: 30) == 0, "\(list.transcript)")
        let contact = try #require(list.events.first, "\(list.transcript)")
        #expect(contact["name"] as? String == "bob")
        let bobsFingerprint = try #require(contact["fingerprint"] as? String)

        // Later: each calls the other, no code typed.
        let aliceCalls = try ChildProcess(binary, ["call", "bob", "--json", "--server", url, "--data", aliceData])
        defer { aliceCalls.kill() }
        let bobCalls = try ChildProcess(binary, ["call", "alice", "--json", "--server", url, "--data", bobData])
        defer { bobCalls.kill() }
        for process in [aliceCalls, bobCalls] {
            let connected = try #require(await Self.event(process, "connected"), "\(process.transcript)")
            #expect(connected["protocol"] as? String == "v2" && connected["verified"] as? Bool == true)
        }
        aliceCalls.write("hello again\n")
        #expect(await bobCalls.waitForMessageTexts(count: 1) == ["hello again"], "\(bobCalls.transcript)")

        // The old invite opens nothing now: its code was used and is gone.
        let mallory = try ChildProcess(binary, ["join", inviteText, "--json", "--ephemeral", "--server", url])
        defer { mallory.kill() }
        #expect(await mallory.waitForExit(timeout: 60) != 0, "\(mallory.transcript)")
        #expect(!mallory.events.contains { $0["event"] as? String == "connected" })

        // The server saw two rooms under two unrelated codes, and never a key.
        let log = server.transcript
        #expect(!log.contains(bobsFingerprint), "the server saw a contact's identity key")
        #expect(!log.lowercased().contains(inviteText.split(separator: "-").dropFirst().joined(separator: "-")))
        aliceCalls.closeInput()
        bobCalls.closeInput()
        #expect(await aliceCalls.waitForExit(timeout: 60) == 0, "\(aliceCalls.transcript)")
        #expect(await bobCalls.waitForExit(timeout: 60) == 0, "\(bobCalls.transcript)")
    }

    @Test("inviso listen answers a contact's call; contacts rename and delete")
    func listenAnswers() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let aliceData = root.appendingPathComponent("alice").path
        let bobData = root.appendingPathComponent("bob").path
        let (alice, bob) = try await Self.pairAndSave(binary, url, root: root)
        defer {
            alice.kill()
            bob.kill()
        }
        alice.closeInput()
        bob.closeInput()
        _ = await alice.waitForExit(timeout: 60)
        _ = await bob.waitForExit(timeout: 60)

        let listening = try ChildProcess(binary, ["listen", "--json", "--server", url, "--data", bobData])
        defer { listening.kill() }
        _ = try #require(await Self.event(listening, "listening"), "\(listening.transcript)")
        let caller = try ChildProcess(binary, ["call", "bob", "--json", "--server", url, "--data", aliceData])
        defer { caller.kill() }
        try await Self.converse(caller, listening, "picked up")

        let rename = try ChildProcess(binary, ["contacts", "rename", "bob", "robert", "--data", aliceData])
        #expect(await rename.waitForExit(timeout: 30) == 0, "\(rename.transcript)")
        let delete = try ChildProcess(binary, ["contacts", "delete", "robert", "--yes", "--data", aliceData])
        #expect(await delete.waitForExit(timeout: 30) == 0, "\(delete.transcript)")
        let list = try ChildProcess(binary, ["contacts", "--json", "--data", aliceData])
        #expect(await list.waitForExit(timeout: 30) == 0)
        #expect(list.events.isEmpty, "\(list.transcript)")
        let call = try ChildProcess(binary, ["call", "robert", "--json", "--server", url, "--data", aliceData])
        #expect(await call.waitForExit(timeout: 30) != 0)
    }

    @Test("saving a contact twice in one chat (another name) keeps both sides' secrets equal: the call still pairs; a second call in the window takes the next slot")
    func savingTwice() async throws {
        let (binary, root, server, url) = try await ChatCLITests.setUp()
        defer { ChatCLITests.tearDown(root, server) }
        let aliceData = root.appendingPathComponent("alice").path
        let bobData = root.appendingPathComponent("bob").path
        let (alice, bob) = try await Self.pairAndSave(binary, url, root: root)
        defer {
            alice.kill()
            bob.kill()
        }
        // Alice saves again under another name: the same nonce, so the same secret.
        alice.write(#"{"command":"save","name":"robert"}"# + "\n")
        let renamed = await alice.waitForEvent(timeout: 60) { $0["event"] as? String == "contact_saved" && $0["name"] as? String == "robert" }
        #expect(renamed != nil, "\(alice.transcript)")
        alice.closeInput()
        bob.closeInput()
        _ = await alice.waitForExit(timeout: 60)
        _ = await bob.waitForExit(timeout: 60)

        // Two calls in the same five minutes: the first call's code stays taken at the
        // server, so the second moves to the window's next slot. Both pair (equal secrets).
        for round in 0..<2 {
            let caller = try ChildProcess(binary, ["call", "robert", "--json", "--server", url, "--data", aliceData])
            defer { caller.kill() }
            _ = try #require(await Self.event(caller, "calling"), "\(caller.transcript)")
            let answer = try ChildProcess(binary, ["call", "alice", "--json", "--server", url, "--data", bobData])
            defer { answer.kill() }
            try await Self.converse(caller, answer, "call \(round)")
        }
    }
}
