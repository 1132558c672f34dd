import InvisoCrypto
import NIOCore

/// Seals and opens the authenticated frames of one established direct connection
/// (docs/direct.md, "Frames").
///
/// A frame on the wire is `uint32 length ‖ kind ‖ payload ‖ tag` (a
/// ``DirectFrameKind/sealedChunk`` is `uint32 length ‖ 0x02 ‖ chunk frame`, no tag), where
/// `tag = HMAC-SHA256(k_sender, seq ‖ kind ‖ payload)[0..<16]`, `seq` is the 64-bit
/// big-endian count of frames this sender sent before on this connection (not sent), and
/// `k_sender` is the frame key of the sending role. A frame injected, replayed, reordered,
/// reflected or cut by anyone without the path key fails to open.
struct DirectFrameProtector: Sendable {
    private let sendMAC: HMACSHA256
    private let receiveMAC: HMACSHA256
    private var sendSequence: UInt64 = 0
    private var receiveSequence: UInt64 = 0

    /// - Parameters:
    ///   - sendKey: The 32-byte frame key of this side's role.
    ///   - receiveKey: The 32-byte frame key of the peer's role.
    init(sendKey: SecretBytes, receiveKey: SecretBytes) {
        sendMAC = sendKey.withUnsafeBytes { HMACSHA256(key: $0) }
        receiveMAC = receiveKey.withUnsafeBytes { HMACSHA256(key: $0) }
    }

    /// Appends one sealed frame, length prefix included, to `buffer`.
    mutating func seal(kind: DirectFrameKind, payload: [UInt8], into buffer: inout ByteBuffer) {
        if kind == .sealedChunk {
            buffer.writeInteger(UInt32(DirectWire.kindBytes + payload.count))
            buffer.writeInteger(kind.rawValue)
            buffer.writeBytes(payload)
            return
        }
        let bodyLength = DirectWire.frameOverhead + payload.count
        buffer.reserveCapacity(minimumWritableBytes: DirectWire.lengthPrefixBytes + bodyLength)
        buffer.writeInteger(UInt32(bodyLength))
        buffer.writeInteger(kind.rawValue)
        buffer.writeBytes(payload)
        var mac = sendMAC
        withUnsafeBytes(of: sendSequence.bigEndian) { mac.update($0) }
        withUnsafeBytes(of: kind.rawValue) { mac.update($0) }
        mac.update(payload)
        let tag = mac.finalize()
        buffer.writeBytes(tag.prefix(DirectWire.tagBytes))
        sendSequence &+= 1
    }

    /// Opens one frame body (the bytes after the length prefix).
    ///
    /// - Throws: ``DirectError/protocolViolation`` for a body shorter than kind + tag or an
    ///   unknown kind, ``DirectError/authenticationFailed`` when the tag does not verify.
    ///   Nothing changes on failure (the caller closes the connection anyway).
    mutating func open(_ body: ByteBuffer) throws(DirectError) -> (kind: DirectFrameKind, payload: [UInt8]) {
        let count = body.readableBytes
        // A sealed chunk carries no tag and takes no sequence number: the receiver opens
        // it under its file's key (and drops it when it does not open).
        if body.getInteger(at: body.readerIndex, as: UInt8.self) == DirectFrameKind.sealedChunk.rawValue {
            guard count > DirectWire.kindBytes, let payload = body.getBytes(at: body.readerIndex + 1, length: count - 1),
                payload.first == V2FrameType.fileChunk.rawValue
            else { throw .protocolViolation }
            return (.sealedChunk, payload)
        }
        guard count >= DirectWire.frameOverhead else { throw .protocolViolation }
        let authenticated = count - DirectWire.tagBytes
        let valid = body.withUnsafeReadableBytes { bytes in
            var mac = receiveMAC
            withUnsafeBytes(of: receiveSequence.bigEndian) { mac.update($0) }
            mac.update(UnsafeRawBufferPointer(rebasing: bytes[0..<authenticated]))
            let tag = mac.finalize()
            return tag.prefix(DirectWire.tagBytes).withUnsafeBytes { expected in
                ConstantTime.equals(UnsafeRawBufferPointer(rebasing: bytes[authenticated..<count]), expected)
            }
        }
        guard valid else { throw .authenticationFailed }
        guard let kindByte = body.getInteger(at: body.readerIndex, as: UInt8.self),
            let kind = DirectFrameKind(rawValue: kindByte),
            let payload = body.getBytes(at: body.readerIndex + 1, length: authenticated - 1)
        else { throw .protocolViolation }
        receiveSequence &+= 1
        return (kind, payload)
    }
}
