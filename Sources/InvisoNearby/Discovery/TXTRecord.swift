/// A DNS-SD TXT record: `key=value` attributes, each one length-prefixed string
/// (RFC 6763 §6).
///
/// The wire form is a sequence of strings, each a length byte (0…255) followed by that
/// many bytes: `key` (a boolean attribute, present with no value), `key=` (an empty value)
/// or `key=value` (the value is any bytes up to the string's end). A record with no
/// attribute is a single empty string (one zero byte), as §6.1 requires.
///
/// ``init(decoding:)`` follows §6.4 for a client: a string that starts with `=` (no key)
/// is ignored, and of a key given more than once only the first occurrence counts. Keys are
/// compared case-insensitively (ASCII); a key is printable US-ASCII (0x20…0x7E) without
/// `=`. It checks every length against the bytes that are there and never reads past them.
public struct TXTRecord: Sendable, Hashable {
    /// One attribute in wire order.
    public struct Attribute: Sendable, Hashable {
        /// The key as written (compare with ``TXTRecord/value(for:)``, which ignores case).
        public let key: String
        /// The value; `nil` for a boolean attribute written as the bare key.
        public let value: [UInt8]?
    }

    /// Why a TXT record cannot be built or read.
    public enum Failure: Error, Sendable, Hashable {
        /// A key is empty, contains `=` or a byte outside 0x20…0x7E.
        case invalidKey
        /// A `key=value` string is longer than 255 bytes.
        case attributeTooLong
        /// The whole record is longer than 65,535 bytes (a DNS-SD API limit).
        case recordTooLong
        /// A length byte points past the end of the record.
        case truncated
    }

    /// The attributes in wire order, first occurrences only.
    public private(set) var attributes: [Attribute] = []

    /// An empty record.
    public init() {}

    /// Builds a record from attributes in order.
    ///
    /// - Throws: ``Failure/invalidKey``, ``Failure/attributeTooLong``,
    ///   ``Failure/recordTooLong``; a repeated key (ignoring case) is ``Failure/invalidKey``.
    public init(_ pairs: [(key: String, value: [UInt8]?)]) throws(Failure) {
        for pair in pairs { try set(pair.key, pair.value) }
        guard encoded().count <= Int(UInt16.max) else { throw .recordTooLong }
    }

    /// Reads a record's wire form.
    ///
    /// - Throws: ``Failure/truncated`` when a length runs past the end, and
    ///   ``Failure/recordTooLong`` beyond 65,535 bytes. Strings without a valid key are
    ///   skipped, not refused (§6.4).
    public init(decoding bytes: some Collection<UInt8>) throws(Failure) {
        let bytes = Array(bytes)
        guard bytes.count <= Int(UInt16.max) else { throw .recordTooLong }
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            index += 1
            guard length <= bytes.count - index else { throw .truncated }
            let string = bytes[index..<(index + length)]
            index += length
            let keyBytes = string.prefix { $0 != UInt8(ascii: "=") }
            guard Self.isValidKey(keyBytes) else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard !contains(key) else { continue }
            let value: [UInt8]? = keyBytes.count == string.count ? nil : Array(string[(keyBytes.endIndex + 1)...])
            attributes.append(Attribute(key: key, value: value))
        }
    }

    /// The value of `key` (ignoring ASCII case): `nil` when absent, `[]` for `key=` and for a
    /// boolean attribute (use ``contains(_:)`` to tell those apart from absence).
    public func value(for key: String) -> [UInt8]? {
        guard let attribute = attributes.first(where: { Self.sameKey($0.key, key) }) else { return nil }
        return attribute.value ?? []
    }

    /// The value of `key` as UTF-8 text, if present and valid UTF-8.
    public func string(for key: String) -> String? {
        guard let bytes = value(for: key) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether the record has `key` (ignoring ASCII case).
    public func contains(_ key: String) -> Bool {
        attributes.contains { Self.sameKey($0.key, key) }
    }

    /// Adds an attribute at the end.
    ///
    /// - Throws: ``Failure/invalidKey`` for a bad or repeated key,
    ///   ``Failure/attributeTooLong`` when `key=value` exceeds 255 bytes.
    public mutating func set(_ key: String, _ value: [UInt8]?) throws(Failure) {
        guard Self.isValidKey(key.utf8), !contains(key) else { throw .invalidKey }
        guard key.utf8.count + (value.map { $0.count + 1 } ?? 0) <= 255 else { throw .attributeTooLong }
        attributes.append(Attribute(key: key, value: value))
    }

    /// The wire form (a single zero byte when there is no attribute).
    public func encoded() -> [UInt8] {
        guard !attributes.isEmpty else { return [0] }
        var bytes: [UInt8] = []
        for attribute in attributes {
            var string = Array(attribute.key.utf8)
            if let value = attribute.value {
                string.append(UInt8(ascii: "="))
                string += value
            }
            bytes.append(UInt8(string.count))
            bytes += string
        }
        return bytes
    }

    private static func isValidKey<C: Collection<UInt8>>(_ key: C) -> Bool {
        !key.isEmpty && key.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "=") }
    }

    private static func sameKey(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }
}
