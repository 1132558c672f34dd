/// Checks that bytes are well-formed UTF-8 (RFC 3629 §4): no overlong forms, no
/// surrogates (U+D800–U+DFFF), nothing above U+10FFFF, no truncated sequence. It
/// allocates nothing, so a server can use it on every close frame or failed parse.
public enum UTF8Validation {
    /// Whether `bytes` is well-formed UTF-8.
    public static func isValid(_ bytes: some Sequence<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        while let lead = iterator.next() {
            if lead < 0x80 { continue }
            // The continuation count and the allowed range of the first continuation byte
            // (Table 3-7 of the Unicode standard, the same as RFC 3629's ABNF).
            let count: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: count = 1
            case 0xE0: count = 2; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: count = 2
            case 0xED: count = 2; high = 0x9F
            case 0xF0: count = 3; low = 0x90
            case 0xF1...0xF3: count = 3
            case 0xF4: count = 3; high = 0x8F
            default: return false  // 0x80–0xC1 (continuation or overlong lead), 0xF5–0xFF
            }
            for index in 0..<count {
                guard let byte = iterator.next() else { return false }
                let (min, max): (UInt8, UInt8) = index == 0 ? (low, high) : (0x80, 0xBF)
                guard byte >= min && byte <= max else { return false }
            }
        }
        return true
    }
}
