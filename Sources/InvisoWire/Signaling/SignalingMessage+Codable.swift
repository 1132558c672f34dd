// `Codable` for the signaling messages: a message encodes as its JSON object and decodes
// with the same validation as `parse` (a refused client message is a `DecodingError`
// whose description is the error text the server would send).

extension ClientMessage: Codable {
    public init(from decoder: any Decoder) throws {
        let object = try JSONObject(from: decoder)
        do {
            self = try ClientMessage.parse(object)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try object.encode(to: encoder)
    }
}

extension ServerMessage: Codable {
    public init(from decoder: any Decoder) throws {
        self = ServerMessage.parse(try JSONObject(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try object.encode(to: encoder)
    }
}

extension ServerMessage {
    /// A message the other member sent, as the server forwarded it: its kind, the sender's
    /// connection id (`from`) and the room; `nil` for the server's own messages and
    /// unknown types.
    public var relayedKind: RelayKind? {
        guard case .relayed(let object) = self, let type = object["type"]?.stringValue else { return nil }
        return RelayKind(rawValue: type)
    }

    /// The typed body of a relayed message.
    ///
    /// - Throws: ``SignalingError/unknownType(_:)`` when this is not a relayed `P`, or the
    ///   field error when its body does not read as `P`.
    public func payload<P: RelayPayload>(as type: P.Type) throws(SignalingError) -> P {
        guard case .relayed(let object) = self, relayedKind == P.kind else {
            throw .unknownType(relayedKind?.rawValue ?? "")
        }
        return try P(json: object)
    }

    /// The sender's connection id on a relayed message.
    public var relayedFrom: String? {
        guard case .relayed(let object) = self else { return nil }
        return object["from"]?.stringValue
    }
}
