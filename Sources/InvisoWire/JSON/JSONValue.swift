/// A JSON value that keeps what a relay must not change: object keys stay in their order
/// and numbers keep their literal text (a 64-bit timestamp or a float survives a
/// round trip through the server byte for byte).
///
/// Parse with ``JSONValue/parse(_:limits:)``, write with ``JSONValue/serialized()``.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number as its JSON literal (validated by the parser), e.g. `"1.5e3"`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The object, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The array, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The boolean, if this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as an integer, if it is one that fits in `Int` (`3`, `-7`, `3.0` and
    /// `3e2` too); `nil` for fractions, overflow and non-numbers.
    public var integerValue: Int? {
        guard case .number(let literal) = self else { return nil }
        if let value = Int(literal) { return value }
        guard let double = Double(literal), double.rounded() == double, abs(double) < 9.007_199_254_740_992e15 else {
            return nil
        }
        return Int(double)
    }

    /// A number value from an integer.
    public static func integer(_ value: Int) -> JSONValue { .number(String(value)) }
}

/// A JSON object whose keys keep their order. A key appears at most once: the parser
/// rejects duplicate keys (two parsers could otherwise read two different messages).
public struct JSONObject: Sendable, Hashable {
    /// The members in order.
    public private(set) var members: [(key: String, value: JSONValue)]

    /// An empty object.
    public init() {
        members = []
    }

    /// An object with these members (later duplicates replace earlier ones).
    public init(_ members: [(String, JSONValue)]) {
        self.members = []
        for (key, value) in members { self[key] = value }
    }

    /// The value for `key`; setting `nil` removes the key, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// Member-wise equality in order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes keys and values in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
