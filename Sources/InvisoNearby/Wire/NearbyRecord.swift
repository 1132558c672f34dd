public import InvisoKit

/// One record on an established nearby channel (``NearbyChannel``): `type (1) ‖ body`.
///
/// ```
/// 0x01 connect request      (empty)          the dialler asks to talk
/// 0x02 connect accept       (empty)          the listener's user said yes
/// 0x03 connect reject       (empty)          … or no (or the dialler is blocked)
/// 0x10 data                 seq (uint64) ‖ payload   a reliable message (NearbyPayload)
/// 0x11 ack                  seq (uint64)     every data seq ≤ it was delivered
/// 0x20 file request         id (16) ‖ from chunk (uint64)   send me chunks from here
/// 0x21 file progress        id (16) ‖ held (uint64)         I hold this many chunks
/// ```
///
/// Data records go through the reliable link (numbered, acknowledged, resent after a
/// reconnect, kept in the outbox while the peer is away); the file request and progress
/// are not: a transfer resumes by asking again from the chunks it holds, and the
/// receiver reports progress again as more chunks arrive. The chunks themselves travel
/// beside the channel in chunk frames (``NearbyFrame/chunk(_:)``): each is already sealed
/// under a key only this channel carried.
public enum NearbyRecord: Sendable, Equatable {
    /// The dialler asks to talk.
    case connectRequest
    /// The listener accepts.
    case connectAccept
    /// The listener refuses (or blocked the dialler).
    case connectReject
    /// A reliable message.
    case data(seq: UInt64, payload: [UInt8])
    /// A cumulative acknowledgement.
    case ack(UInt64)
    /// The receiver of a transfer asks for chunks from `fromChunk` on.
    case fileRequest(FileTransferID, fromChunk: UInt64)
    /// The receiver of a transfer holds `held` chunks (the sender's window moves).
    case fileProgress(FileTransferID, held: UInt64)

    /// The largest payload of a data record.
    public static let maxPayloadBytes = 128 * 1024

    /// Parses a record.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` for an unknown type, a wrong length or
    ///   trailing bytes.
    public init(decoding bytes: [UInt8]) throws(NearbyError) {
        var reader = ByteReader(bytes)
        let type = try reader.byte("record type")
        switch type {
        case 0x01: self = .connectRequest
        case 0x02: self = .connectAccept
        case 0x03: self = .connectReject
        case 0x10:
            let seq = try reader.uint64("data seq")
            guard seq > 0, reader.remaining > 0, reader.remaining <= Self.maxPayloadBytes else {
                throw NearbyError(.malformed, "data record")
            }
            self = .data(seq: seq, payload: try reader.bytes(reader.remaining, "data payload"))
        case 0x11: self = .ack(try reader.uint64("ack"))
        case 0x20:
            let id = try reader.transferID()
            self = .fileRequest(id, fromChunk: try reader.uint64("file request chunk"))
        case 0x21:
            let id = try reader.transferID()
            self = .fileProgress(id, held: try reader.uint64("file progress"))
        default: throw NearbyError(.malformed, "record type")
        }
        try reader.finish("record")
    }

    /// The wire form.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .connectRequest: writer.byte(0x01)
        case .connectAccept: writer.byte(0x02)
        case .connectReject: writer.byte(0x03)
        case .data(let seq, let payload):
            writer = ByteWriter(capacity: 9 + payload.count)
            writer.byte(0x10)
            writer.uint64(seq)
            writer.append(payload)
        case .ack(let seq):
            writer.byte(0x11)
            writer.uint64(seq)
        case .fileRequest(let id, let from):
            writer.byte(0x20)
            writer.append(id.bytes)
            writer.uint64(from)
        case .fileProgress(let id, let held):
            writer.byte(0x21)
            writer.append(id.bytes)
            writer.uint64(held)
        }
        return writer.bytes
    }
}
