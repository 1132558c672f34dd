import Crypto
import Foundation
import InvisoStore
import Testing

@Suite("InvisoStore master keys")
struct MasterKeyTests {
    @Test("a wrong passphrase is a typed error and changes nothing on disk")
    func wrongPassphrase() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s1"))
            try store.appendMessage(id: "m1", sessionID: "s1", direction: .sent, text: "hi", at: Fixture.t0)
            store.close()
            let before = try Fixture.files(in: directory)
            let wrong = MasterKeySource.passphrase("correct horse battery stapler", parameters: ._insecureForTesting(logN: 10))
            #expect(throws: StoreError.wrongPassphrase) { try InvisoStore(directory: directory, keySource: wrong) }
            #expect(try Fixture.files(in: directory) == before)
            let reopened = try InvisoStore(directory: directory, keySource: Fixture.source)
            #expect(try reopened.messages(sessionID: "s1", now: Fixture.t0).map(\.text) == ["hi"])
        }
    }

    @Test("the parameters a store was created with are the ones used to open it")
    func storedParameters() throws {
        try Fixture.withDirectory { directory in
            try InvisoStore(directory: directory, keySource: Fixture.source).saveSession(Fixture.session("s1"))
            // Same passphrase, other (cheap) parameters requested: the stored ones win.
            let other = MasterKeySource.passphrase(Fixture.passphrase, parameters: ._insecureForTesting(logN: 4))
            #expect(try InvisoStore(directory: directory, keySource: other).session(id: "s1") != nil)
            // NFC: "é" typed as e + combining acute opens a store made with the precomposed form.
            let composed = URL(fileURLWithPath: directory.path + "-nfc")
            defer { try? FileManager.default.removeItem(at: composed) }
            let cheap = ScryptParameters._insecureForTesting(logN: 4)
            try InvisoStore(directory: composed, keySource: .passphrase("caf\u{E9}", parameters: cheap)).close()
            _ = try InvisoStore(directory: composed, keySource: .passphrase("cafe\u{301}", parameters: cheap))
        }
    }

    @Test("an empty passphrase is refused before anything is created")
    func emptyPassphrase() throws {
        try Fixture.withDirectory { directory in
            #expect(throws: StoreError(.emptyPassphrase)) {
                try InvisoStore(directory: directory, keySource: .passphrase("", parameters: ._insecureForTesting(logN: 4)))
            }
            #expect(!FileManager.default.fileExists(atPath: directory.path))
        }
    }

    @Test("the key file is 32 bytes with mode 0600, in a 0700 directory, and reopens the store")
    func keyFile() throws {
        try Fixture.withDirectory { directory in
            let store = try InvisoStore(directory: directory, keySource: .keyFile)
            try store.saveSession(Fixture.session("s1"))
            store.close()
            let keyURL = directory.appendingPathComponent(InvisoStore.keyFileName)
            #expect(try Data(contentsOf: keyURL).count == 32)
            #expect(try mode(of: keyURL) == 0o600)
            #expect(try mode(of: directory) == 0o700)
            #expect(try mode(of: directory.appendingPathComponent(InvisoStore.databaseFileName)) == 0o600)
            #expect(try InvisoStore(directory: directory, keySource: .keyFile).session(id: "s1") != nil)
            // The same 32 bytes given as a key (say, moved to the Keychain) open it too.
            let key = SymmetricKey(data: try Data(contentsOf: keyURL))
            #expect(try InvisoStore(directory: directory, keySource: .key(key)).session(id: "s1") != nil)
        }
    }

    @Test("a key file others can read, a short one or a missing one is refused")
    func badKeyFiles() throws {
        try Fixture.withDirectory { directory in
            try InvisoStore(directory: directory, keySource: .keyFile).close()
            let keyURL = directory.appendingPathComponent(InvisoStore.keyFileName)
            let key = try Data(contentsOf: keyURL)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyURL.path)
            #expect(throws: StoreError(.insecureKeyFile)) { try InvisoStore(directory: directory, keySource: .keyFile) }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyURL.path)
            try key.prefix(31).write(to: keyURL)
            #expect(throws: StoreError(.invalidKeyFile)) { try InvisoStore(directory: directory, keySource: .keyFile) }
            try FileManager.default.removeItem(at: keyURL)
            #expect(throws: StoreError(.keyFileMissing)) { try InvisoStore(directory: directory, keySource: .keyFile) }
            #expect(!FileManager.default.fileExists(atPath: keyURL.path))
        }
    }

    @Test("a wrong key, a short key and the wrong kind of source are typed errors")
    func wrongKeys() throws {
        try Fixture.withDirectory { directory in
            try InvisoStore(directory: directory, keySource: .keyFile).close()
            #expect(throws: StoreError.wrongKey) { try InvisoStore(directory: directory, keySource: .key(SymmetricKey(size: .bits256))) }
            #expect(throws: StoreError.wrongKey) { try InvisoStore(directory: directory, keySource: .key(SymmetricKey(size: .bits128))) }
            #expect(throws: StoreError(.keySourceMismatch)) { try InvisoStore(directory: directory, keySource: Fixture.source) }
        }
        try Fixture.withDirectory { directory in
            try InvisoStore(directory: directory, keySource: Fixture.source).close()
            #expect(throws: StoreError(.keySourceMismatch)) { try InvisoStore(directory: directory, keySource: .keyFile) }
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(InvisoStore.keyFileName).path))
        }
    }

    @Test("INVISO_PASSPHRASE picks the passphrase, else the key file; descriptions are redacted")
    func environment() {
        let passphrase = "hunter2-but-longer"
        let fromVariable = MasterKeySource.fromEnvironment([MasterKeySource.passphraseVariable: passphrase])
        #expect(fromVariable.description == "MasterKeySource(passphrase)")
        #expect(MasterKeySource.fromEnvironment([:]).description == "MasterKeySource(keyFile)")
        #expect(MasterKeySource.fromEnvironment(["HOME": "/root"]).description == "MasterKeySource(keyFile)")
        var dumped = ""
        dump(fromVariable, to: &dumped)
        for text in [String(describing: fromVariable), String(reflecting: fromVariable), dumped] {
            #expect(!text.contains(passphrase))
        }
        let error = StoreError(.wrongPassphrase, "opening the store")
        #expect(error.description == "StoreError(wrongPassphrase: opening the store)")
    }

    private func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
    }
}
