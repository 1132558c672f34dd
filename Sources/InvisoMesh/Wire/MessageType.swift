/// The outer packet's type byte (BitChat's `MessageType`). Unknown values are kept, so a
/// relay can forward packet types it does not understand.
public struct MessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire byte.
    public let rawValue: UInt8

    /// Wraps a wire byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Signed identity announcement (nickname, Noise key, signing key, capabilities).
    public static let announce = MessageType(rawValue: 0x01)
    /// Public chat message (a `BitchatMessage` payload).
    public static let message = MessageType(rawValue: 0x02)
    /// A peer leaving.
    public static let leave = MessageType(rawValue: 0x03)
    /// A Noise handshake message.
    public static let noiseHandshake = MessageType(rawValue: 0x10)
    /// A Noise transport message; its plaintext starts with a ``NoisePayloadType`` byte.
    public static let noiseEncrypted = MessageType(rawValue: 0x11)
    /// One fragment of a larger packet.
    public static let fragment = MessageType(rawValue: 0x20)
    /// Gossip sync: the packets the sender already has.
    public static let requestSync = MessageType(rawValue: 0x21)
    /// A file transfer (file TLVs).
    public static let fileTransfer = MessageType(rawValue: 0x22)

    /// The type's name, or its hex byte.
    public var description: String {
        switch self {
        case .announce: "announce"
        case .message: "message"
        case .leave: "leave"
        case .noiseHandshake: "noiseHandshake"
        case .noiseEncrypted: "noiseEncrypted"
        case .fragment: "fragment"
        case .requestSync: "requestSync"
        case .fileTransfer: "fileTransfer"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}
