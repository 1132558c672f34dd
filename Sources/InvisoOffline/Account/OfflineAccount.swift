import InvisoCrypto
public import InvisoSignal

/// One offline account: a Signal identity, a registration id, an address name (a UUID)
/// and device id 1, with its pre-keys in ``PreKeyGeneration``s that rotate on SecureChats'
/// timing.
///
/// ```
///  generation g (current)         created ≥ 2 days ago? ──► g+1 becomes current; g superseded
///  ├ signed pre-key  id g          superseded ≥ 2 days ago? ──► g deleted
///  ├ Kyber1024 pre-key id g        (invites and rotations in flight keep working meanwhile)
///  └ one-time pre-keys 2g−1, 2g
/// ```
///
/// Invites carry the current generation. Time is passed in (milliseconds since 1970);
/// nothing here reads a clock.
public struct OfflineAccount: Sendable {
    /// How long a generation is current: 2 days, as SecureChats rotates its signed and
    /// Kyber pre-keys.
    public static let rotationInterval: Int64 = 2 * 24 * 3600 * 1000
    /// How long a superseded generation is kept for invites and rotations in flight: 2 days.
    public static let gracePeriod: Int64 = 2 * 24 * 3600 * 1000
    /// Our device id: SecureChats' apps always use 1.
    public static let deviceID: UInt32 = 1

    /// The identity key pair.
    public let identity: IdentityKeyPair
    /// The registration id (1…16380, as libsignal draws it).
    public let registrationID: UInt32
    /// The Signal address name: a lower-case UUID, as the Android apps write it.
    public let address: String
    /// The name the user gave themselves (shown with invites), if any.
    public internal(set) var name: String?
    /// The pre-key generations, oldest first; the last is current.
    public private(set) var generations: [PreKeyGeneration]
    /// How many invites were written (they alternate between the two one-time pre-keys).
    public private(set) var invitesWritten: UInt32

    /// Creates an account with a first generation of pre-keys.
    ///
    /// - Throws: ``OfflineError/Code/storage`` if Kyber key generation fails.
    public static func create(now: Int64, using generator: inout some RandomNumberGenerator) throws(OfflineError) -> OfflineAccount {
        let identity = IdentityKeyPair.generate(using: &generator)
        let registrationID = UInt32.random(in: 1...16380, using: &generator)
        let address = randomUUID(using: &generator)
        let first = try PreKeyGeneration.generate(number: 1, now: now, identity: identity, using: &generator)
        return OfflineAccount(
            identity: identity, registrationID: registrationID, address: address, generations: [first], invitesWritten: 0)
    }

    /// An account from its parts (read back from storage).
    package init(
        identity: IdentityKeyPair, registrationID: UInt32, address: String, name: String? = nil,
        generations: [PreKeyGeneration], invitesWritten: UInt32
    ) {
        self.identity = identity
        self.registrationID = registrationID
        self.address = address
        self.name = name
        self.generations = generations
        self.invitesWritten = invitesWritten
    }

    /// The current generation.
    public var current: PreKeyGeneration { generations[generations.count - 1] }

    /// Our Signal protocol address.
    public var protocolAddress: ProtocolAddress { ProtocolAddress(name: address, deviceID: Self.deviceID) }

    /// Rotates when the current generation is ``rotationInterval`` old and deletes
    /// generations superseded ``gracePeriod`` ago. A clock that went back changes nothing.
    ///
    /// - Returns: Whether anything changed.
    /// - Throws: ``OfflineError/Code/storage`` if Kyber key generation fails.
    @discardableResult
    public mutating func rotate(now: Int64, using generator: inout some RandomNumberGenerator) throws(OfflineError) -> Bool {
        var changed = false
        if Self.elapsed(from: current.createdAt, to: now) >= Self.rotationInterval {
            let next = try PreKeyGeneration.generate(number: current.number + 1, now: now, identity: identity, using: &generator)
            generations[generations.count - 1].supersededAt = now
            generations.append(next)
            changed = true
        }
        let expired = { (generation: PreKeyGeneration) in
            generation.supersededAt.map { Self.elapsed(from: $0, to: now) >= Self.gracePeriod } ?? false
        }
        // Checked first: removeAll rewrites the array even when nothing goes.
        guard generations.contains(where: expired) else { return changed }
        generations.removeAll(where: expired)
        return true
    }

    /// `to − from`, saturating (times are whatever the caller passes).
    static func elapsed(from: Int64, to: Int64) -> Int64 {
        let (difference, overflow) = to.subtractingReportingOverflow(from)
        return overflow ? (to < from ? Int64.min : Int64.max) : difference
    }

    /// The keys an invite or a rotation publishes: the current generation, with one of its
    /// two one-time pre-keys (they alternate from one invite to the next).
    public mutating func preKeyResponse() -> OfflineEnvelope.PreKeyResponse {
        let generation = current
        let oneTime = generation.oneTimePreKeys[Int(invitesWritten % UInt32(generation.oneTimePreKeys.count))]
        invitesWritten &+= 1
        let signed = generation.signedPreKey
        let kyber = generation.kyberPreKey
        return OfflineEnvelope.PreKeyResponse(
            identityKey: identity.identityKey.serialized,
            devices: [
                OfflineEnvelope.Device(
                    deviceID: Int(Self.deviceID),
                    preKey: OfflineEnvelope.PreKey(keyID: Int(oneTime.id), publicKey: oneTime.keyPair.publicKey.serialized),
                    registrationID: Int(registrationID),
                    signedPreKey: OfflineEnvelope.SignedPreKey(
                        keyID: Int(signed.id), publicKey: signed.keyPair.publicKey.serialized, signature: signed.signature))
            ],
            kyberPreKeyID: Int(kyber.id), kyberPublicKey: kyber.keyPair.publicKey.serialized,
            kyberSignature: kyber.signature)
    }

    /// A random (version 4) UUID in lower case.
    static func randomUUID(using generator: inout some RandomNumberGenerator) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(Hex.encode(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}

// MARK: - CustomStringConvertible

extension OfflineAccount: CustomStringConvertible {
    /// The address and generations, never a key.
    public var description: String {
        "OfflineAccount(\(address), generations: \(generations.map(\.number)))"
    }
}
