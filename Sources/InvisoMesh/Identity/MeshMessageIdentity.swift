import Crypto

/// The stable ID of a public mesh message, computed by every device from the signed wire
/// fields, since public messages carry no ID on the wire.
///
/// Rule: the first 32 lowercase hex characters (16 bytes) of SHA-256 over the UTF-8 string
/// `senderIDHex.lowercased() + "|" + decimal timestampMs + "|" + content trimmed of
/// leading and trailing whitespace and newlines`. Source: permissionlesstech/bitchat
/// bitchat/Protocols/MeshMessageIdentity.swift@3f7dcf2a225e00ecbf35eff52dc0e512779dbbf9;
/// pinned by bitchatTests/Protocols/BridgeWireFormatTests.swift@9b84b361225facd8e623f25d76f889d3dc54a879
/// (vector `mesh_message_identity_pinned`).
public struct MeshMessageIdentity: Hashable, Sendable, CustomStringConvertible {
    /// 32 lowercase hex characters.
    public let rawValue: String

    /// The ID of a message from `senderIDHex` at `timestampMs` with `content`.
    public init(senderIDHex: String, timestampMs: UInt64, content: String) {
        let input = senderIDHex.lowercased() + "|" + String(timestampMs) + "|" + Self.trimmed(content)
        let digest = SHA256.hash(data: Array(input.utf8))
        var hex = ""
        hex.reserveCapacity(32)
        for byte in digest.prefix(16) {
            hex.append(Self.hexDigits[Int(byte >> 4)])
            hex.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        rawValue = hex
    }

    /// The ID of a message from `sender` (its 16-hex-digit form) at `timestampMs`.
    public init(sender: PeerID, timestampMs: UInt64, content: String) {
        self.init(senderIDHex: sender.description, timestampMs: timestampMs, content: content)
    }

    /// Milliseconds from seconds since the epoch, truncated as BitChat does
    /// (`UInt64(seconds * 1000)`): 1000.9996 s gives 1,000,999 ms. Negative or non-finite
    /// input gives 0.
    public static func milliseconds(sinceEpochSeconds seconds: Double) -> UInt64 {
        let value = seconds * 1000
        guard value.isFinite, value > 0 else { return 0 }
        return value >= 0x1p64 ? .max : UInt64(value)
    }

    /// The 32 hex characters.
    public var description: String { rawValue }

    private static let hexDigits = Array("0123456789abcdef")

    /// Drops leading and trailing Unicode whitespace and newlines (the scalar set of
    /// Foundation's `.whitespacesAndNewlines`: White_Space, which includes U+0085, U+2028
    /// and U+2029).
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
