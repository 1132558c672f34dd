import Foundation
import InvisoCrypto
import InvisoSignal
import InvisoStore
import Testing

@testable import InvisoOffline

/// The offline book on disk and in backups: transactions, reloads, history and lifetimes,
/// export and import, and no plaintext or key in any file.
@Suite("Offline store")
struct StoreTests {
    static let start = BookTests.start
    static let hour: Int64 = 3600 * 1000

    /// A fresh directory, removed when the test ends.
    final class Directory {
        let url: URL
        init() {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("offline-\(UUID().uuidString)")
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        func child(_ name: String) -> URL { url.appendingPathComponent(name) }
    }

    static let source = MasterKeySource.passphrase("correct horse", parameters: ._insecureForTesting(logN: 4))

    /// Two stores whose accounts have exchanged an invite and a message each way.
    static func pair(in directory: Directory) throws -> (alice: OfflineStore, bob: OfflineStore) {
        var generator = SystemRandomNumberGenerator()
        let alice = try OfflineStore(directory: directory.child("alice"), keySource: source)
        let bob = try OfflineStore(directory: directory.child("bob"), keySource: source)
        try alice.create(now: start, using: &generator)
        try bob.create(now: start, using: &generator)
        let invite = try alice.update { book, _ throws(OfflineError) in try book.invite(now: start, using: &generator) }
        _ = try bob.update { book, _ throws(OfflineError) in try book.open(invite, as: "alice", now: start, using: &generator) }
        let hello = try bob.update { book, history throws(OfflineError) in
            let sealed = try book.seal("hello alice", to: "alice", now: start + 1, using: &generator)
            history.append(sealed.message)
            return sealed.envelope
        }
        _ = try receive(hello, into: alice, as: "bob", now: start + 2)
        return (alice, bob)
    }

    /// Opens `envelope` into `store`, keeping a message in the history; returns its text.
    @discardableResult
    static func receive(_ envelope: OfflineEnvelope, into store: OfflineStore, as name: String? = nil, now: Int64) throws -> String? {
        var generator = SystemRandomNumberGenerator()
        return try store.update { book, history throws(OfflineError) in
            switch try book.open(envelope, as: name, now: now, using: &generator) {
            case .message(let message, _, _):
                history.append(message)
                return message.text
            case .invite: return nil
            }
        }
    }

    static func send(_ text: String, from store: OfflineStore, to name: String, now: Int64) throws -> OfflineEnvelope {
        var generator = SystemRandomNumberGenerator()
        return try store.update { book, history throws(OfflineError) in
            let sealed = try book.seal(text, to: name, now: now, using: &generator)
            history.append(sealed.message)
            return sealed.envelope
        }
    }

    @Test("an account is created once; the book survives closing and reopening, and its sessions go on")
    func reload() throws {
        let directory = Directory()
        var generator = SystemRandomNumberGenerator()
        var (alice, bob) = try Self.pair(in: directory)
        let before = BookTests.Snapshot(try alice.load())
        #expect(throws: OfflineError(.accountExists)) { try alice.create(now: Self.start, using: &generator) }
        alice.close()
        bob.close()
        alice = try OfflineStore(directory: directory.child("alice"), keySource: Self.source)
        bob = try OfflineStore(directory: directory.child("bob"), keySource: Self.source)
        #expect(BookTests.Snapshot(try alice.load()) == before)
        #expect(try Self.receive(try Self.send("after reload", from: alice, to: "bob", now: Self.start + 10), into: bob, now: Self.start + 11) == "after reload")
        #expect(try Self.receive(try Self.send("and back", from: bob, to: "alice", now: Self.start + 12), into: alice, now: Self.start + 13) == "and back")
        #expect(throws: StoreError(.wrongPassphrase)) {
            try OfflineStore(directory: directory.child("alice"), keySource: .passphrase("wrong", parameters: ._insecureForTesting(logN: 4)))
        }
    }

