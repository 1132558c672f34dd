/// Standard base64 (RFC 4648 §4, with padding): encoding, and strict decoding that
/// accepts only canonical input (correct padding, zero pad bits, no whitespace). Used on
/// hot wire paths (Inviso v1 frames) where Foundation's `Data` round trip costs more than
/// the cryptography.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()

    /// The base64 text of `bytes`, as ASCII bytes.
    package static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return out
    }

    /// Appends the base64 text of `bytes` to `out`.
    package static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        bytes.withUnsafeBufferPointer { input in
            var index = 0
            while index + 3 <= input.count {
                let group = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                out.append(alphabet[Int(group >> 18 & 0x3F)])
                out.append(alphabet[Int(group >> 12 & 0x3F)])
                out.append(alphabet[Int(group >> 6 & 0x3F)])
                out.append(alphabet[Int(group & 0x3F)])
                index += 3
            }
            let rest = input.count - index
            guard rest > 0 else { return }
            let second = rest == 2 ? UInt32(input[index + 1]) : 0
            let group = UInt32(input[index]) << 16 | second << 8
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(rest == 2 ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
    }

    /// The base64 text of `bytes`.
    package static func encodeString(_ bytes: [UInt8]) -> String {
        String(decoding: encode(bytes), as: UTF8.self)
    }

    /// Decodes canonical padded base64; `nil` for anything else.
    package static func decode(_ text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBufferPointer { decode($0) }
    }

    /// Decodes canonical padded base64 from a buffer; `nil` for anything else.
    package static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let quad = (text[index], text[index + 1], text[index + 2], text[index + 3])
            guard let group = decodeQuad(quad, isLast: index + 4 == text.count) else { return nil }
            out.append(UInt8(group.value >> 16 & 0xFF))
            if group.count > 1 { out.append(UInt8(group.value >> 8 & 0xFF)) }
            if group.count > 2 { out.append(UInt8(group.value & 0xFF)) }
            index += 4
        }
        return out
    }

    /// Decodes base64 text given as a string; `nil` for anything not canonical.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }

    private static func decodeQuad(_ quad: (UInt8, UInt8, UInt8, UInt8), isLast: Bool) -> (value: UInt32, count: Int)? {
        let pad = UInt8(ascii: "=")
        let a = values[Int(quad.0)], b = values[Int(quad.1)]
        guard a != 0xFF, b != 0xFF else { return nil }
        if quad.2 == pad {
            // One byte: "xx==", the low 4 bits of b must be zero.
            guard isLast, quad.3 == pad, b & 0x0F == 0 else { return nil }
            return (UInt32(a) << 18 | UInt32(b) << 12, 1)
        }
        let c = values[Int(quad.2)]
        guard c != 0xFF else { return nil }
        if quad.3 == pad {
            // Two bytes: "xxx=", the low 2 bits of c must be zero.
            guard isLast, c & 0x03 == 0 else { return nil }
            return (UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6, 2)
        }
        let d = values[Int(quad.3)]
        guard d != 0xFF else { return nil }
        return (UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d), 3)
    }
}
