public import InvisoKit

/// One frame of a nearby TCP stream.
public enum NearbyFrame: Sendable, Equatable {
    /// A Noise message: a handshake message, then the secure channel's transport messages.
    case message([UInt8])
    /// A file chunk, carried beside the channel (``NearbyChunk``).
    case chunk(NearbyChunk)
}

/// A sealed file chunk as it travels: not inside the Noise channel, because it is already
/// sealed with AES-256-GCM under the transfer's fresh key, which only the channel carried,
/// with the transfer id and the chunk's index bound in nonce and associated data
/// (``FileChunkCipher``). Sealing it a second time would only cost time: a chunk altered,
/// moved, replayed or injected on the way does not open, and its frame header says nothing
/// the frame's length does not (the id is random per transfer). `docs/nearby.md`, "Files".
///
/// The same value as a chat's chunk (``FileChunkFrame``: transfer, index, sealed chunk);
/// only the framing around it differs (a nearby chunk frame is `0x0000 ‖ u32 length ‖ …`).
public typealias NearbyChunk = FileChunkFrame

/// Splits a nearby TCP byte stream into frames.
///
/// ```
/// message frame:  length (uint16, 1…65,535) ‖ Noise message
/// chunk frame:    0x0000 ‖ length (uint32) ‖ transfer id (16) ‖ index (uint64) ‖ sealed chunk
/// ```
///
/// A length of zero cannot start a message frame, so it marks a chunk frame, whose body is
/// 24 header bytes and a sealed chunk of 17…``maxSealedChunkBytes`` bytes.
///
/// While the handshake runs, a message body may be at most ``maxHandshakeBody`` bytes (the
/// three XX messages are 32, ~260 and ~230 bytes) and chunk frames are refused, so a
/// stranger cannot make a listener hold more than that before it knows who is talking; the
/// decoder knows when the handshake is over by counting (the initiator reads one handshake
/// message, the responder two). Nothing is allocated from a declared length: a frame is
/// returned only when all its bytes arrived, and the buffer never holds more than one
/// partial frame beyond what the caller appended.
public struct NearbyFrameDecoder: Sendable {
    /// The largest handshake message body accepted.
    public static let maxHandshakeBody = 512
    /// Bytes of a message frame's length prefix.
    public static let prefixBytes = 2
    /// Bytes before a chunk frame's sealed chunk: the marker, the length, id and index.
    public static let chunkHeaderBytes = 2 + 4 + 16 + 8
    /// The largest sealed chunk (a 1 MiB chunk, the largest an offer allows, and its tag).
    public static let maxSealedChunkBytes = 1_048_576 + FileChunkCipher.overhead

    private var buffer: [UInt8] = []
    private var start = 0
    private var handshakeFramesLeft: Int

    /// A decoder for the side that plays `role` in the handshake.
    public init(role: NearbyHandshake.Role) {
        handshakeFramesLeft = role == .initiator ? 1 : 2
    }

    /// Adds bytes read from the socket.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet returned as frames.
    public var bufferedBytes: Int { buffer.count - start }

    /// The next complete frame, or `nil` until more bytes arrive.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` for a chunk frame during the handshake or
    ///   one whose length is out of range, ``NearbyError/Code/frameTooLarge`` for a
    ///   handshake body over the limit. The connection is then closed; the decoder is not
    ///   used again.
    public mutating func next() throws(NearbyError) -> NearbyFrame? {
        let available = buffer.count - start
        guard available >= Self.prefixBytes else { return nil }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard length == 0 else {
            if handshakeFramesLeft > 0, length > Self.maxHandshakeBody {
                throw NearbyError(.frameTooLarge, "handshake frame")
            }
            guard available - Self.prefixBytes >= length else { return nil }
            let body = take(from: start + Self.prefixBytes, count: length)
            if handshakeFramesLeft > 0 { handshakeFramesLeft -= 1 }
            return .message(body)
        }
        guard handshakeFramesLeft == 0 else { throw NearbyError(.malformed, "chunk frame during the handshake") }
        guard available >= 6 else { return nil }
        let declared = buffer[(start + 2)..<(start + 6)].reduce(0) { $0 << 8 | Int($1) }
        let sealedCount = declared - 24
        guard sealedCount > FileChunkCipher.overhead, sealedCount <= Self.maxSealedChunkBytes else {
            throw NearbyError(.malformed, "chunk frame length")
        }
        guard available - 6 >= declared else { return nil }
        let id = start + 6
        let transfer: FileTransferID
        do {
            transfer = try FileTransferID(Array(buffer[id..<(id + 16)]))
        } catch {
            throw NearbyError(.malformed, "transfer id")
        }
        let index = buffer[(id + 16)..<(id + 24)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let sealed = take(from: id + 24, count: sealedCount)
        return .chunk(NearbyChunk(transfer: transfer, index: index, sealed: sealed))
    }

    /// The `count` bytes at `offset`, consumed with everything before them.
    private mutating func take(from offset: Int, count: Int) -> [UInt8] {
        let bytes = Array(buffer[offset..<(offset + count)])
        start = offset + count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return bytes
    }

    /// `body` with its length prefix (1…65,535 bytes).
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        precondition(!body.isEmpty && body.count <= Int(UInt16.max), "a frame body is 1…65,535 bytes")
        var framed = [UInt8(body.count >> 8), UInt8(body.count & 0xFF)]
        framed.reserveCapacity(body.count + 2)
        framed += body
        return framed
    }

    /// The bytes in front of a sealed chunk of `sealedCount` bytes in its chunk frame.
    public static func chunkHeader(transfer: FileTransferID, index: UInt64, sealedCount: Int) -> [UInt8] {
        precondition(sealedCount > FileChunkCipher.overhead && sealedCount <= maxSealedChunkBytes, "a sealed chunk's size")
        var header = [UInt8](repeating: 0, count: 2)
        header.reserveCapacity(chunkHeaderBytes)
        let length = UInt32(24 + sealedCount)
        for shift in stride(from: 24, through: 0, by: -8) { header.append(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
        header += transfer.bytes
        for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8(truncatingIfNeeded: index >> UInt64(shift))) }
        return header
    }
}
