import Foundation

/// The text of one notification on a ``PostgresSignalingBus`` channel.
///
/// PostgreSQL notification payloads are text shorter than 8000 bytes, so a message travels
/// in one of two forms:
///
/// - `<origin>:i:<base64>`: the message inline, standard base64 with padding (an empty
///   message has an empty base64 part);
/// - `<origin>:r:<id>`: the message is the `payload` of row `<id>` (decimal, positive) of
///   the spill table, committed in the same transaction as the notification.
///
/// `<origin>` is the publisher's instance ID: 1 to 64 bytes of ASCII letters, digits, `.`,
/// `_` and `-`. The parser checks the whole text before reading any part of it and returns
/// `nil` for anything else (the channel is shared with whatever else can `NOTIFY` on it).
package enum BusNotification: Sendable, Equatable {
    /// A message carried in the notification itself.
    case inline(origin: String, payload: [UInt8])
    /// A message stored in the spill table under `id`.
    case spilled(origin: String, id: Int64)

    /// The longest notification text sent inline. PostgreSQL's limit (in its default build)
    /// is 7999 bytes; the margin leaves room for servers built with a smaller one.
    package static let maximumInlineLength = 7_800

    /// The longest text PostgreSQL can deliver; anything longer is not a notification.
    package static let maximumTextLength = 7_999

    /// The longest instance ID, in bytes.
    package static let maximumOriginLength = 64

    /// The most digits a spill row ID may have (every 18-digit number fits in `Int64`).
    private static let maximumIDDigits = 18

    /// The publisher's instance ID.
    package var origin: String {
        switch self {
        case .inline(let origin, _), .spilled(let origin, _): origin
        }
    }

    /// The notification's text.
    package var text: String {
        switch self {
        case .inline(let origin, let payload): origin + ":i:" + Data(payload).base64EncodedString()
        case .spilled(let origin, let id): Self.spilledPrefix(origin: origin) + String(id)
        }
    }

    /// The text before the row ID of a spilled message from `origin`.
    package static func spilledPrefix(origin: String) -> String { origin + ":r:" }

    /// The length in bytes of the inline text for a message of `payloadCount` bytes from an
    /// origin of `originLength` bytes.
    package static func inlineLength(originLength: Int, payloadCount: Int) -> Int {
        originLength + 3 + (payloadCount + 2) / 3 * 4
    }

    /// Whether `origin` can be an instance ID: 1 to 64 bytes of ASCII letters, digits, `.`,
    /// `_` and `-` (so never the `:` that ends it).
    package static func isValidOrigin(_ origin: some StringProtocol) -> Bool {
        let bytes = origin.utf8
        guard (1...maximumOriginLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy(isOriginByte)
    }

    private static func isOriginByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// Parses a notification's text.
    ///
    /// - Parameter text: The payload PostgreSQL delivered.
    /// - Returns: `nil` unless `text` is exactly one of the two forms.
    package init?(text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumTextLength else { return nil }
        // "<origin>:<kind>:": the origin has no ':' and at most 64 bytes.
        guard let colon = bytes.prefix(Self.maximumOriginLength + 1).firstIndex(of: UInt8(ascii: ":")),
            colon >= 1, bytes.count >= colon + 3, bytes[colon + 2] == UInt8(ascii: ":")
        else { return nil }
        let originBytes = bytes[..<colon]
        guard originBytes.allSatisfy(Self.isOriginByte) else { return nil }
        let origin = String(decoding: originBytes, as: UTF8.self)
        let body = bytes[(colon + 3)...]

        switch bytes[colon + 1] {
        case UInt8(ascii: "i"):
            guard body.count % 4 == 0,
                let payload = Data(base64Encoded: String(decoding: body, as: UTF8.self))
            else { return nil }
            self = .inline(origin: origin, payload: Array(payload))
        case UInt8(ascii: "r"):
            guard (1...Self.maximumIDDigits).contains(body.count),
                body.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            let id = body.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            guard id > 0 else { return nil }
            self = .spilled(origin: origin, id: id)
        default:
            return nil
        }
    }
}
