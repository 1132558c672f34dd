public import InvisoKit

/// How long a conversation's messages live once sent (agreed by both sides).
public enum NearbyLifetime: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Kept until deleted.
    case never = 0
    /// 24 hours.
    case day = 86_400
    /// 7 days.
    case week = 604_800
    /// 30 days.
    case month = 2_592_000

    /// Parses `24h`, `7d`, `30d` or `never` (also `1d`).
    public init?(text: String) {
        switch text.lowercased() {
        case "never", "off": self = .never
        case "24h", "1d": self = .day
        case "7d", "1w": self = .week
        case "30d": self = .month
        default: return nil
        }
    }

    /// Seconds (0 for never).
    public var seconds: UInt32 { rawValue }

    public var description: String {
        switch self {
        case .never: "never"
        case .day: "24h"
        case .week: "7d"
        case .month: "30d"
        }
    }
}

/// A text message.
public struct NearbyText: Sendable, Hashable {
    /// The longest text in UTF-8 bytes.
    public static let maxBytes = 64 * 1024

    /// The sender's random message id (16 bytes): de-duplicates a message delivered to a
    /// group member over more than one path.
    public let id: [UInt8]
    /// When it was sent, in milliseconds since 1970 (the sender's clock, for display).
    public let sentAt: UInt64
    /// The conversation's lifetime when it was sent.
    public let lifetime: NearbyLifetime
    /// The text.
    public let body: String

    /// A message.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` for an id not 16 bytes or a body over 64 KiB.
    public init(id: [UInt8], sentAt: UInt64, lifetime: NearbyLifetime, body: String) throws(NearbyError) {
        guard id.count == 16, body.utf8.count <= Self.maxBytes else { throw NearbyError(.malformed, "text fields") }
        self.id = id
        self.sentAt = sentAt
        self.lifetime = lifetime
        self.body = body
    }
}

/// A group's state as its creator (or a member that changed it) announces it, with the
/// sender's own sender key for the group's current epoch.
public struct NearbyGroupUpdate: Sendable, Hashable {
    /// The most members a group has.
    public static let maxMembers = 32

    /// The group (16 random bytes).
    public let groupID: [UInt8]
    /// Bumped at every membership change; sender keys are per epoch, so a member removed
    /// at epoch n never gets a key of epoch n + 1.
    public let epoch: UInt32
    /// The group's name.
    public let name: String
    /// Every member's identity, the sender's included.
    public let members: [NearbyPublicIdentity]
    /// The sender's `SenderKeyDistributionMessage` for this epoch (libsignal bytes).
    public let distribution: [UInt8]

    /// A group update.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` for a bad id, name, member list or
    ///   distribution size.
    public init(groupID: [UInt8], epoch: UInt32, name: String, members: [NearbyPublicIdentity], distribution: [UInt8])
        throws(NearbyError)
    {
        guard groupID.count == 16, (1...NearbyHello.maxNameBytes).contains(name.utf8.count),
            (1...Self.maxMembers).contains(members.count), Set(members).count == members.count,
            (1...1_024).contains(distribution.count)
        else { throw NearbyError(.malformed, "group update fields") }
        self.groupID = groupID
        self.epoch = epoch
        self.name = name
        self.members = members
        self.distribution = distribution
    }
}

/// What a reliable data record carries.
///
/// ```
/// 0x01 text            id (16) ‖ sent at (uint64 ms) ‖ lifetime (uint32 s) ‖ text (uint16 len ‖ UTF-8)
/// 0x02 lifetime ask    lifetime (uint32 s)
/// 0x03 lifetime answer lifetime (uint32 s) ‖ accepted (0|1)
/// 0x10 group update    group (16) ‖ epoch (uint32) ‖ name (uint16 len) ‖ n (1) ‖ n × identity (32)
///                        ‖ distribution (uint16 len)
/// 0x11 group message   group (16) ‖ epoch (uint32) ‖ sender-key message (rest)
/// 0x12 group leave     group (16)
/// 0x20 file offer      FileOffer wire form (rest)
/// 0x21 file answer     id (16) ‖ accepted (0|1)
/// 0x22 file complete   id (16) ‖ verified (0|1)
/// 0x23 file digest     id (16) ‖ sha256 (32)       sent after the last chunk
/// 0x24 file cancel     id (16)                     either side stops the transfer
/// ```
public enum NearbyPayload: Sendable, Equatable {
    /// A 1:1 text message.
    case text(NearbyText)
    /// A proposed lifetime for the conversation's messages.
    case lifetimeProposal(NearbyLifetime)
    /// The answer to a proposal.
    case lifetimeAnswer(NearbyLifetime, accepted: Bool)
    /// A group's state and the sender's sender key for it.
    case groupUpdate(NearbyGroupUpdate)
    /// A message to a group, sealed once with the sender's sender key.
    case groupMessage(groupID: [UInt8], epoch: UInt32, ciphertext: [UInt8])
    /// The sender left the group.
    case groupLeave(groupID: [UInt8])
    /// A file offer (the chunks follow as chunk frames once accepted).
    case fileOffer(FileOffer)
    /// The receiver's answer to an offer.
    case fileAnswer(FileTransferID, accepted: Bool)
    /// The receiver has the whole file; `verified` says whether its SHA-256 matched.
    case fileComplete(FileTransferID, verified: Bool)
    /// The SHA-256 of the file's bytes, which the sender hashed as it sealed them.
    case fileDigest(FileTransferID, sha256: [UInt8])
    /// The sender or the receiver stopped the transfer (the receiver drops what it holds).
    case fileCancel(FileTransferID)

