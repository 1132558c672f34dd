public import NIOCore

/// The key every per-source limit counts under: an IPv4 address as is, an IPv6 address cut
/// to its first `ipv6PrefixLength` bits (one host usually holds a whole /64, so keying on
/// the full address would give it 2⁶⁴ budgets). An IPv4-mapped IPv6 address
/// (`::ffff:a.b.c.d`) counts as its IPv4 address.
public enum SourceKey {
    /// The key of `address` (`"unknown"` when there is none, e.g. a Unix socket).
    public static func of(_ address: SocketAddress?, ipv6PrefixLength: Int = 64) -> String {
        switch address {
        case .v4:
            return address?.ipAddress ?? "unknown"
        case .v6(let v6):
            // sockaddr_in6 keeps the 16 address bytes at offset 8 on Linux and on Darwin.
            let bytes = SocketAddress.v6(v6).withSockAddr { pointer, length -> [UInt8] in
                guard length >= 24 else { return [UInt8](repeating: 0, count: 16) }
                return Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(pointer) + 8, count: 16))
            }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return bytes[12..<16].map { String($0) }.joined(separator: ".")
            }
            return prefix(of: bytes, length: ipv6PrefixLength)
        default:
            return "unknown"
        }
    }

    /// `bytes` (16) cut to `length` bits, as hex groups and the length: `2001:0db8:…/64`.
    static func prefix(of bytes: [UInt8], length: Int) -> String {
        let length = max(0, min(128, length))
        var masked = bytes
        for index in 0..<16 {
            let keep = max(0, min(8, length - index * 8))
            masked[index] &= keep == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
        let groups = stride(from: 0, to: 16, by: 2).map { index -> String in
            let value = UInt16(masked[index]) << 8 | UInt16(masked[index + 1])
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 4 - hex.count) + hex
        }
        return groups.joined(separator: ":") + "/\(length)"
    }
}
