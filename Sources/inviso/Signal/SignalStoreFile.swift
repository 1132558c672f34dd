import Foundation
import InvisoCrypto

import InvisoSignal

/// The `inviso signal` store: one JSON file (`DIR/signal-store.json`, mode 0600) holding
/// our identity, pre-keys, known identities and session records.
///
/// Private keys are in this file in the clear (base64); the storage issue moves them into
/// the encrypted database. Writes go to a temporary file that is renamed over the old
/// one, so a crash never leaves a half-written store, and a failed command never writes.
struct SignalStoreFile {
    static let fileName = "signal-store.json"

    /// Everything persisted, as plain Codable data.
    struct Contents: Codable {
        var format = 1
        var name: String
        var deviceID: UInt32
        var registrationID: UInt32
        var identityPrivate: Data
        var signedPreKeys: [SignedPreKey]
        var preKeys: [PreKey]
        var kyberPreKeys: [KyberPreKey]
        var usedKyberPreKeys: [UInt32]
        var identities: [String: Data]
        var sessions: [String: Data]

        struct PreKey: Codable {
            var id: UInt32
            var privateKey: Data
        }

        struct SignedPreKey: Codable {
            var id: UInt32
            var timestamp: UInt64
            var privateKey: Data
            var signature: Data
        }

        struct KyberPreKey: Codable {
            var id: UInt32
            var timestamp: UInt64
            var seed: Data
            var signature: Data
            var lastResort: Bool
        }
    }

    let directory: URL
    var name: String
    var deviceID: UInt32
    var store: InMemorySignalProtocolStore

    var fileURL: URL { directory.appendingPathComponent(Self.fileName) }

