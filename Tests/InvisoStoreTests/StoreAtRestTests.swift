import Foundation
import GRDB
import InvisoCrypto
import InvisoStore
import Testing

@Suite("InvisoStore keeps nothing readable at rest")
struct StoreAtRestTests {
    static let marker = "PLAINTEXT-MARKER-4f1c9e2a"
    static let name = "Quarterly Planning Chat"
    static let joinCode = "482913-orbit-velvet-nimbus"
    static let secretMarker = Data("RATCHET-STATE-MARKER-77d1".utf8)

    @Test("no file in the directory holds a known plaintext, open or closed")
    func grepFindsNothing() throws {
        try Fixture.withStore { store, directory in
            var session = Fixture.session("s1", name: Self.name)
            session.joinCode = Self.joinCode
            try store.saveSession(session)
            for index in 0..<200 {
                try store.appendMessage(
                    id: "m\(index)", sessionID: "s1", direction: index.isMultiple(of: 2) ? .sent : .received,
                    text: "\(Self.marker) number \(index)", at: Fixture.t0.addingTimeInterval(Double(index))
                )
            }
            try store.savePinnedIdentity(PinnedIdentity(publicKey: Data(repeating: 1, count: 32), safetyNumber: Self.marker), sessionID: "s1")
            try store.saveSecret(SecretBytes(Self.secretMarker), kind: .ratchet, sessionID: "s1")
            try store.renameSession(id: "s1", to: Self.name + " renamed")
            #expect(try store.messages(sessionID: "s1", now: Fixture.t0).count == 200)

            try expectNoPlaintext(in: directory)
            store.close()
            try expectNoPlaintext(in: directory)
        }
    }

    private func expectNoPlaintext(in directory: URL) throws {
        // Control: the plaintext columns (message IDs) are found, so the search does read the data.
        let database = try Fixture.files(in: directory)[InvisoStore.databaseFileName]
        #expect(database?.contains(Data("m199".utf8)) == true)
        let needles = [
            Data(Self.marker.utf8), Data(Self.name.utf8), Data(Self.joinCode.utf8), Self.secretMarker,
            // The sealed JSON carries message bodies in base64: that must not show either.
            Data(Data("\(Self.marker) number 1".utf8).base64EncodedString().prefix(24).utf8),
            Data("orbit-velvet".utf8), Data("Quarterly".utf8),
        ]
        try Fixture.expectAbsent(needles, in: directory)
    }

