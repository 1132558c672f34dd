// MARK: - Codable

extension PeerID: Codable {
    /// Decodes 16 hex characters.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let hex = try container.decode(String.self)
        guard let id = PeerID(hex: hex) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a peer ID is 16 hex characters")
        }
        self = id
    }

    /// Encodes as 16 lowercase hex characters.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
