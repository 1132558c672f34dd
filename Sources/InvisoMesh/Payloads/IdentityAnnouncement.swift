/// The payload of an ``MessageType/announce`` packet: who a peer is.
///
/// TLVs of type u8, length u8: `0x01` nickname (UTF-8), `0x02` Noise static public key
/// (32 bytes), `0x03` Ed25519 signing public key (32 bytes), optional `0x04` direct
/// neighbours (8-byte peer IDs, 1…10), optional `0x05` capabilities (minimal little-endian,
/// see ``PeerCapabilities``), optional `0x06` bridge geohash (UTF-8, 1…12 bytes). Unknown
/// TLVs are kept in order and written back after the known ones, as Android does (iOS
/// drops them). Sources: permissionlesstech/bitchat bitchat/Protocols/Packets.swift (stored
/// version with TLVs 0x04–0x06; the golden README cites it
/// @9b84b361225facd8e623f25d76f889d3dc54a879 line 33); golden vector
/// `identity_announcement_tlv`.
///
/// Stricter than iOS: keys must be 32 bytes, known TLVs may not repeat or have a bad size,
/// and a partial TLV at the end is an error.
public struct IdentityAnnouncement: Hashable, Sendable {
    /// A TLV this decoder does not know, kept so that re-encoding preserves it.
    public struct UnknownField: Hashable, Sendable {
        /// The TLV type (not 0x01–0x06).
        public var type: UInt8
        /// The value (at most 255 bytes).
        public var value: [UInt8]

