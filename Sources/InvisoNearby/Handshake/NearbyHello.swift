/// What each side of a nearby handshake says about itself, inside the Noise handshake's
/// encrypted payload: its identity, the identity's signature over this connection's Noise
/// static key, its capabilities and its display name.
///
/// ```
/// version (1 = 0x01) ‖ identity (32, Ed25519) ‖ signature (64, over the static key)
///   ‖ capabilities (uint16 big-endian) ‖ name length (1…64) ‖ name (UTF-8)
/// ```
///
/// ``init(decoding:)`` checks the version, every length and the UTF-8 before anything
/// else; the signature is checked by ``NearbyHandshake`` against the static key the Noise
/// handshake authenticated.
public struct NearbyHello: Sendable, Hashable {
    /// The protocol version this build speaks.
    public static let version: UInt8 = 1
    /// The longest display name in bytes.
    public static let maxNameBytes = 64
    /// Bytes before the name.
    static let fixedBytes = 1 + 32 + 64 + 2 + 1

    /// The sender's identity.
    public let identity: NearbyPublicIdentity
    /// The identity's signature over the sender's Noise static key.
    public let signature: [UInt8]
    /// What the sender supports (``NearbyCapabilities``).
    public let capabilities: NearbyCapabilities
    /// The sender's display name.
    public let name: String

    /// A hello.
    ///
    /// - Throws: ``NearbyError/Code/invalidName`` for an empty name or one over 64 bytes;
    ///   ``NearbyError/Code/malformed`` for a signature that is not 64 bytes.
    public init(identity: NearbyPublicIdentity, signature: [UInt8], capabilities: NearbyCapabilities, name: String)
        throws(NearbyError)
    {
        guard signature.count == 64 else { throw NearbyError(.malformed, "hello signature") }
        try Self.checkName(name)
        self.identity = identity
        self.signature = signature
        self.capabilities = capabilities
        self.name = name
    }

    /// Parses a hello.
    ///
    /// - Throws: ``NearbyError/Code/unsupportedVersion`` for another version,
    ///   ``NearbyError/Code/malformed`` for wrong lengths or a bad key, and
    ///   ``NearbyError/Code/invalidName`` for a name that is empty, too long or not UTF-8.
    public init(decoding bytes: [UInt8]) throws(NearbyError) {
        guard let version = bytes.first else { throw NearbyError(.malformed, "empty hello") }
        guard version == Self.version else { throw NearbyError(.unsupportedVersion, "hello version") }
        guard bytes.count >= Self.fixedBytes else { throw NearbyError(.malformed, "short hello") }
        let nameLength = Int(bytes[Self.fixedBytes - 1])
        guard bytes.count == Self.fixedBytes + nameLength else { throw NearbyError(.malformed, "hello length") }
        guard let name = String(validating: bytes[Self.fixedBytes...], as: UTF8.self) else {
            throw NearbyError(.invalidName, "hello name is not UTF-8")
        }
        try self.init(
            identity: NearbyPublicIdentity(Array(bytes[1..<33])),
            signature: Array(bytes[33..<97]),
            capabilities: NearbyCapabilities(rawValue: UInt16(bytes[97]) << 8 | UInt16(bytes[98])),
            name: name)
    }

    /// The wire form.
    public func encoded() -> [UInt8] {
        var bytes = [Self.version]
        bytes.reserveCapacity(Self.fixedBytes + name.utf8.count)
        bytes += identity.bytes
        bytes += signature
        bytes.append(UInt8(capabilities.rawValue >> 8))
        bytes.append(UInt8(capabilities.rawValue & 0xFF))
        bytes.append(UInt8(name.utf8.count))
        bytes += name.utf8
        return bytes
    }

    /// Checks a display name: 1…64 bytes of UTF-8 with no control character.
    ///
    /// - Throws: ``NearbyError/Code/invalidName``.
    public static func checkName(_ name: String) throws(NearbyError) {
        let count = name.utf8.count
        guard count > 0, count <= maxNameBytes else { throw NearbyError(.invalidName, "name must be 1–64 bytes") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw NearbyError(.invalidName, "name has a control character")
        }
    }
}

/// What a peer supports, as bits (also advertised in the TXT record as `caps=` hex).
public struct NearbyCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Groups with sender keys.
    public static let groups = NearbyCapabilities(rawValue: 1 << 0)
    /// File transfers.
    public static let files = NearbyCapabilities(rawValue: 1 << 1)
    /// Disappearing messages.
    public static let lifetimes = NearbyCapabilities(rawValue: 1 << 2)

    /// Everything this build supports.
    public static let all: NearbyCapabilities = [.groups, .files, .lifetimes]
}
