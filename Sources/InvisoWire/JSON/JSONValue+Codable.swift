// `Codable` for the JSON model, so wire types built on it (relayed signaling messages keep
// fields the server does not know) work with any encoder and decoder. Content round-trips;
// key order survives only where the encoder or decoder keeps it (Foundation's
// `JSONDecoder` does not promise to): the byte-exact path is `JSONValue.parse` and
// `serialized()`.

extension JSONValue: Codable {
    /// Decodes any JSON value. Numbers keep a literal: integers exactly, other numbers as
    /// the shortest text that reads back as the same `Double`.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if (try? decoder.container(keyedBy: JSONKey.self)) != nil {
            self = .object(try JSONObject(from: decoder))
            return
        }
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? value.decode(Int64.self) {
            self = .number(String(integer))
        } else if let double = try? value.decode(Double.self) {
            guard double.isFinite else {
                throw DecodingError.dataCorruptedError(in: value, debugDescription: "JSON numbers are finite")
            }
            self = .number(String(double))
        } else {
            self = .string(try value.decode(String.self))
        }
    }

    /// Encodes the value; a number literal becomes an integer when it is one, else a `Double`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var value = encoder.singleValueContainer()
            try value.encodeNil()
        case .bool(let bool):
            var value = encoder.singleValueContainer()
            try value.encode(bool)
        case .number(let literal):
            var value = encoder.singleValueContainer()
            if let integer = Int64(literal) {
                try value.encode(integer)
            } else if let double = Double(literal), double.isFinite {
                try value.encode(double)
            } else {
                throw EncodingError.invalidValue(
                    literal, .init(codingPath: encoder.codingPath, debugDescription: "not a finite JSON number"))
            }
        case .string(let string):
            var value = encoder.singleValueContainer()
            try value.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let object):
            try object.encode(to: encoder)
        }
    }
}

extension JSONObject: Codable {
    /// Decodes an object, members in the order the decoder lists its keys.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init()
        for key in container.allKeys {
            self[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
    }

    /// Encodes the members in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        for (key, value) in members {
            try container.encode(value, forKey: JSONKey(key))
        }
    }
}

/// A coding key for any object member.
struct JSONKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}
