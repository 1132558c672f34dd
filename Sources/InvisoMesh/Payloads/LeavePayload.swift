/// The payload of a ``MessageType/leave`` packet.
///
/// BitChat defines no structure: iOS sends it empty, Android's Wi-Fi Aware transport puts
/// the nickname in it as UTF-8 (at most 255 bytes). Source: permissionlesstech/bitchat
/// localPackages/BitFoundation/Sources/BitFoundation/PacketPayloadLimits.swift@c1e5a474e8fbe46489b577432f27cb596212d3d7
/// (the `leave` row of its table).
public struct LeavePayload: Hashable, Sendable {
    /// The leaving peer's nickname; `nil` for an empty payload.
    public var nickname: String?

    /// Creates a leave payload.
    public init(nickname: String? = nil) { self.nickname = nickname }

    /// The wire bytes: empty, or the nickname in UTF-8.
    ///
    /// - Throws: ``MeshWireError/tooLarge`` above 255 bytes, ``MeshWireError/invalidField``
    ///   for an empty nickname (indistinguishable from none).
    public func encoded() throws(MeshWireError) -> [UInt8] {
        guard let nickname else { return [] }
        let bytes = Array(nickname.utf8)
        guard !bytes.isEmpty else { throw MeshWireError(.invalidField, "empty nickname") }
        guard bytes.count <= 255 else { throw MeshWireError(.tooLarge, "nickname") }
        return bytes
    }

    /// Decodes the wire bytes.
    ///
    /// - Throws: ``MeshWireError/tooLarge`` above 255 bytes, ``MeshWireError/invalidUTF8``.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        guard reader.remaining <= 255 else { throw MeshWireError(.tooLarge, "leave payload") }
        nickname = reader.isAtEnd ? nil : try reader.string(reader.remaining, "nickname")
    }
}
