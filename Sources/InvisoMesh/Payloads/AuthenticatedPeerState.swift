/// The Noise payload `0x21` (``NoisePayloadType/authenticatedPeerState``): capabilities and
/// signing key, proven by arriving inside an established Noise session (unlike the public
/// announce, which anyone can copy).
///
/// Wire format: version byte `0x01`, then TLVs (type u8, length u8, value):
/// `0x01` capabilities (canonical minimal little-endian, 1…8 bytes), `0x02` the 32-byte
/// Ed25519 signing key, optional `0x03` the largest fragment count the peer reassembles
/// (u16 big-endian, non-zero). Unknown TLVs are skipped; an unknown version, a duplicate,
/// a non-canonical capability field or a bad length is rejected. Sources:
/// permissionlesstech/bitchat bitchat/Protocols/Packets.swift (stored version with TLV 0x03;
/// the golden README cites Packets.swift@9b84b361225facd8e623f25d76f889d3dc54a879) and
/// permissionlesstech/bitchat-android
/// app/src/test/kotlin/com/bitchat/android/model/AuthenticatedPeerStateTest.kt@09b481f1ef5852ed50edce987dd719bd9588b125.
public struct AuthenticatedPeerState: Hashable, Sendable {
    /// The only version defined.
    public static let currentVersion: UInt8 = 1

    /// The peer's feature bits.
    public var capabilities: PeerCapabilities
    /// The peer's 32-byte Ed25519 signing public key.
    public var signingPublicKey: [UInt8]
    /// How many fragments of one packet the peer reassembles; `nil` when not advertised.
    public var maxReassemblyFragments: UInt16?

    /// Creates a peer state.
    public init(capabilities: PeerCapabilities, signingPublicKey: [UInt8], maxReassemblyFragments: UInt16? = nil) {
        self.capabilities = capabilities
        self.signingPublicKey = signingPublicKey
        self.maxReassemblyFragments = maxReassemblyFragments
    }

    /// The wire bytes (without the Noise payload type byte).
    ///
    /// - Throws: ``MeshWireError/invalidField`` when the key is not 32 bytes or
    ///   ``maxReassemblyFragments`` is 0.
    public func encoded() throws(MeshWireError) -> [UInt8] {
        guard signingPublicKey.count == 32 else { throw MeshWireError(.invalidField, "signing key must be 32 bytes") }
        let capabilityBytes = capabilities.encoded()
        var out: [UInt8] = [Self.currentVersion, 0x01, UInt8(capabilityBytes.count)]
        out.append(contentsOf: capabilityBytes)
        out.append(contentsOf: [0x02, 32])
        out.append(contentsOf: signingPublicKey)
        if let maxReassemblyFragments {
            guard maxReassemblyFragments > 0 else { throw MeshWireError(.invalidField, "fragment ceiling 0") }
            out.append(contentsOf: [0x03, 2])
            out.appendBigEndian(maxReassemblyFragments, width: 2)
        }
        return out
    }

    /// Decodes the wire bytes (without the Noise payload type byte).
    ///
    /// - Throws: ``MeshWireError/invalidField`` (unknown version, bad lengths, non-canonical
    ///   capabilities, fragment ceiling 0), ``MeshWireError/duplicateField``,
    ///   ``MeshWireError/missingField``, ``MeshWireError/truncated``.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        guard try reader.u8("version") == Self.currentVersion else {
            throw MeshWireError(.invalidField, "peer state version")
        }
        var capabilities: PeerCapabilities?
        var signingKey: [UInt8]?
        var ceiling: UInt16?
        while !reader.isAtEnd {
            let type = try reader.u8("TLV type")
            let value = try reader.slice(Int(try reader.u8("TLV length")), "TLV value")
            switch type {
            case 0x01:
                guard capabilities == nil else { throw MeshWireError(.duplicateField, "capabilities") }
                capabilities = try PeerCapabilities(canonicalEncoding: value)
            case 0x02:
                guard signingKey == nil else { throw MeshWireError(.duplicateField, "signing key") }
                guard value.count == 32 else { throw MeshWireError(.invalidField, "signing key must be 32 bytes") }
                signingKey = Array(value)
            case 0x03:
                guard ceiling == nil else { throw MeshWireError(.duplicateField, "fragment ceiling") }
                guard value.count == 2 else { throw MeshWireError(.invalidField, "fragment ceiling length") }
                let decoded = UInt16(value[value.startIndex]) << 8 | UInt16(value[value.startIndex + 1])
                guard decoded > 0 else { throw MeshWireError(.invalidField, "fragment ceiling 0") }
                ceiling = decoded
            default:
                continue
            }
        }
        guard let capabilities else { throw MeshWireError(.missingField, "capabilities") }
        guard let signingKey else { throw MeshWireError(.missingField, "signing key") }
        self.init(capabilities: capabilities, signingPublicKey: signingKey, maxReassemblyFragments: ceiling)
    }
}
