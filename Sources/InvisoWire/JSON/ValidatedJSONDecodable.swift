/// A wire type whose one parser is `init(json:)`: its `Decodable` conformance goes through
/// that parser, so decoding with any `Decoder` validates exactly as the server does.
public protocol ValidatedJSONDecodable: Decodable {
    /// Validates a parsed object.
    init(json: JSONObject) throws
}

extension ValidatedJSONDecodable {
    /// Decodes the JSON object and validates it with ``init(json:)``.
    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONObject(from: decoder))
    }
}
