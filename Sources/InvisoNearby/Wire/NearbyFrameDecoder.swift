/// Splits a nearby TCP byte stream into frames: `uint16 big-endian length ‖ body`, with a
/// body of 1…65,535 bytes (one Noise message).
///
/// While the handshake runs, a body may be at most ``maxHandshakeBody`` bytes (the three
/// XX messages are 32, ~260 and ~230 bytes), so a stranger cannot make a listener hold
/// more than that before it knows who is talking; the decoder knows when the handshake is
/// over by counting (the initiator reads one handshake message, the responder two).
/// Nothing is allocated from a declared length: a frame is returned only when all its
/// bytes arrived, and the buffer never holds more than one partial frame beyond what the
/// caller appended.
public struct NearbyFrameDecoder: Sendable {
    /// The largest handshake message body accepted.
    public static let maxHandshakeBody = 512
    /// Bytes of the length prefix.
    public static let prefixBytes = 2

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

    /// The next complete frame body, or `nil` until more bytes arrive.
    ///
    /// - Throws: ``NearbyError/Code/malformed`` for an empty body,
    ///   ``NearbyError/Code/frameTooLarge`` for a handshake body over the limit. The
    ///   connection is then closed; the decoder is not used again.
    public mutating func next() throws(NearbyError) -> [UInt8]? {
        guard buffer.count - start >= Self.prefixBytes else { return nil }
        let length = Int(buffer[start]) << 8 | Int(buffer[start + 1])
        guard length > 0 else { throw NearbyError(.malformed, "empty frame") }
        if handshakeFramesLeft > 0, length > Self.maxHandshakeBody {
            throw NearbyError(.frameTooLarge, "handshake frame")
        }
        guard buffer.count - start - Self.prefixBytes >= length else { return nil }
        let bodyStart = start + Self.prefixBytes
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        if handshakeFramesLeft > 0 { handshakeFramesLeft -= 1 }
        return body
    }

    /// `body` with its length prefix (1…65,535 bytes).
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        precondition(!body.isEmpty && body.count <= Int(UInt16.max), "a frame body is 1…65,535 bytes")
        var framed = [UInt8(body.count >> 8), UInt8(body.count & 0xFF)]
        framed.reserveCapacity(body.count + 2)
        framed += body
        return framed
    }
}
