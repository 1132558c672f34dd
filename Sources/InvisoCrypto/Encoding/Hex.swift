/// Lower-case hexadecimal encoding and strict decoding, shared by the package (digest
/// descriptions, the command-line tool, test-vector loaders). Never use it on secrets
/// except where printing them is the point (`inviso noise keygen`).
package enum Hex {
    /// Encodes `bytes` as lower-case hex.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes an array (the usual case) without the generic path: a generic call from
    /// another module makes the runtime look the sequence's iterator up by name on first
    /// use, a scan of every conformance record in the binary.
    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digit(byte >> 4))
        out.append(digit(byte & 0x0f))
    }

    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Decodes an even-length string of hex digits (either case); `nil` for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = value(chars[index]), let low = value(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