    @Test("flipping any byte of a sealed message is detected")
    func tamperedBlob() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1"))
            try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "tamper me", at: Fixture.t0)
            let original = try Fixture.withRawDatabase(directory) { db in
                try Data.fetchOne(db, sql: "SELECT sealed FROM messages WHERE id = 'm1'")!
            }
            var flipped = 0
            for index in original.indices {
                var tampered = original
                tampered[index] ^= 0x01
                try Fixture.withRawDatabase(directory) { db in
                    try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'm1'", arguments: [tampered])
                }
                #expect(throws: StoreError.authenticationFailed) { try store.messages(sessionID: "s1", now: Fixture.t0) }
                flipped += 1
            }
            #expect(flipped == original.count && flipped > 29)
            for truncated in [Data(), original.prefix(28), original.dropLast()] {
                try Fixture.withRawDatabase(directory) { db in
                    try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'm1'", arguments: [Data(truncated)])
                }
                #expect(throws: StoreError.authenticationFailed) { try store.messages(sessionID: "s1", now: Fixture.t0) }
            }
            try Fixture.withRawDatabase(directory) { db in
                try db.execute(sql: "UPDATE messages SET sealed = ? WHERE id = 'm1'", arguments: [original])
            }
            #expect(try store.messages(sessionID: "s1", now: Fixture.t0).map(\.text) == ["tamper me"])
        }
    }

    @Test("a sealed value moved to another row, session or kind is rejected")
    func movedBlob() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1", name: "One"))
            try store.saveSession(Fixture.session("s2", name: "Two"))
            try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "first", at: Fixture.t0)
            try store.appendMessage(id: "m2", sessionID: "s1", direction: .sent, text: "second", at: Fixture.t0)
            try store.saveSecret(SecretBytes([1, 2, 3]), kind: .ratchet, sessionID: "s1")
            try store.saveSecret(SecretBytes([4, 5, 6]), kind: .channel, sessionID: "s1")
            try store.saveSecret(SecretBytes([7, 8, 9]), kind: .ratchet, sessionID: "s2")
            try Fixture.withRawDatabase(directory) { db in
                try db.execute(sql: "UPDATE messages SET sealed = (SELECT sealed FROM messages WHERE id = 'm1') WHERE id = 'm2'")
                try db.execute(sql: "UPDATE sessions SET sealed = (SELECT sealed FROM sessions WHERE id = 's1') WHERE id = 's2'")
                try db.execute(
                    sql: """
                        UPDATE secrets SET sealed = (SELECT sealed FROM secrets WHERE session_id = 's1' AND kind = 'ratchet')
                        WHERE kind = 'channel' OR session_id = 's2'
                        """
                )
            }
            #expect(throws: StoreError.authenticationFailed) { try store.messages(sessionID: "s1", now: Fixture.t0) }
            #expect(throws: StoreError.authenticationFailed) { try store.session(id: "s2") }
            #expect(try store.session(id: "s1")?.name == "One")
            #expect(throws: StoreError.authenticationFailed) { try store.secret(kind: .channel, sessionID: "s1") }
            #expect(throws: StoreError.authenticationFailed) { try store.secret(kind: .ratchet, sessionID: "s2") }
            #expect(try store.secret(kind: .ratchet, sessionID: "s1") == SecretBytes([1, 2, 3]))
        }
    }

    @Test("deleting a session removes its rows and overwrites their bytes in the file")
    func deleteSessionWipes() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1"))
            try store.saveSession(Fixture.session("s2"))
            var random = SystemRandomNumberGenerator()
            for id in ["s1", "s2"] {
                try store.appendMessage(id: "m", sessionID: id, direction: .sent, text: "x", at: Fixture.t0)
                try store.savePinnedIdentity(PinnedIdentity(publicKey: Data([1])), sessionID: id)
                try store.saveSecret(SecretBytes(randomCount: 64, using: &random), kind: .ratchet, sessionID: id)
            }
            let sealedSecret = try Fixture.withRawDatabase(directory) { db in
                try Data.fetchOne(db, sql: "SELECT sealed FROM secrets WHERE session_id = 's1'")!
            }
            #expect(try store.deleteSession(id: "s1"))
            #expect(try !store.deleteSession(id: "s1"))
            #expect(try store.session(id: "s1") == nil)
            #expect(try store.messages(sessionID: "s1", now: Fixture.t0).isEmpty)
            #expect(try store.pinnedIdentity(sessionID: "s1") == nil)
            #expect(try store.secret(kind: .ratchet, sessionID: "s1") == nil)
            #expect(try store.secret(kind: .ratchet, sessionID: "s2") != nil)
            let counts = try Fixture.withRawDatabase(directory) { db in
                try ["messages", "identities", "secrets"].map {
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($0) WHERE session_id = 's1'")!
                }
            }
            #expect(counts == [0, 0, 0])
            let keptSecret = try Fixture.withRawDatabase(directory) { db in
                try Data.fetchOne(db, sql: "SELECT sealed FROM secrets WHERE session_id = 's2'")!
            }
            store.close()
            try Fixture.expectAbsent([sealedSecret], in: directory)
            // Control: the other session's sealed secret is still found in the file.
            #expect(try Fixture.files(in: directory)[InvisoStore.databaseFileName]?.contains(keptSecret) == true)
        }
    }

    @Test("leaving a session wipes its keys and refuses new ones; messages stay")
    func leaveWipesKeys() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1"))
            try store.appendMessage(id: "m", sessionID: "s1", direction: .sent, text: "kept", at: Fixture.t0)
            try store.saveSecret(SecretBytes([1]), kind: .ratchet, sessionID: "s1")
            try store.saveSecret(SecretBytes([2]), kind: .identityKey, sessionID: "s1")
            try store.leaveSession(id: "s1")
            #expect(try store.session(id: "s1")?.state == .closed)
            #expect(try store.secret(kind: .ratchet, sessionID: "s1") == nil)
            #expect(try store.secret(kind: .identityKey, sessionID: "s1") == nil)
            #expect(throws: StoreError(.sessionClosed)) { try store.saveSecret(SecretBytes([3]), kind: .ratchet, sessionID: "s1") }
            #expect(try store.messages(sessionID: "s1", now: Fixture.t0).count == 1)
            try store.saveSession(Fixture.session("s2"))
            try store.saveSecret(SecretBytes([4]), kind: .ratchet, sessionID: "s2")
            try store.saveSession(Fixture.session("s2", state: .closed))
            #expect(try store.secret(kind: .ratchet, sessionID: "s2") == nil)
            #expect(try store.deleteSecrets(sessionID: "s2") == 0)
        }
    }

    @Test("eraseAll removes the database, its side files and the key; other files stay")
    func eraseAll() throws {
        try Fixture.withDirectory { directory in
            let store = try InvisoStore(directory: directory, keySource: .keyFile)
            try store.saveSession(Fixture.session("s1"))
            try Data("not ours".utf8).write(to: directory.appendingPathComponent("other.txt"))
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(InvisoStore.keyFileName).path))
            try store.eraseAll()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["other.txt"])
            #expect(throws: StoreError.closed) { try store.sessions() }
            #expect(throws: StoreError.closed) { try store.saveSession(Fixture.session("s2")) }

            let again = try InvisoStore(directory: directory, keySource: Fixture.source)
            try again.saveSession(Fixture.session("s1"))
            again.close()
            try InvisoStore.eraseAll(in: directory)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["other.txt"])
            #expect(try InvisoStore(directory: directory, keySource: Fixture.source).sessions().isEmpty)
        }
    }
}
