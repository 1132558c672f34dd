import InvisoCrypto
import InvisoWire

/// The messages of a file transfer inside a chat session (`docs/protocol.md`, "Files").
/// They travel as ordinary messages of the session — sealed by the Double Ratchet,
/// acknowledged, resent and ordered by the session's reliable link — as JSON objects the
/// app does not know (Inviso v2 only). The chunks themselves travel beside them in chunk
/// frames (``FileChunkFrame``), sealed under the offer's key.
///
/// | `type` | fields | sent by | meaning |
/// |---|---|---|---|
/// | `file_offer` | `offer` (hex of ``FileOffer/encoded()``) | sender | name, size, chunk size, key |
/// | `file_answer` | `id`, `accepted` | receiver | a refusal (`false`), or the acceptance |
/// | `file_request` | `id`, `from` | receiver | send chunks from `from` on (after accepting, reconnecting, a gap) |
/// | `file_progress` | `id`, `held` | receiver | chunks held: the sender's window moves |
/// | `file_digest` | `id`, `sha256` | sender | the file's SHA-256, after the last chunk |
/// | `file_complete` | `id`, `verified` | receiver | the file is in (its hash matched, or not) |
/// | `file_cancel` | `id` | either | the transfer ends; a partial download is deleted |
public enum FileControl: Sendable, Hashable {
    /// The sender's offer.
    case offer(FileOffer)
    /// The receiver's answer.
    case answer(FileTransferID, accepted: Bool)
    /// Chunks wanted from `from` on.
    case request(FileTransferID, from: UInt64)
    /// Chunks held so far.
    case progress(FileTransferID, held: UInt64)
    /// The file's SHA-256.
    case digest(FileTransferID, sha256: [UInt8])
    /// The receiver is done.
    case complete(FileTransferID, verified: Bool)
    /// Either side stops.
    case cancel(FileTransferID)

    /// The transfer it is about.
    public var transfer: FileTransferID {
        switch self {
        case .offer(let offer): offer.id
        case .answer(let id, _), .request(let id, _), .progress(let id, _), .digest(let id, _), .complete(let id, _),
            .cancel(let id):
            id
        }
    }

    /// The JSON `type`s, for ``ChatPayload``.
    static let types: Set<String> = [
        "file_offer", "file_answer", "file_request", "file_progress", "file_digest", "file_complete", "file_cancel",
    ]

    /// Reads one from its JSON object; `nil` when a field is missing or out of range.
    init?(type: String, _ object: JSONObject) {
        func id() -> FileTransferID? {
            guard let text = object["id"]?.stringValue, let bytes = Hex.decode(text) else { return nil }
            return try? FileTransferID(bytes)
        }
        func count(_ key: String) -> UInt64? {
            if case .number(let text)? = object[key] { UInt64(text) } else { nil }
        }
        switch type {
        case "file_offer":
            guard let text = object["offer"]?.stringValue, let bytes = Hex.decode(text),
                let offer = try? FileOffer(decoding: bytes)
            else { return nil }
            self = .offer(offer)
        case "file_answer":
            guard let id = id(), let accepted = object["accepted"]?.boolValue else { return nil }
            self = .answer(id, accepted: accepted)
        case "file_request":
            guard let id = id(), let from = count("from") else { return nil }
            self = .request(id, from: from)
        case "file_progress":
            guard let id = id(), let held = count("held") else { return nil }
            self = .progress(id, held: held)
        case "file_digest":
            guard let id = id(), let text = object["sha256"]?.stringValue, let sha256 = Hex.decode(text), sha256.count == 32
            else { return nil }
            self = .digest(id, sha256: sha256)
        case "file_complete":
            guard let id = id(), let verified = object["verified"]?.boolValue else { return nil }
            self = .complete(id, verified: verified)
        case "file_cancel":
            guard let id = id() else { return nil }
            self = .cancel(id)
        default:
            return nil
        }
    }

    /// The JSON object's fields.
    var fields: [(String, JSONValue)] {
        func id(_ transfer: FileTransferID) -> (String, JSONValue) { ("id", .string(transfer.description)) }
        switch self {
        case .offer(let offer):
            return [("type", .string("file_offer")), ("offer", .string(Hex.encode(offer.encoded())))]
        case .answer(let transfer, let accepted):
            return [("type", .string("file_answer")), id(transfer), ("accepted", .bool(accepted))]
        case .request(let transfer, let from):
            return [("type", .string("file_request")), id(transfer), ("from", .number(String(from)))]
        case .progress(let transfer, let held):
            return [("type", .string("file_progress")), id(transfer), ("held", .number(String(held)))]
        case .digest(let transfer, let sha256):
            return [("type", .string("file_digest")), id(transfer), ("sha256", .string(Hex.encode(sha256)))]
        case .complete(let transfer, let verified):
            return [("type", .string("file_complete")), id(transfer), ("verified", .bool(verified))]
        case .cancel(let transfer):
            return [("type", .string("file_cancel")), id(transfer)]
        }
    }
}

/// A chunk frame of a chat session: the v2 frame type ``V2FrameType/fileChunk`` beside
/// the ratchet messages, on whichever path carries the session.
///
/// ```
/// 0x04 ‖ transfer id (16) ‖ index (uint64 BE) ‖ sealed chunk (FileChunkCipher: ciphertext ‖ tag)
/// ```
///
/// The chunk is sealed under the offer's key, which only the ratchet carried; the id and
/// index are bound in the seal's nonce and associated data, so a frame moved, replayed or
/// forged does not open. Nothing else about the frame is trusted.
public struct FileChunkFrame: Sendable, Equatable {
    /// Bytes in front of the sealed chunk.
    public static let headerBytes = 1 + 16 + 8
    /// The chunk size chat transfers offer: a frame of it fits the server's 64 KiB
    /// WebSocket message limit (`docs/server.md`), so the same chunks travel on the relay
    /// and on the direct path, and a transfer moves between them.
    public static let chatChunkSize: UInt32 = 60 * 1024

    /// The transfer.
    public let transfer: FileTransferID
    /// The chunk's index.
    public let index: UInt64
    /// The sealed chunk.
    public let sealed: [UInt8]

    /// A frame.
    public init(transfer: FileTransferID, index: UInt64, sealed: [UInt8]) {
        self.transfer = transfer
        self.index = index
        self.sealed = sealed
    }

    /// Reads a frame.
    ///
    /// - Throws: ``FileTransferError/Code/malformed`` for another type, a short frame, a
    ///   sealed part shorter than a tag or longer than the largest chunk plus its tag.
    public init(decoding frame: [UInt8]) throws(FileTransferError) {
        guard frame.count >= Self.headerBytes + FileChunkCipher.overhead, frame[0] == V2FrameType.fileChunk.rawValue,
            frame.count <= Self.headerBytes + 1_048_576 + FileChunkCipher.overhead
        else { throw FileTransferError(.malformed, "file chunk frame") }
        transfer = try FileTransferID(Array(frame[1..<17]))
        index = frame[17..<25].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        sealed = Array(frame[25...])
    }

    /// The frame's bytes.
    public func encoded() -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.headerBytes + sealed.count)
        bytes.append(V2FrameType.fileChunk.rawValue)
        bytes += transfer.bytes
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: index >> UInt64(shift))) }
        bytes += sealed
        return bytes
    }
}
