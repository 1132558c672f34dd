/// A big-endian cursor over wire bytes that checks every length before it reads.
///
/// Every decoder in this module reads through one of these, so "is the byte there?" is
/// answered in one place. Reads past the end throw ``MeshWireError/truncated`` and leave
/// the cursor where it was. The storage is an `ArraySlice`, whose subscript is bounds
/// checked in every build configuration.
struct WireReader {
    private let storage: ArraySlice<UInt8>
    private(set) var position: Int

    /// A reader over `bytes`. `[UInt8]` and `ArraySlice<UInt8>` are used without copying;
    /// any other collection is copied once.
    init(_ bytes: some Collection<UInt8>) {
        if let slice = bytes as? ArraySlice<UInt8> {
            storage = slice
        } else if let array = bytes as? [UInt8] {
            storage = array[...]
        } else {
            storage = Array(bytes)[...]
        }
        position = storage.startIndex
    }

    /// Bytes not yet read.
    var remaining: Int { storage.endIndex - position }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == storage.endIndex }

    /// Throws ``MeshWireError/truncated`` unless `count` more bytes are there.
    func require(_ count: Int, _ what: StaticString) throws(MeshWireError) {
        guard count >= 0, count <= remaining else { throw MeshWireError(.truncated, "\(what)") }
    }

    mutating func u8(_ what: StaticString) throws(MeshWireError) -> UInt8 {
        try require(1, what)
        defer { position += 1 }
        return storage[position]
    }

    mutating func u16(_ what: StaticString) throws(MeshWireError) -> UInt16 {
        UInt16(truncatingIfNeeded: try uint(2, what))
    }

    mutating func u32(_ what: StaticString) throws(MeshWireError) -> UInt32 {
        UInt32(truncatingIfNeeded: try uint(4, what))
    }

    mutating func u64(_ what: StaticString) throws(MeshWireError) -> UInt64 {
        try uint(8, what)
    }

    /// A big-endian unsigned integer of `width` (1…8) bytes.
    mutating func uint(_ width: Int, _ what: StaticString) throws(MeshWireError) -> UInt64 {
        try require(width, what)
        var value: UInt64 = 0
        for index in position..<(position + width) { value = value << 8 | UInt64(storage[index]) }
        position += width
        return value
    }

    /// The next `count` bytes, as a slice of the input (no copy).
    mutating func slice(_ count: Int, _ what: StaticString) throws(MeshWireError) -> ArraySlice<UInt8> {
        try require(count, what)
        defer { position += count }
        return storage[position..<(position + count)]
    }

    /// The next `count` bytes, copied.
    mutating func bytes(_ count: Int, _ what: StaticString) throws(MeshWireError) -> [UInt8] {
        Array(try slice(count, what))
    }

    /// The next 8 bytes as a peer ID.
    mutating func peerID(_ what: StaticString) throws(MeshWireError) -> PeerID {
        PeerID(rawValue: try u64(what))
    }

    /// The next `count` bytes decoded as UTF-8; invalid UTF-8 throws
    /// ``MeshWireError/invalidUTF8``.
    mutating func string(_ count: Int, _ what: StaticString) throws(MeshWireError) -> String {
        try WireText.decode(try slice(count, what), what)
    }

    /// Everything not yet read, as a slice.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = storage.endIndex }
        return storage[position...]
    }

    /// Throws ``MeshWireError/trailingBytes`` unless every byte has been read.
    func finish(_ what: StaticString) throws(MeshWireError) {
        guard isAtEnd else { throw MeshWireError(.trailingBytes, "\(what)") }
    }
}

/// Strict UTF-8 for text fields: decoding rejects invalid sequences instead of repairing
/// them, so a decoded string re-encodes to the same bytes.
enum WireText {
    static func decode(_ bytes: ArraySlice<UInt8>, _ what: StaticString) throws(MeshWireError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MeshWireError(.invalidUTF8, "\(what)")
        }
        return text
    }
}

// MARK: - Writing

extension Array where Element == UInt8 {
    /// Appends `value` as `width` big-endian bytes (the caller has checked it fits).
    mutating func appendBigEndian(_ value: some FixedWidthInteger, width: Int) {
        let wide = UInt64(truncatingIfNeeded: value)
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: wide >> UInt64(shift)))
        }
    }

    /// Appends an 8-byte peer ID.
    mutating func append(_ peer: PeerID) {
        appendBigEndian(peer.rawValue, width: 8)
    }
}
