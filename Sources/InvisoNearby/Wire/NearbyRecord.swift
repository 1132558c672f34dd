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
/// 0x21 file chunk           id (16) ‖ index (uint64) ‖ sealed chunk
/// ```
///
/// Data records go through the reliable link (numbered, acknowledged, resent after a
/// reconnect, kept in the outbox while the peer is away); the file records are not: a
/// transfer resumes by asking again from the chunks it holds.
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
    /// One sealed chunk.
    case fileChunk(FileTransferID, index: UInt64, sealed: [UInt8])

    /// The largest payload of a data record.
    public static let maxPayloadBytes = 128 * 1024
    /// The largest sealed chunk (1 MiB chunk size plus the tag).
    public static let maxSealedChunkBytes = NearbyChannel.maxRecordBytes - 1 - 16 - 8

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
            let index = try reader.uint64("chunk index")
            guard reader.remaining >= 16, reader.remaining <= Self.maxSealedChunkBytes else {
                throw NearbyError(.malformed, "sealed chunk length")
            }
            self = .fileChunk(id, index: index, sealed: try reader.bytes(reader.remaining, "sealed chunk"))
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
        case .fileChunk(let id, let index, let sealed):
            writer = ByteWriter(capacity: 25 + sealed.count)
            writer.byte(0x21)
            writer.append(id.bytes)
            writer.uint64(index)
            writer.append(sealed)
        }
        return writer.bytes
    }
}
