import InvisoKit

/// Reads big-endian fields from a byte array, checking every length before reading.
/// Every failure is ``NearbyError/Code/malformed`` with the field's name.
struct ByteReader {
    private let bytes: [UInt8]
    private var index: Int

    init(_ bytes: [UInt8], from index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    var isAtEnd: Bool { index == bytes.count }
    var remaining: Int { bytes.count - index }

    mutating func byte(_ field: String) throws(NearbyError) -> UInt8 {
        guard remaining >= 1 else { throw NearbyError(.malformed, field) }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func bytes(_ count: Int, _ field: String) throws(NearbyError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw NearbyError(.malformed, field) }
        defer { index += count }
        return Array(bytes[index..<(index + count)])
    }

    mutating func uint16(_ field: String) throws(NearbyError) -> UInt16 {
        let raw = try bytes(2, field)
        return UInt16(raw[0]) << 8 | UInt16(raw[1])
    }

    mutating func uint32(_ field: String) throws(NearbyError) -> UInt32 {
        try bytes(4, field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64(_ field: String) throws(NearbyError) -> UInt64 {
        try bytes(8, field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A `uint16` length, then that many bytes (at most `limit`).
    mutating func lengthPrefixed(_ field: String, limit: Int) throws(NearbyError) -> [UInt8] {
        let count = Int(try uint16(field))
        guard count <= limit else { throw NearbyError(.malformed, field) }
        return try bytes(count, field)
    }

    /// A `uint32` length, then that many bytes (at most `limit`).
    mutating func longLengthPrefixed(_ field: String, limit: Int) throws(NearbyError) -> [UInt8] {
        let count = try uint32(field)
        guard count <= UInt32(limit) else { throw NearbyError(.malformed, field) }
        return try bytes(Int(count), field)
    }

    /// A `uint16`-prefixed UTF-8 string of at most `limit` bytes.
    mutating func text(_ field: String, limit: Int) throws(NearbyError) -> String {
        let raw = try lengthPrefixed(field, limit: limit)
        guard let text = String(validating: raw, as: UTF8.self) else { throw NearbyError(.malformed, field) }
        return text
    }

    /// A 16-byte file transfer id.
    mutating func transferID() throws(NearbyError) -> FileTransferID {
        let bytes = try bytes(16, "transfer id")
        do {
            return try FileTransferID(bytes)
        } catch {
            throw NearbyError(.malformed, "transfer id")
        }
    }

    /// Succeeds only when every byte was read.
    func finish(_ field: String) throws(NearbyError) {
        guard isAtEnd else { throw NearbyError(.malformed, "\(field): trailing bytes") }
    }
}

/// Writes big-endian fields.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func append(_ raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }
    mutating func uint16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    mutating func uint32(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    mutating func uint64(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
    mutating func lengthPrefixed(_ raw: [UInt8]) {
        precondition(raw.count <= Int(UInt16.max))
        uint16(UInt16(raw.count))
        bytes += raw
    }
    mutating func longLengthPrefixed(_ raw: [UInt8]) {
        uint32(UInt32(raw.count))
        bytes += raw
    }
    mutating func text(_ value: String) { lengthPrefixed(Array(value.utf8)) }
}
