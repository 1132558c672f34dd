package import NIOCore

/// Splits the TCP byte stream into frame bodies: `uint32 big-endian length ‖ body`.
///
/// The length is checked against the limit as soon as its four bytes are in, before any
/// body byte is waited for, and nothing is ever allocated from a declared length: a body
/// is a slice of bytes that actually arrived. Before authentication the limit is
/// ``DirectWire/maxHandshakeBody`` (the handshake messages are tiny), so a stranger cannot
/// make the listener buffer more than a few bytes; after the handshake it is the
/// connection's frame limit. The decoder knows the switch point by counting: the acceptor
/// reads two handshake messages, the dialer one.
package struct DirectFrameDecoder: NIOSingleStepByteToMessageDecoder {
    package typealias InboundOut = ByteBuffer

    private var handshakeMessagesLeft: Int
    private let maxBodyBytes: Int

    /// - Parameters:
    ///   - side: The end of the connection this decoder reads for.
    ///   - maxBodyBytes: The largest authenticated frame body (payload limit + kind + tag).
    package init(side: DirectHandshake.Side, maxBodyBytes: Int) {
        handshakeMessagesLeft = side == .acceptor ? 2 : 1
        self.maxBodyBytes = maxBodyBytes
    }

    package mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        let handshake = handshakeMessagesLeft > 0
        let limit = handshake ? DirectWire.maxHandshakeBody : maxBodyBytes
        guard UInt64(length) <= UInt64(limit) else {
            throw handshake ? DirectError.protocolViolation : DirectError.frameTooLarge
        }
        let total = DirectWire.lengthPrefixBytes + Int(length)
        guard buffer.readableBytes >= total else { return nil }
        buffer.moveReaderIndex(forwardBy: DirectWire.lengthPrefixBytes)
        guard let body = buffer.readSlice(length: Int(length)) else { return nil }
        if handshake { handshakeMessagesLeft -= 1 }
        return body
    }

    package mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        try decode(buffer: &buffer)
    }
}
