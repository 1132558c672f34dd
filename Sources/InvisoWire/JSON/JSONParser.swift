/// Why a JSON text was refused.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset where parsing stopped.
    public let offset: Int
    /// What was wrong (never the input's content).
    public let reason: String

    /// A short explanation with the offset.
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Limits on what ``parse(_:limits:)`` accepts.
    public struct ParseLimits: Sendable {
        /// The deepest nesting of arrays and objects.
        public var maxDepth: Int
        /// The most members or elements in one object or array.
        public var maxContainerCount: Int

        /// The defaults: depth 32, 4,096 members per container.
        public static let `default` = ParseLimits(maxDepth: 32, maxContainerCount: 4_096)

        /// Creates limits.
        public init(maxDepth: Int, maxContainerCount: Int) {
            self.maxDepth = maxDepth
            self.maxContainerCount = maxContainerCount
        }
    }

    /// Parses one JSON text (RFC 8259) from UTF-8 bytes: one value, optional whitespace
    /// around it, nothing else. Strings must be valid UTF-8 without raw control characters
    /// and without unpaired surrogate escapes; duplicate object keys are refused.
    ///
    /// - Throws: ``JSONError``.
    public static func parse(_ bytes: some Collection<UInt8>, limits: ParseLimits = .default) throws(JSONError) -> JSONValue {
        try parse(Array(bytes), limits: limits)
    }

    /// Parses one JSON text from a byte array (the same rules; no generic dispatch, for hot
    /// paths).
    ///
    /// - Throws: ``JSONError``.
    public static func parse(_ array: [UInt8], limits: ParseLimits = .default) throws(JSONError) -> JSONValue {
        try array.withUnsafeBufferPointer { buffer throws(JSONError) in
            var parser = JSONParser(input: buffer, limits: limits)
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("trailing characters") }
            return value
        }
    }

    /// Parses a JSON text given as a string.
    public static func parse(_ text: String, limits: ParseLimits = .default) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }
}

/// A recursive-descent parser over a byte buffer; every read checks the bounds first.
struct JSONParser {
    let input: UnsafeBufferPointer<UInt8>
    let limits: JSONValue.ParseLimits
    var index = 0

    init(input: UnsafeBufferPointer<UInt8>, limits: JSONValue.ParseLimits) {
        self.input = input
        self.limits = limits
    }

    func error(_ reason: String) -> JSONError {
        JSONError(offset: index, reason: reason)
    }

    var current: UInt8? { index < input.count ? input[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d { index += 1 }
    }

    mutating func expect(_ literal: String) throws(JSONError) {
        for byte in literal.utf8 {
            guard current == byte else { throw error("bad literal") }
            index += 1
        }
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end") }
        switch byte {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONObject {
        guard depth <= limits.maxDepth else { throw error("nesting too deep") }
        index += 1  // {
        var object = JSONObject()
        var seen = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return object
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            guard seen.insert(key).inserted else { throw error("duplicate key") }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let member = try value(depth: depth)
            guard object.count < limits.maxContainerCount else { throw error("too many members") }
            object[key] = member
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return object
            default: throw error("expected ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONError) -> [JSONValue] {
        guard depth <= limits.maxDepth else { throw error("nesting too deep") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipWhitespace()
            guard elements.count < limits.maxContainerCount else { throw error("too many elements") }
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return elements
            default: throw error("expected ',' or ']'")
            }
        }
    }

    mutating func number() throws(JSONError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("bad number")
        }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard try digitsFollow() else { throw error("bad fraction") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard try digitsFollow() else { throw error("bad exponent") }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
    }

    mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }

    mutating func digitsFollow() throws(JSONError) -> Bool {
        let start = index
        skipDigits()
        return index > start
    }

    mutating func string() throws(JSONError) -> String {
        index += 1  // opening quote
        var bytes: [UInt8] = []
        while true {
            guard let byte = current else { throw error("unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw JSONError(offset: index, reason: "string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &bytes)
            case 0..<0x20:
                throw JSONError(offset: index - 1, reason: "control character in string")
            default:
                bytes.append(byte)
            }
        }
    }

    mutating func escape(into bytes: inout [UInt8]) throws(JSONError) {
        guard let byte = current else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(byte)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0c)
        case UInt8(ascii: "n"): bytes.append(0x0a)
        case UInt8(ascii: "r"): bytes.append(0x0d)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hex4())
            if (0xd800..<0xdc00).contains(scalar) {
                guard input.count - index >= 2, input[index] == UInt8(ascii: "\\"), input[index + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate") }
                index += 2
                let low = UInt32(try hex4())
                guard (0xdc00..<0xe000).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
            } else if (0xdc00..<0xe000).contains(scalar) {
                throw error("unpaired surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("bad escape") }
            bytes.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("bad escape")
        }
    }

    mutating func hex4() throws(JSONError) -> UInt16 {
        guard input.count - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = input[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("bad \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}
