import InvisoFuzzSupport

/// Turns fuzz bytes into a message, mostly by mutating a genuine one so that the fuzzer
/// gets past the length and key checks and reaches the decryption and DH code.
enum MessageShape {
    /// The largest message Noise allows; one byte more must be refused.
    static let maximumMessageLength = 65_535

    /// Builds a message from `genuine` and the remaining input according to `mode`:
    /// 0 the raw bytes; 1 the genuine message XORed with the bytes at an offset (extending
    /// it when they run past the end); 2 a prefix of the genuine message followed by the
    /// bytes; 3 the genuine message with a low-order point written at an offset; 4 the
    /// genuine message padded past the 65,535-byte limit.
    static func make(mode: UInt8, genuine: [UInt8], input: inout FuzzInput) -> [UInt8] {
        switch mode % 5 {
        case 0:
            return input.rest()
        case 1:
            let offset = Int(input.uint16()) % (genuine.count + 1)
            return xor(genuine, with: input.rest(), at: offset)
        case 2:
            let keep = Int(input.uint16()) % (genuine.count + 1)
            return Array(genuine.prefix(keep)) + input.rest()
        case 3:
            let offset = Int(input.byte()) % (genuine.count + 1)
            let point = LowOrderPoints.all[Int(input.byte()) % LowOrderPoints.all.count]
            return overwrite(genuine, with: point, at: offset)
        default:
            let extra = Int(input.byte() % 4)
            let padding = max(0, maximumMessageLength + 1 - genuine.count) + extra
            return genuine + [UInt8](repeating: 0, count: padding)
        }
    }

    /// `base` with `patch` XORed in from `offset`; bytes past the end are appended.
    static func xor(_ base: [UInt8], with patch: [UInt8], at offset: Int) -> [UInt8] {
        var result = base
        for (index, byte) in patch.enumerated() {
            let position = offset + index
            if position < result.count {
                result[position] ^= byte
            } else {
                result.append(byte)
            }
        }
        return result
    }

    /// `base` with `patch` written from `offset`, extending it if needed.
    static func overwrite(_ base: [UInt8], with patch: [UInt8], at offset: Int) -> [UInt8] {
        var result = base
        for (index, byte) in patch.enumerated() {
            let position = offset + index
            if position < result.count {
                result[position] = byte
            } else {
                result.append(byte)
            }
        }
        return result
    }
}
