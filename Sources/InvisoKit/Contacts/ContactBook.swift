import Foundation
public import InvisoCrypto
public import InvisoStore
import InvisoNoise

/// A saved contact: a name, the peer's long-term identity key, the shared contact secret.
public struct Contact: Sendable, Codable {
    /// Our name for them (unique in the book, 1…64 characters).
    public var name: String
    /// Their identity key (the Noise static public key their calls use), 32 bytes.
    public var identity: [UInt8]
    /// The contact secret both sides derived (``ContactCall/secret(ourIdentity:ourNonce:theirIdentity:theirNonce:)``).
    public var secret: SecretBytes
    /// Whether the user compared the safety number of the session the contact was saved
    /// in (`inviso contacts verify`); the saving session itself was a verified v2 pairing.
    public var verified: Bool
    /// When it was saved, seconds since 1970.
    public var savedAt: Double

    enum CodingKeys: String, CodingKey { case name, identity, secret, verified, savedAt }

    public init(name: String, identity: [UInt8], secret: SecretBytes, verified: Bool, savedAt: Double) {
        self.name = name
        self.identity = identity
        self.secret = secret
        self.verified = verified
        self.savedAt = savedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        identity = Array(try container.decode(Data.self, forKey: .identity))
        secret = SecretBytes(Array(try container.decode(Data.self, forKey: .secret)))
        verified = try container.decode(Bool.self, forKey: .verified)
        savedAt = try container.decode(Double.self, forKey: .savedAt)
        guard identity.count == 32, secret.count == 32 else {
            throw DecodingError.dataCorruptedError(forKey: .identity, in: container, debugDescription: "contact key lengths")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(Data(identity), forKey: .identity)
        try container.encode(secret.withUnsafeBytes { Data($0) }, forKey: .secret)
        try container.encode(verified, forKey: .verified)
        try container.encode(savedAt, forKey: .savedAt)
    }

    /// The first 16 hex digits of the identity key, to tell contacts apart.
    public var fingerprint: String { Hex.encode(Array(identity.prefix(8))) }
}

/// The contacts and our own long-term identity, kept sealed in the store (records of kind
/// `contact` by identity key, and `contact-identity` `self`).
public struct ContactBook: Sendable {
    let store: InvisoStore

    public init(store: InvisoStore) { self.store = store }

    /// Our identity's private key, made on first use.
    ///
    /// - Throws: ``StoreError``.
    public func identity() throws(StoreError) -> SecretBytes {
        if let record = try store.nearbyRecords(kind: "contact-identity").first(where: { $0.id == "self" }), record.value.count == 32 {
            return SecretBytes(Array(record.value))
        }
        var generator = SystemRandomNumberGenerator()
        let key = SecretBytes(randomCount: 32, using: &generator)
        try store.saveNearby(records: [
            NearbyStoredRecord(kind: "contact-identity", id: "self", updatedAt: Self.now(), value: key.withUnsafeBytes { Data($0) })
        ])
        return key
    }

    /// Our identity's public key.
    public func identityPublicKey() throws(StoreError) -> [UInt8] {
        let key = try identity()
        do {
            return try key.withUnsafeBytes { raw throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: raw) }.publicKey
        } catch {
            preconditionFailure("32 bytes are always an X25519 private key")
        }
    }

    /// Every contact, by name.
    public func all() throws(StoreError) -> [Contact] {
        try store.nearbyRecords(kind: "contact").compactMap { try? JSONDecoder().decode(Contact.self, from: $0.value) }
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// The contact named `name` (case-insensitive).
    public func named(_ name: String) throws(StoreError) -> Contact? {
        try all().first { $0.name.lowercased() == name.lowercased() }
    }

    /// Saves (or replaces, by identity key) a contact.
    public func save(_ contact: Contact) throws(StoreError) {
        guard let value = try? JSONEncoder().encode(contact) else { return }
        try store.saveNearby(records: [
            NearbyStoredRecord(kind: "contact", id: Hex.encode(contact.identity), updatedAt: Self.now(), value: value)
        ])
    }

    /// Deletes a contact.
    public func delete(_ contact: Contact) throws(StoreError) {
        try store.saveNearby(records: [], deleting: [("contact", Hex.encode(contact.identity))])
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000) }
}
