/// The plaintext of a Noise transport message (``MessageType/noiseEncrypted``): one
/// ``NoisePayloadType`` byte, then the typed body.
///
/// Source: permissionlesstech/bitchat bitchat/Models/NoisePayload.swift@2baed6903fc04dbd901cb24ee266002321de194e.
/// Receipts (0x02, 0x03) and the other bodies are kept as opaque ``data``.
public struct NoisePayload: Hashable, Sendable {
    /// What ``data`` is.
    public var type: NoisePayloadType
    /// The body.
    public var data: [UInt8]

    /// Creates a payload.
    public init(type: NoisePayloadType, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// The wire bytes: the type byte, then ``data``.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [type.rawValue]
        out.append(contentsOf: data)
        return out
    }

    /// Decodes the wire bytes; the prerelease type 0x09 becomes ``NoisePayloadType/fileTransfer``.
    ///
    /// - Throws: ``MeshWireError/truncated`` for empty input.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        type = NoisePayloadType(rawValue: try reader.u8("Noise payload type"))
        data = Array(reader.rest())
    }
}
