/// A minimal protobuf (proto2) encoder for the handful of messages libsignal puts on the
/// wire and the records we store.
///
/// Callers write fields in ascending field-number order, as prost (libsignal's encoder)
/// does, so our bytes match libsignal's byte for byte. Optional fields that are absent are
/// simply not written; present fields are written even when zero or empty (proto2).
package struct ProtobufWriter: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// A writer whose buffer has room for `capacity` bytes (no regrowth for known sizes).
    package init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends bytes that are not a field (a version byte before the protobuf, a MAC after).
    package mutating func appendRaw(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    /// Appends one byte that is not a field.
    package mutating func appendRaw(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// The number of bytes written so far.
    package var count: Int { bytes.count }

    /// The bytes written, handing over the buffer without a copy.
    package consuming func finish() -> [UInt8] {
        bytes
    }

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func tag(_ field: UInt32, wireType: UInt8) {
        varint(UInt64(field) << 3 | UInt64(wireType))
    }

    /// Writes a `uint32`/`uint64`/`bool` field (wire type 0).
    package mutating func writeVarint(_ field: UInt32, _ value: UInt64) {
        tag(field, wireType: 0)
        varint(value)
    }

    /// Writes a `uint32` field (wire type 0).
    package mutating func writeUInt32(_ field: UInt32, _ value: UInt32) {
        writeVarint(field, UInt64(value))
    }

    /// Writes a `bool` field (wire type 0).
    package mutating func writeBool(_ field: UInt32, _ value: Bool) {
        writeVarint(field, value ? 1 : 0)
    }

    /// Writes a `bytes`/`string`/embedded-message field (wire type 2).
    package mutating func writeBytes(_ field: UInt32, _ value: some Collection<UInt8>) {
        tag(field, wireType: 2)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Writes a `bytes` field holding a key's 33-byte serialized form, without building
    /// the array first.
    package mutating func writeKey(_ field: UInt32, _ key: ECPublicKey) {
        tag(field, wireType: 2)
        varint(UInt64(ECPublicKey.serializedByteCount))
        bytes.append(ECPublicKey.typeByte)
        key.withUnsafeRawBytes { bytes.append(contentsOf: $0) }
    }

    /// Writes an embedded message built by `body`.
    package mutating func writeMessage(_ field: UInt32, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        writeBytes(field, inner.bytes)
    }

    /// Writes a `fixed64` field (wire type 1), little-endian.
    package mutating func writeFixed64(_ field: UInt32, _ value: UInt64) {
        tag(field, wireType: 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