        /// Creates an unknown field.
        public init(type: UInt8, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// The peer's nickname (at most 255 UTF-8 bytes).
    public var nickname: String
    /// The peer's 32-byte Noise (X25519) static public key.
    public var noisePublicKey: [UInt8]
    /// The peer's 32-byte Ed25519 signing public key.
    public var signingPublicKey: [UInt8]
    /// Peers directly connected to it (at most 10); `nil` when absent.
    public var directNeighbors: [PeerID]?
    /// Its feature bits; `nil` when absent (older clients).
    public var capabilities: PeerCapabilities?
    /// The geohash cell it bridges (1…12 UTF-8 bytes).
    public var bridgeGeohash: String?
    /// TLVs of other types, in the order received.
    public var unknownFields: [UnknownField]

    /// Creates an announcement.
    public init(
        nickname: String, noisePublicKey: [UInt8], signingPublicKey: [UInt8], directNeighbors: [PeerID]? = nil,
        capabilities: PeerCapabilities? = nil, bridgeGeohash: String? = nil, unknownFields: [UnknownField] = []
    ) {
        self.nickname = nickname
        self.noisePublicKey = noisePublicKey
        self.signingPublicKey = signingPublicKey
        self.directNeighbors = directNeighbors
        self.capabilities = capabilities
        self.bridgeGeohash = bridgeGeohash
        self.unknownFields = unknownFields
    }

    /// The wire bytes: known TLVs in type order, then the unknown ones.
    ///
    /// - Throws: ``MeshWireError/invalidField`` (key not 32 bytes, 0 or more than 10
    ///   neighbours, empty geohash, an unknown field using a known type),
    ///   ``MeshWireError/tooLarge`` (nickname, geohash or unknown value too long).
    public func encoded() throws(MeshWireError) -> [UInt8] {
        guard noisePublicKey.count == 32 else { throw MeshWireError(.invalidField, "Noise key must be 32 bytes") }
        guard signingPublicKey.count == 32 else { throw MeshWireError(.invalidField, "signing key must be 32 bytes") }
        var out: [UInt8] = []
        func put(_ type: UInt8, _ value: some Collection<UInt8>, _ what: StaticString) throws(MeshWireError) {
            guard value.count <= 255 else { throw MeshWireError(.tooLarge, "\(what)") }
            out.append(type)
            out.append(UInt8(value.count))
            out.append(contentsOf: value)
        }
        try put(0x01, nickname.utf8, "nickname")
        try put(0x02, noisePublicKey, "Noise key")
        try put(0x03, signingPublicKey, "signing key")
        if let directNeighbors {
            guard (1...10).contains(directNeighbors.count) else { throw MeshWireError(.invalidField, "neighbours") }
            var value: [UInt8] = []
            for neighbor in directNeighbors { value.append(neighbor) }
            try put(0x04, value, "neighbours")
        }
        if let capabilities { try put(0x05, capabilities.encoded(), "capabilities") }
        if let bridgeGeohash {
            guard !bridgeGeohash.isEmpty, bridgeGeohash.utf8.count <= 12 else {
                throw MeshWireError(.invalidField, "bridge geohash")
            }
            try put(0x06, bridgeGeohash.utf8, "bridge geohash")
        }
        for field in unknownFields {
            guard !(0x01...0x06).contains(field.type) else { throw MeshWireError(.invalidField, "unknown field type") }
            try put(field.type, field.value, "unknown field")
        }
        return out
    }

    /// Decodes the wire bytes.
    ///
    /// - Throws: ``MeshWireError/truncated``, ``MeshWireError/missingField`` (nickname or a
    ///   key), ``MeshWireError/duplicateField``, ``MeshWireError/invalidField`` (bad sizes),
    ///   ``MeshWireError/invalidUTF8``.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        var nickname: String?
        var noiseKey: [UInt8]?
        var signingKey: [UInt8]?
        var neighbors: [PeerID]?
        var capabilities: PeerCapabilities?
        var geohash: String?
        var unknown: [UnknownField] = []
        while !reader.isAtEnd {
            let type = try reader.u8("TLV type")
            let length = Int(try reader.u8("TLV length"))
            var value = WireReader(try reader.slice(length, "TLV value"))
            switch type {
            case 0x01:
                guard nickname == nil else { throw MeshWireError(.duplicateField, "nickname") }
                nickname = try value.string(length, "nickname")
            case 0x02:
                guard noiseKey == nil else { throw MeshWireError(.duplicateField, "Noise key") }
                guard length == 32 else { throw MeshWireError(.invalidField, "Noise key must be 32 bytes") }
                noiseKey = Array(value.rest())
            case 0x03:
                guard signingKey == nil else { throw MeshWireError(.duplicateField, "signing key") }
                guard length == 32 else { throw MeshWireError(.invalidField, "signing key must be 32 bytes") }
                signingKey = Array(value.rest())
            case 0x04:
                guard neighbors == nil else { throw MeshWireError(.duplicateField, "neighbours") }
                guard length > 0, length % 8 == 0, length <= 80 else { throw MeshWireError(.invalidField, "neighbours") }
                var list: [PeerID] = []
                while !value.isAtEnd { list.append(try value.peerID("neighbour")) }
                neighbors = list
            case 0x05:
                guard capabilities == nil else { throw MeshWireError(.duplicateField, "capabilities") }
                capabilities = PeerCapabilities(decoding: value.rest())
            case 0x06:
                guard geohash == nil else { throw MeshWireError(.duplicateField, "bridge geohash") }
                guard (1...12).contains(length) else { throw MeshWireError(.invalidField, "bridge geohash") }
                geohash = try value.string(length, "bridge geohash")
            default:
                unknown.append(UnknownField(type: type, value: Array(value.rest())))
            }
        }
        guard let nickname else { throw MeshWireError(.missingField, "nickname") }
        guard let noiseKey else { throw MeshWireError(.missingField, "Noise key") }
        guard let signingKey else { throw MeshWireError(.missingField, "signing key") }
        self.init(
            nickname: nickname, noisePublicKey: noiseKey, signingPublicKey: signingKey, directNeighbors: neighbors,
            capabilities: capabilities, bridgeGeohash: geohash, unknownFields: unknown)
    }
}
