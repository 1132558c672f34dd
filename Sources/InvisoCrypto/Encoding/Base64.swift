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
    package static func encode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(group >> 18 & 0x3F)])
            out.append(alphabet[Int(group >> 12 & 0x3F)])
            out.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)])
            out.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)])
        }
        return out
    }

    /// The base64 text of `bytes`.
    package static func encodeString(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: encode(bytes), as: UTF8.self)
    }

    /// Decodes canonical padded base64; `nil` for anything else.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var quad: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        var index = 0
        let total = text.count
        for char in text {
            switch index % 4 {
            case 0: quad.0 = char
            case 1: quad.1 = char
            case 2: quad.2 = char
            default:
                quad.3 = char
                let isLast = index == total - 1
                guard let group = decodeQuad(quad, isLast: isLast) else { return nil }
                out.append(UInt8(group.value >> 16 & 0xFF))
                if group.count > 1 { out.append(UInt8(group.value >> 8 & 0xFF)) }
                if group.count > 2 { out.append(UInt8(group.value & 0xFF)) }
            }
            index += 1
        }
        return out
    }

    /// Decodes base64 text given as a string; `nil` for anything not canonical.
    package static func decode(_ text: String) -> [UInt8]? {
        decode(Array(text.utf8))
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
