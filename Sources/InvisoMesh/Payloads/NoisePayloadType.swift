/// The first byte of a Noise transport plaintext, saying what follows (BitChat's
/// `NoisePayloadType`). Unknown values are kept so that callers can decide; both BitChat
/// clients drop them.
///
/// Values: permissionlesstech/bitchat bitchat/Protocols/BitchatProtocol.swift (stored
/// version with `prereleasePrivateFileRawValue`; the golden README cites it
/// @9b84b361225facd8e623f25d76f889d3dc54a879 line 104) and permissionlesstech/bitchat-android
/// app/src/main/java/com/bitchat/android/model/NoiseEncrypted.kt. Android defines 0x01–0x03,
/// 0x08, 0x10, 0x11, 0x20 and 0x21; iOS also 0x06, 0x07 and 0x12.
public struct NoisePayloadType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The wire byte; never the prerelease alias 0x09 (see ``init(rawValue:)``).
    public let rawValue: UInt8

    /// Wraps a wire byte, mapping the prerelease file-transfer value 0x09 to
    /// ``fileTransfer`` (0x20), as both clients do on decode, so 0x09 is never sent.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue == Self.prereleaseFileTransferValue ? 0x20 : rawValue
    }

    /// The value a prerelease build briefly used for private files: accepted on decode as
    /// ``fileTransfer``, never sent.
    public static let prereleaseFileTransferValue: UInt8 = 0x09

    /// 0x01: a private chat message (``PrivateMessagePacket``).
    public static let privateMessage = NoisePayloadType(rawValue: 0x01)
    /// 0x02: read receipt for a private message.
    public static let readReceipt = NoisePayloadType(rawValue: 0x02)
    /// 0x03: delivery receipt for a private message.
    public static let delivered = NoisePayloadType(rawValue: 0x03)
    /// 0x06: creator-signed group state, invite (iOS only).
    public static let groupInvite = NoisePayloadType(rawValue: 0x06)
    /// 0x07: creator-signed group state, key rotation or roster update (iOS only).
    public static let groupKeyUpdate = NoisePayloadType(rawValue: 0x07)
    /// 0x08: one live push-to-talk voice burst.
    public static let voiceFrame = NoisePayloadType(rawValue: 0x08)
    /// 0x10: QR verification challenge.
    public static let verifyChallenge = NoisePayloadType(rawValue: 0x10)
    /// 0x11: QR verification response.
    public static let verifyResponse = NoisePayloadType(rawValue: 0x11)
    /// 0x12: a batch of vouch attestations (iOS only).
    public static let vouch = NoisePayloadType(rawValue: 0x12)
    /// 0x20: a private file (``FileTransferPacket``); iOS calls it `privateFile`.
    public static let fileTransfer = NoisePayloadType(rawValue: 0x20)
    /// 0x21: authenticated peer state (``AuthenticatedPeerState``).
    public static let authenticatedPeerState = NoisePayloadType(rawValue: 0x21)

    /// The type's name, or its hex byte.
    public var description: String {
        switch self {
        case .privateMessage: "privateMessage"
        case .readReceipt: "readReceipt"
        case .delivered: "delivered"
        case .groupInvite: "groupInvite"
        case .groupKeyUpdate: "groupKeyUpdate"
        case .voiceFrame: "voiceFrame"
        case .verifyChallenge: "verifyChallenge"
        case .verifyResponse: "verifyResponse"
        case .vouch: "vouch"
        case .fileTransfer: "fileTransfer"
        case .authenticatedPeerState: "authenticatedPeerState"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}
