/// A minimal, strict protobuf decoder: one pass over the fields of one message.
///
/// Every length is checked before it is read. Groups (wire types 3 and 4), field number 0,
/// varints longer than ten bytes and lengths that run past the end are rejected with
/// ``SignalError/invalidMessage``. Unknown fields are returned to the caller, which skips
/// them (protobuf's forward-compatibility rule); a repeated scalar field keeps its last value.
package struct ProtobufReader: Sendable {
    /// One decoded field value.
    package enum Value: Sendable {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    private let input: ArraySlice<UInt8>
    private var index: Int

    package init(_ input: ArraySlice<UInt8>) {
        self.input = input
        self.index = input.startIndex
    }

    package init(_ input: [UInt8]) {
        self.init(input[...])
    }

    private mutating func readVarint() throws(SignalError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < input.endIndex, shift < 64 else { throw SignalError(.invalidMessage, "bad varint") }
            let byte = input[index]
            index += 1
            if shift == 63 && byte > 1 { throw SignalError(.invalidMessage, "varint overflow") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    private mutating func readFixed(_ count: Int) throws(SignalError) -> UInt64 {
        guard input.endIndex - index >= count else { throw SignalError(.invalidMessage, "truncated field") }
        var value: UInt64 = 0
        for offset in 0..<count { value |= UInt64(input[index + offset]) << UInt64(8 * offset) }
        index += count
        return value
    }

    /// Returns the next field, or `nil` at the end of the input.
    package mutating func next() throws(SignalError) -> (field: UInt32, value: Value)? {
        guard index < input.endIndex else { return nil }
        let key = try readVarint()
        let field = key >> 3
        guard field != 0, field <= UInt64(UInt32.max >> 3) else { throw SignalError(.invalidMessage, "bad field number") }
        switch key & 7 {
        case 0:
            return (UInt32(field), .varint(try readVarint()))
        case 1:
            return (UInt32(field), .fixed64(try readFixed(8)))
        case 2:
            let length = try readVarint()
            guard length <= UInt64(input.endIndex - index) else { throw SignalError(.invalidMessage, "length past end") }
            let start = index
            index += Int(length)
            return (UInt32(field), .bytes(input[start..<index]))
        case 5:
            return (UInt32(field), .fixed32(UInt32(try readFixed(4))))
        default:
            throw SignalError(.invalidMessage, "unsupported wire type")
        }
    }
}

extension ProtobufReader.Value {
    /// The value as a `uint32`; a wrong wire type or a value above `UInt32.max` is malformed.
    package func uint32() throws(SignalError) -> UInt32 {
        guard case .varint(let value) = self, value <= UInt64(UInt32.max) else {
            throw SignalError(.invalidMessage, "expected uint32")
        }
        return UInt32(value)
    }

    /// The value as a `uint64`.
    package func uint64() throws(SignalError) -> UInt64 {
        switch self {
        case .varint(let value), .fixed64(let value): return value
        default: throw SignalError(.invalidMessage, "expected uint64")
        }
    }

    /// The value as a `bool`.
    package func bool() throws(SignalError) -> Bool {
        guard case .varint(let value) = self else { throw SignalError(.invalidMessage, "expected bool") }
        return value != 0
    }

    /// The value as `bytes` (copied out of the input).
    package func bytes() throws(SignalError) -> [UInt8] {
        guard case .bytes(let value) = self else { throw SignalError(.invalidMessage, "expected bytes") }
        return Array(value)
    }

    /// The value as an embedded message's bytes, without copying.
    package func slice() throws(SignalError) -> ArraySlice<UInt8> {
        guard case .bytes(let value) = self else { throw SignalError(.invalidMessage, "expected message") }
        return value
    }
}
