public import InvisoSignal

/// Someone we exchange offline messages with: who they are (name, address, device id,
/// identity key), whether their safety number was compared, and the Signal session with
/// them.
public struct OfflineContact: Sendable {
    /// A local, random id (the storage key; never leaves this machine).
    public let id: String
    /// The name the user gave them.
    public internal(set) var name: String
    /// Their Signal address name (a UUID string, as they sent it).
    public let address: String
    /// Their device id (SecureChats forces it into 1…127).
    public let deviceID: UInt32
    /// Their registration id, once known (from their keys or their first message): a
    /// pre-key message with another one was altered on the way.
    public internal(set) var registrationID: UInt32?
    /// The identity key we trust for them.
    public internal(set) var identityKey: IdentityKey
    /// Whether the user compared the safety number with them.
    public internal(set) var verified: Bool
    /// A different identity key they presented, refused until the user trusts it.
    public internal(set) var pendingIdentityKey: IdentityKey?
    /// How long messages with them are kept (milliseconds), or `nil` for ever.
    public internal(set) var lifetime: Int64?
    /// When they were added, milliseconds since 1970.
    public let createdAt: Int64
    /// The newest of our pre-key generations they have (from our invite or a rotation we
    /// sent): when ours is newer, our next message to them carries our keys.
    public internal(set) var knownGeneration: UInt32
    /// The Signal session with them.
    package internal(set) var session: SessionRecord

    /// A contact from its parts.
    package init(
        id: String, name: String, address: String, deviceID: UInt32, registrationID: UInt32?, identityKey: IdentityKey,
        verified: Bool,
        pendingIdentityKey: IdentityKey?, lifetime: Int64?, createdAt: Int64, knownGeneration: UInt32,
        session: SessionRecord
    ) {
        self.id = id
        self.name = name
        self.address = address
        self.deviceID = deviceID
        self.registrationID = registrationID
        self.identityKey = identityKey
        self.verified = verified
        self.pendingIdentityKey = pendingIdentityKey
        self.lifetime = lifetime
        self.createdAt = createdAt
        self.knownGeneration = knownGeneration
        self.session = session
    }

    /// Their Signal protocol address.
    public var protocolAddress: ProtocolAddress { ProtocolAddress(name: address, deviceID: deviceID) }

    /// Whether there is a session to send on.
    public var hasSession: Bool { session.hasCurrentSession }

    /// When a message stored at `storedAt` expires under ``lifetime`` (`nil`: never).
    public func expiry(storedAt: Int64) -> Int64? {
        lifetime.map { lifetime in
            let (sum, overflow) = storedAt.addingReportingOverflow(lifetime)
            return overflow ? Int64.max : sum
        }
    }

    /// The session's message version: 4 (PQXDH) or 3 (X3DH).
    public var sessionVersion: UInt8? { session.sessionVersion }
}

// MARK: - CustomStringConvertible

extension OfflineContact: CustomStringConvertible {
    /// Name, address and flags; never key or session bytes.
    public var description: String {
        "OfflineContact(\(name), \(address).\(deviceID)\(verified ? ", verified" : ""))"
    }
}
