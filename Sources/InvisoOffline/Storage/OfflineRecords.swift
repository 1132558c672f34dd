import Foundation
import InvisoCrypto
import InvisoSignal

// How the book's parts are encoded for storage and backups (JSON, byte fields as base64):
// private keys as their raw 32 bytes, Kyber keys as their 64-byte seeds, sessions as
// libsignal's record bytes. The store seals each value to its row; a backup seals them all.

/// The account as stored.
struct AccountRecord: Codable {
    struct Generation: Codable {
        var number: UInt32
        var createdAt: Int64
        var supersededAt: Int64?
        var signedPrivateKey: Data
        var signedTimestamp: UInt64
        var signedSignature: Data
        var kyberSeed: Data
        var kyberTimestamp: UInt64
        var kyberSignature: Data
        var oneTimeIDs: [UInt32]
        var oneTimePrivateKeys: [Data]
    }

    var identityPrivateKey: Data
    var registrationID: UInt32
    var address: String
    var name: String?
    var invitesWritten: UInt32
    var generations: [Generation]

    init(_ account: OfflineAccount) {
        identityPrivateKey = Data(secret: account.identity.privateKey.rawRepresentation)
        registrationID = account.registrationID
        address = account.address
        name = account.name
        invitesWritten = account.invitesWritten
        generations = account.generations.map { generation in
            Generation(
                number: generation.number, createdAt: generation.createdAt, supersededAt: generation.supersededAt,
                signedPrivateKey: Data(secret: generation.signedPreKey.keyPair.privateKey.rawRepresentation),
                signedTimestamp: generation.signedPreKey.timestamp, signedSignature: Data(generation.signedPreKey.signature),
                kyberSeed: Data(secret: generation.kyberPreKey.keyPair.privateKey.seedRepresentation),
                kyberTimestamp: generation.kyberPreKey.timestamp, kyberSignature: Data(generation.kyberPreKey.signature),
                oneTimeIDs: generation.oneTimePreKeys.map(\.id),
                oneTimePrivateKeys: generation.oneTimePreKeys.map { Data(secret: $0.keyPair.privateKey.rawRepresentation) })
        }
    }

    func account() throws(OfflineError) -> OfflineAccount {
        let corrupt = OfflineError(.storage, "account record")
        do {
            let identity = IdentityKeyPair(privateKey: try ECPrivateKey(rawRepresentation: identityPrivateKey))
            let generations = try generations.map { record in
                guard record.oneTimeIDs.count == record.oneTimePrivateKeys.count, !record.oneTimeIDs.isEmpty else { throw corrupt }
                let kyberKey = try SecretBytes(record.kyberSeed).withUnsafeBytes { seed in
                    try Kyber1024.PrivateKey(seedRepresentation: seed)
                }
                return PreKeyGeneration(
                    number: record.number, createdAt: record.createdAt, supersededAt: record.supersededAt,
                    signedPreKey: SignedPreKeyRecord(
                        id: record.number, timestamp: record.signedTimestamp,
                        keyPair: ECKeyPair(privateKey: try ECPrivateKey(rawRepresentation: record.signedPrivateKey)),
                        signature: Array(record.signedSignature)),
                    kyberPreKey: KyberPreKeyRecord(
                        id: record.number, timestamp: record.kyberTimestamp, keyPair: KyberKeyPair(privateKey: kyberKey),
                        signature: Array(record.kyberSignature), isLastResort: true),
                    oneTimePreKeys: try zip(record.oneTimeIDs, record.oneTimePrivateKeys).map { id, key in
                        PreKeyRecord(id: id, keyPair: ECKeyPair(privateKey: try ECPrivateKey(rawRepresentation: key)))
                    })
            }
            guard !generations.isEmpty else { throw corrupt }
            return OfflineAccount(
                identity: identity, registrationID: registrationID, address: address, name: name, generations: generations,
                invitesWritten: invitesWritten)
        } catch {
            throw corrupt
        }
    }

    /// Overwrites the private key bytes (the decoder's own copies are beyond reach).
    mutating func wipe() {
        identityPrivateKey.wipe()
        for index in generations.indices {
            generations[index].signedPrivateKey.wipe()
            generations[index].kyberSeed.wipe()
            for key in generations[index].oneTimePrivateKeys.indices { generations[index].oneTimePrivateKeys[key].wipe() }
        }
    }
}

/// A contact as stored (its id and creation time are the row's plaintext columns).
struct ContactRecord: Codable {
    var name: String
    var address: String
    var deviceID: UInt32
    var registrationID: UInt32?
    var identityKey: Data
    var verified: Bool
    var pendingIdentityKey: Data?
    var lifetime: Int64?
    var knownGeneration: UInt32
    var session: Data

    init(_ contact: OfflineContact) {
        name = contact.name
        address = contact.address
        deviceID = contact.deviceID
        registrationID = contact.registrationID
        identityKey = Data(contact.identityKey.serialized)
        verified = contact.verified
        pendingIdentityKey = contact.pendingIdentityKey.map { Data($0.serialized) }
        lifetime = contact.lifetime
        knownGeneration = contact.knownGeneration
        session = Data(secret: contact.session.serialize())
    }

    func contact(id: String, createdAt: Int64) throws(OfflineError) -> OfflineContact {
        do {
            return OfflineContact(
                id: id, name: name, address: address, deviceID: deviceID, registrationID: registrationID,
                identityKey: try IdentityKey(serialized: identityKey), verified: verified,
                pendingIdentityKey: try pendingIdentityKey.map { try IdentityKey(serialized: $0) }, lifetime: lifetime,
                createdAt: createdAt, knownGeneration: knownGeneration, session: try SessionRecord(serialized: session))
        } catch {
            throw OfflineError(.storage, "contact record")
        }
    }

    mutating func wipe() { session.wipe() }
}

/// A history message as stored (id, contact, times are plaintext columns).
struct MessageRecord: Codable {
    var direction: OfflineMessage.Direction
    var kind: String
    var text: String
    var sentAt: Int64

    init(_ message: OfflineMessage) {
        direction = message.direction
        kind = message.kind.rawValue
        text = message.text
        sentAt = message.sentAt
    }

    func message(id: String, contactID: String, storedAt: Int64, expiresAt: Int64?) -> OfflineMessage {
        OfflineMessage(
            id: id, contactID: contactID, direction: direction, kind: OfflineEnvelope.Kind(rawValue: kind) ?? .message,
            text: text, sentAt: sentAt, storedAt: storedAt, expiresAt: expiresAt)
    }
}

// MARK: - JSON

enum RecordCoding {
    static func encode(_ value: some Encodable) throws(OfflineError) -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw OfflineError(.storage, "encoding a record")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(OfflineError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw OfflineError(.storage, "decoding a record")
        }
    }
}

extension Data {
    /// The bytes of a secret (a copy the caller wipes).
    init(secret: SecretBytes) {
        self = secret.withUnsafeBytes { Data($0) }
    }

    /// Overwrites the bytes with zeros.
    mutating func wipe() {
        let count = self.count
        resetBytes(in: 0..<count)
    }
}
