public import InvisoSignal

/// The pre-keys made at one rotation: a signed pre-key, a signed Kyber1024 pre-key and two
/// one-time pre-keys, all signed by (or, for the one-time keys, belonging to) one identity.
///
/// Generation `g` uses signed and Kyber pre-key id `g` and one-time ids `2g − 1` and `2g`.
/// The one-time pre-keys are not deleted when a session uses one: an invite is text that
/// may reach several people (or be opened twice), and each of them starts a session with
/// the same key — SecureChats' invites all carry pre-key 1 for the same reason. They go
/// with their generation, 2 days after it was superseded. The Kyber pre-key is kept the
/// same way (libsignal's "last resort" key).
public struct PreKeyGeneration: Sendable {
    /// The generation's number, from 1.
    public let number: UInt32
    /// When it was made, milliseconds since 1970.
    public let createdAt: Int64
    /// When the next generation replaced it, if one has.
    public internal(set) var supersededAt: Int64?
    /// The signed pre-key.
    public let signedPreKey: SignedPreKeyRecord
    /// The signed Kyber1024 pre-key.
    public let kyberPreKey: KyberPreKeyRecord
    /// The two one-time pre-keys.
    public let oneTimePreKeys: [PreKeyRecord]

    /// A generation from its parts.
    package init(
        number: UInt32, createdAt: Int64, supersededAt: Int64?, signedPreKey: SignedPreKeyRecord,
        kyberPreKey: KyberPreKeyRecord, oneTimePreKeys: [PreKeyRecord]
    ) {
        self.number = number
        self.createdAt = createdAt
        self.supersededAt = supersededAt
        self.signedPreKey = signedPreKey
        self.kyberPreKey = kyberPreKey
        self.oneTimePreKeys = oneTimePreKeys
    }

    /// Makes generation `number` for `identity`.
    ///
    /// - Throws: ``OfflineError/Code/storage`` if Kyber key generation fails.
    static func generate(
        number: UInt32, now: Int64, identity: IdentityKeyPair, using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> PreKeyGeneration {
        let timestamp = UInt64(max(0, now))
        let signed = SignedPreKeyRecord.generate(id: number, timestamp: timestamp, identity: identity, using: &generator)
        let kyber: KyberPreKeyRecord
        do {
            kyber = try KyberPreKeyRecord.generate(
                id: number, timestamp: timestamp, isLastResort: true, identity: identity, using: &generator)
        } catch {
            throw OfflineError(.storage, "Kyber1024 key generation")
        }
        let oneTime = [2 * number - 1, 2 * number].map { id in
            PreKeyRecord(id: id, keyPair: ECKeyPair.generate(using: &generator))
        }
        return PreKeyGeneration(
            number: number, createdAt: now, supersededAt: nil, signedPreKey: signed, kyberPreKey: kyber,
            oneTimePreKeys: oneTime)
    }
}