    /// Loads the store in `directory`.
    static func load(directory: String) throws -> SignalStoreFile {
        let url = URL(fileURLWithPath: directory)
        let file = url.appendingPathComponent(fileName)
        guard let data = try? Data(contentsOf: file) else {
            throw CLIError("no Signal store in \(directory) (run `inviso signal init --store \(directory)` first)")
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: data)
        } catch {
            throw CLIError("the Signal store in \(directory) is damaged")
        }
        guard contents.format == 1 else { throw CLIError("unsupported Signal store format \(contents.format)") }
        return try SignalStoreFile(directory: url, contents: contents)
    }

    private init(directory: URL, contents: Contents) throws {
        self.directory = directory
        self.name = contents.name
        self.deviceID = contents.deviceID
        let identity = IdentityKeyPair(privateKey: try ECPrivateKey(rawRepresentation: contents.identityPrivate))
        var store = InMemorySignalProtocolStore(identity: identity, registrationID: contents.registrationID)
        for key in contents.signedPreKeys {
            let pair = ECKeyPair(privateKey: try ECPrivateKey(rawRepresentation: key.privateKey))
            try store.storeSignedPreKey(
                SignedPreKeyRecord(id: key.id, timestamp: key.timestamp, keyPair: pair, signature: Array(key.signature)))
        }
        for key in contents.preKeys {
            try store.storePreKey(PreKeyRecord(id: key.id, keyPair: ECKeyPair(privateKey: try ECPrivateKey(rawRepresentation: key.privateKey))))
        }
        for key in contents.kyberPreKeys {
            let pair = KyberKeyPair(privateKey: try Kyber1024.PrivateKey(seedRepresentation: key.seed))
            try store.storeKyberPreKey(
                KyberPreKeyRecord(
                    id: key.id, timestamp: key.timestamp, keyPair: pair, signature: Array(key.signature),
                    isLastResort: key.lastResort))
        }
        for id in contents.usedKyberPreKeys { try store.markKyberPreKeyUsed(id: id) }
        for (address, key) in contents.identities {
            _ = try store.saveIdentity(try IdentityKey(serialized: key), for: try ProtocolAddress(parsing: address))
        }
        for (address, record) in contents.sessions {
            try store.storeSession(try SessionRecord(serialized: record), for: try ProtocolAddress(parsing: address))
        }
        self.store = store
    }

    /// Creates a new store in `directory` (which may exist but must not hold a store).
    static func create(
        directory: String, name: String, deviceID: UInt32, kyber: Bool, oneTimeKeys: Int = 10
    ) throws -> SignalStoreFile {
        let url = URL(fileURLWithPath: directory)
        let fileManager = FileManager.default
        guard !fileManager.fileExists(atPath: url.appendingPathComponent(fileName).path) else {
            throw CLIError("\(directory) already holds a Signal store")
        }
        try fileManager.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var generator = SystemRandomNumberGenerator()
        let identity = IdentityKeyPair.generate(using: &generator)
        // libsignal registration ids are 14-bit and non-zero.
        let registrationID = UInt32.random(in: 1...0x3FFF, using: &generator)
        var store = InMemorySignalProtocolStore(identity: identity, registrationID: registrationID)
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        try store.storeSignedPreKey(SignedPreKeyRecord.generate(id: 1, timestamp: now, identity: identity, using: &generator))
        for id in 1...UInt32(oneTimeKeys) {
            try store.storePreKey(PreKeyRecord(id: id, keyPair: .generate(using: &generator)))
        }
        if kyber {
            // One last-resort key (id 1) and one-time keys 2….
            try store.storeKyberPreKey(
                try KyberPreKeyRecord.generate(id: 1, timestamp: now, isLastResort: true, identity: identity, using: &generator))
            for id in 2...UInt32(oneTimeKeys + 1) {
                try store.storeKyberPreKey(
                    try KyberPreKeyRecord.generate(id: id, timestamp: now, isLastResort: false, identity: identity, using: &generator))
            }
        }
        let file = SignalStoreFile(directory: url, name: name, deviceID: deviceID, store: store)
        try file.save()
        return file
    }

    private init(directory: URL, name: String, deviceID: UInt32, store: InMemorySignalProtocolStore) {
        self.directory = directory
        self.name = name
        self.deviceID = deviceID
        self.store = store
    }

    /// The bundle a peer needs: the lowest unused one-time pre-key, the signed pre-key, and
    /// the lowest one-time Kyber pre-key (the last-resort key when none is left).
    func bundle() throws -> PreKeyBundle {
        guard let signed = store.signedPreKeys.values.max(by: { $0.id < $1.id }) else {
            throw CLIError("the store has no signed pre-key")
        }
        let preKey = store.preKeys.values.min(by: { $0.id < $1.id })
        let kyberKeys = store.kyberPreKeys.values
        let kyber = kyberKeys.filter { !$0.isLastResort }.min(by: { $0.id < $1.id })
            ?? kyberKeys.filter(\.isLastResort).max(by: { $0.id < $1.id })
        return PreKeyBundle(
            registrationID: store.registrationID, deviceID: deviceID,
            preKey: preKey.map { ($0.id, $0.keyPair.publicKey) }, signedPreKeyID: signed.id,
            signedPreKey: signed.keyPair.publicKey, signedPreKeySignature: signed.signature,
            identityKey: store.identity.identityKey,
            kyberPreKey: kyber.map { ($0.id, $0.keyPair.publicKey, $0.signature) })
    }

    /// Writes the store atomically with owner-only permissions.
    func save() throws {
        var contents = Contents(
            name: name, deviceID: deviceID, registrationID: store.registrationID,
            identityPrivate: store.identity.privateKey.rawRepresentation.withUnsafeBytes { Data($0) },
            signedPreKeys: [], preKeys: [], kyberPreKeys: [], usedKyberPreKeys: store.usedKyberPreKeys.sorted(),
            identities: [:], sessions: [:])
        contents.signedPreKeys = store.signedPreKeys.values.sorted { $0.id < $1.id }.map {
            .init(
                id: $0.id, timestamp: $0.timestamp,
                privateKey: $0.keyPair.privateKey.rawRepresentation.withUnsafeBytes { Data($0) }, signature: Data($0.signature))
        }
        contents.preKeys = store.preKeys.values.sorted { $0.id < $1.id }.map {
            .init(id: $0.id, privateKey: $0.keyPair.privateKey.rawRepresentation.withUnsafeBytes { Data($0) })
        }
        contents.kyberPreKeys = store.kyberPreKeys.values.sorted { $0.id < $1.id }.map {
            .init(
                id: $0.id, timestamp: $0.timestamp,
                seed: $0.keyPair.privateKey.seedRepresentation.withUnsafeBytes { Data($0) },
                signature: Data($0.signature), lastResort: $0.isLastResort)
        }
        for (address, key) in store.identities { contents.identities[address.description] = Data(key.serialized) }
        for (address, record) in store.sessions {
            contents.sessions[address.description] = record.serialize().withUnsafeBytes { Data($0) }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(contents)
        try AtomicFile.write(data, to: fileURL)
    }
}
