/// A cursor over one fuzz input. Reads past the end yield zeros / empty arrays, so every
/// byte string is a valid input and the harness never has to reject one.
package struct FuzzInput {
    private var remaining: ArraySlice<UInt8>

    package init(_ bytes: [UInt8]) {
        remaining = bytes[...]
    }

    /// Whether every byte has been consumed.
    package var isEmpty: Bool { remaining.isEmpty }

    /// The next byte, or 0 once the input is exhausted.
    package mutating func byte() -> UInt8 {
        remaining.popFirst() ?? 0
    }

    /// Up to `count` next bytes (fewer at the end of the input).
    package mutating func take(_ count: Int) -> [UInt8] {
        let chunk = Array(remaining.prefix(count))
        remaining = remaining.dropFirst(count)
        return chunk
    }

    /// A big-endian 16-bit value.
    package mutating func uint16() -> UInt16 {
        UInt16(byte()) << 8 | UInt16(byte())
    }

    /// A big-endian 32-bit value.
    package mutating func uint32() -> UInt32 {
        UInt32(uint16()) << 16 | UInt32(uint16())
    }

    /// A length-prefixed chunk: one length byte, then that many bytes.
    package mutating func chunk() -> [UInt8] {
        take(Int(byte()))
    }

    /// Everything not yet consumed.
    package mutating func rest() -> [UInt8] {
        defer { remaining = [] }
        return Array(remaining)
    }
}