    @Test("a refused operation writes nothing; a replay stays refused after a reload")
    func refusedWritesNothing() throws {
        let directory = Directory()
        let (alice, bob) = try Self.pair(in: directory)
        let envelope = try Self.send("once", from: bob, to: "alice", now: Self.start + 5)
        #expect(try Self.receive(envelope, into: alice, now: Self.start + 6) == "once")
        let before = BookTests.Snapshot(try alice.load())
        let historyBefore = try alice.history(contactID: nil, now: Self.start + 7).count
        #expect(throws: OfflineError(.alreadyRead)) { try Self.receive(envelope, into: alice, now: Self.start + 7) }
        #expect(BookTests.Snapshot(try alice.load()) == before)
        #expect(try alice.history(contactID: nil, now: Self.start + 7).count == historyBefore)
        #expect(throws: OfflineError(.noAccount)) {
            try OfflineStore(directory: directory.child("empty"), keySource: Self.source).load()
        }
    }

    @Test("history: both directions in order; a lifetime deletes what is older; deleting a contact deletes its history")
    func history() throws {
        let directory = Directory()
        let (alice, bob) = try Self.pair(in: directory)
        try Self.receive(try Self.send("one", from: alice, to: "bob", now: Self.start + 10), into: bob, now: Self.start + 11)
        try Self.receive(try Self.send("two", from: bob, to: "alice", now: Self.start + 12), into: alice, now: Self.start + 13)
        let bobID = try #require(try alice.load().contact(named: "bob")?.id)
        let history = try alice.history(contactID: bobID, now: Self.start + 20)
        #expect(history.map(\.text) == ["hello alice", "one", "two"])
        #expect(history.map(\.direction) == [.received, .sent, .received])

        try alice.update { book, _ throws(OfflineError) in try book.setLifetime(Self.hour, for: "bob") }
        try Self.receive(try Self.send("brief", from: bob, to: "alice", now: Self.start + 30), into: alice, now: Self.start + 31)
        #expect(try alice.history(contactID: bobID, now: Self.start + 32).last?.expiresAt == Self.start + 31 + Self.hour)
        #expect(try alice.history(contactID: bobID, now: Self.start + 31 + Self.hour).map(\.text) == ["hello alice", "one", "two"])
        #expect(try alice.deleteExpired(now: Self.start + 31 + Self.hour) == 1)

        try alice.update { book, _ throws(OfflineError) in _ = try book.delete("bob") }
        #expect(try alice.history(contactID: nil, now: Self.start + 40).isEmpty)
        #expect(try alice.load().contacts.isEmpty)
    }

    @Test("export and import: the restored book carries on the conversation; wrong passphrases and changed bytes are refused")
    func backup() throws {
        let directory = Directory()
        var generator = SystemRandomNumberGenerator()
        let (alice, bob) = try Self.pair(in: directory)
        let exported = try OfflineBackup.seal(
            try alice.load(), history: try alice.history(contactID: nil, now: Self.start + 5), passphrase: "backup pass",
            parameters: ._insecureForTesting(logN: 4), using: &generator)
        #expect(throws: OfflineError(.wrongPassphrase)) { try OfflineBackup.open(exported, passphrase: "other") }
        for index in stride(from: 0, to: exported.count, by: max(1, exported.count / 97)) {
            var changed = exported
            changed[index] ^= 0x01
            #expect(throws: OfflineError.self) { try OfflineBackup.open(changed, passphrase: "backup pass") }
        }
        #expect(throws: OfflineError(.notABackup)) { try OfflineBackup.open(Array("hello".utf8), passphrase: "backup pass") }

        let (book, history) = try OfflineBackup.open(exported, passphrase: "backup pass")
        #expect(BookTests.Snapshot(book) == BookTests.Snapshot(try alice.load()))
        #expect(history.map(\.text) == ["hello alice"])
        #expect(throws: OfflineError(.accountExists)) { try alice.restore(book, history: history) }
        alice.close()
        let restored = try OfflineStore(directory: directory.child("restored"), keySource: .keyFile)
        try restored.restore(book, history: history)
        #expect(try Self.receive(try Self.send("from the new machine", from: restored, to: "bob", now: Self.start + 20), into: bob, now: Self.start + 21) == "from the new machine")
        #expect(try Self.receive(try Self.send("welcome", from: bob, to: "alice", now: Self.start + 22), into: restored, now: Self.start + 23) == "welcome")
    }

    @Test("neither the database nor a backup contains plaintext, names or keys")
    func nothingInTheClear() throws {
        let directory = Directory()
        var generator = SystemRandomNumberGenerator()
        let (alice, bob) = try Self.pair(in: directory)
        let secretText = "the treasure is under the old oak"
        try Self.receive(try Self.send(secretText, from: bob, to: "alice", now: Self.start + 10), into: alice, now: Self.start + 11)
        try alice.update { book, _ throws(OfflineError) in try book.rename("bob", to: "Bartholomew Quincy") }
        let book = try alice.load()
        let exported = try OfflineBackup.seal(
            book, history: try alice.history(contactID: nil, now: Self.start + 12), passphrase: "backup pass",
            parameters: ._insecureForTesting(logN: 4), using: &generator)
        alice.close()

        var needles: [(String, [UInt8])] = [
            ("message text", Array(secretText.utf8)), ("first message", Array("hello alice".utf8)),
            ("contact name", Array("Bartholomew Quincy".utf8)), ("address", Array(book.account.address.utf8)),
            ("contact address", Array(book.contacts[0].address.utf8)),
        ]
        let identity = book.account.identity.privateKey.rawRepresentation.withUnsafeBytes { Array($0) }
        needles.append(("identity private key", identity))
        for generation in book.account.generations {
            needles.append(("signed pre-key", generation.signedPreKey.keyPair.privateKey.rawRepresentation.withUnsafeBytes { Array($0) }))
            needles.append(("Kyber seed", generation.kyberPreKey.keyPair.privateKey.seedRepresentation.withUnsafeBytes { Array($0) }))
            for key in generation.oneTimePreKeys {
                needles.append(("one-time pre-key", key.keyPair.privateKey.rawRepresentation.withUnsafeBytes { Array($0) }))
            }
        }
        // Keys as the encoders would write them, too.
        for (name, bytes) in needles where bytes.count == 32 || bytes.count == 64 {
            needles.append(("\(name) (base64)", Array(Base64.encodeString(bytes).prefix(40).utf8)))
            needles.append(("\(name) (hex)", Array(Hex.encode(bytes).utf8)))
        }
        var files: [(String, [UInt8])] = [("backup", exported)]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.child("alice").path) {
            let data = try Data(contentsOf: directory.child("alice").appendingPathComponent(name))
            files.append((name, Array(data)))
        }
        #expect(files.count >= 2)  // the backup and the database at least
        for (file, content) in files {
            for (name, needle) in needles {
                #expect(!Self.contains(content, needle), "\(name) found in \(file)")
            }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        let first = needle[0]
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