    /// Parses a payload.
    ///
    /// - Throws: ``NearbyError/Code/malformed``.
    public init(decoding bytes: [UInt8]) throws(NearbyError) {
        var reader = ByteReader(bytes)
        switch try reader.byte("payload type") {
        case 0x01:
            let id = try reader.bytes(16, "text id")
            let sentAt = try reader.uint64("text time")
            let lifetime = try Self.lifetime(&reader)
            self = .text(try NearbyText(id: id, sentAt: sentAt, lifetime: lifetime,
                                        body: reader.text("text body", limit: NearbyText.maxBytes)))
        case 0x02: self = .lifetimeProposal(try Self.lifetime(&reader))
        case 0x03: self = .lifetimeAnswer(try Self.lifetime(&reader), accepted: try Self.flag(&reader))
        case 0x10:
            let group = try reader.bytes(16, "group id")
            let epoch = try reader.uint32("group epoch")
            let name = try reader.text("group name", limit: NearbyHello.maxNameBytes)
            let count = Int(try reader.byte("member count"))
            var members: [NearbyPublicIdentity] = []
            for _ in 0..<count { members.append(try NearbyPublicIdentity(try reader.bytes(32, "member"))) }
            let distribution = try reader.lengthPrefixed("distribution", limit: 1_024)
            self = .groupUpdate(try NearbyGroupUpdate(
                groupID: group, epoch: epoch, name: name, members: members, distribution: distribution))
        case 0x11:
            let group = try reader.bytes(16, "group id")
            let epoch = try reader.uint32("group epoch")
            guard reader.remaining > 0 else { throw NearbyError(.malformed, "group message") }
            self = .groupMessage(groupID: group, epoch: epoch, ciphertext: try reader.bytes(reader.remaining, "group message"))
        case 0x12: self = .groupLeave(groupID: try reader.bytes(16, "group id"))
        case 0x20:
            do {
                self = .fileOffer(try FileOffer(decoding: try reader.bytes(reader.remaining, "file offer")))
            } catch {
                throw NearbyError(.malformed, "file offer")
            }
        case 0x21: self = .fileAnswer(try reader.transferID(), accepted: try Self.flag(&reader))
        case 0x22: self = .fileComplete(try reader.transferID(), verified: try Self.flag(&reader))
        case 0x23: self = .fileDigest(try reader.transferID(), sha256: try reader.bytes(32, "file digest"))
        case 0x24: self = .fileCancel(try reader.transferID())
        default: throw NearbyError(.malformed, "payload type")
        }
        try reader.finish("payload")
    }

    /// The wire form.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .text(let text):
            writer.byte(0x01)
            writer.append(text.id)
            writer.uint64(text.sentAt)
            writer.uint32(text.lifetime.rawValue)
            writer.text(text.body)
        case .lifetimeProposal(let lifetime):
            writer.byte(0x02)
            writer.uint32(lifetime.rawValue)
        case .lifetimeAnswer(let lifetime, let accepted):
            writer.byte(0x03)
            writer.uint32(lifetime.rawValue)
            writer.byte(accepted ? 1 : 0)
        case .groupUpdate(let update):
            writer.byte(0x10)
            writer.append(update.groupID)
            writer.uint32(update.epoch)
            writer.text(update.name)
            writer.byte(UInt8(update.members.count))
            for member in update.members { writer.append(member.bytes) }
            writer.lengthPrefixed(update.distribution)
        case .groupMessage(let group, let epoch, let ciphertext):
            writer.byte(0x11)
            writer.append(group)
            writer.uint32(epoch)
            writer.append(ciphertext)
        case .groupLeave(let group):
            writer.byte(0x12)
            writer.append(group)
        case .fileOffer(let offer):
            writer.byte(0x20)
            writer.append(offer.encoded())
        case .fileAnswer(let id, let accepted):
            writer.byte(0x21)
            writer.append(id.bytes)
            writer.byte(accepted ? 1 : 0)
        case .fileComplete(let id, let verified):
            writer.byte(0x22)
            writer.append(id.bytes)
            writer.byte(verified ? 1 : 0)
        case .fileDigest(let id, let sha256):
            writer.byte(0x23)
            writer.append(id.bytes)
            writer.append(sha256)
        case .fileCancel(let id):
            writer.byte(0x24)
            writer.append(id.bytes)
        }
        return writer.bytes
    }

    private static func lifetime(_ reader: inout ByteReader) throws(NearbyError) -> NearbyLifetime {
        guard let lifetime = NearbyLifetime(rawValue: try reader.uint32("lifetime")) else {
            throw NearbyError(.malformed, "lifetime")
        }
        return lifetime
    }

    private static func flag(_ reader: inout ByteReader) throws(NearbyError) -> Bool {
        switch try reader.byte("flag") {
        case 0: return false
        case 1: return true
        default: throw NearbyError(.malformed, "flag")
        }
    }
}
