import InvisoWire
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Writes a client's WebSocket frames (RFC 6455 §5.2), masked with ``WebSocketMasking``.
///
/// It replaces SwiftNIO's `WebSocketFrameEncoder` on our client's sockets: that one masks a
/// byte at a time, which cost a quarter of the sender's cycles in a file transfer over the
/// relay. Each frame is one buffer: the header, then the payload copied and masked in
/// place with the frame's key (a frame without a key goes unmasked, as a server's would).
final class MaskingWebSocketFrameEncoder: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = ByteBuffer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        let extensionBytes = frame.extensionData?.readableBytes ?? 0
        let length = extensionBytes + frame.data.readableBytes
        var buffer = context.channel.allocator.buffer(capacity: 14 + length)
        Self.writeHeader(of: frame, length: length, into: &buffer)
        let headerBytes = buffer.readableBytes
        if let extensionData = frame.extensionData { buffer.writeImmutableBuffer(extensionData) }
        buffer.writeImmutableBuffer(frame.data)
        if let key = frame.maskKey {
            buffer.withUnsafeMutableReadableBytes { raw in
                WebSocketMasking.apply(
                    (key[0], key[1], key[2], key[3]),
                    to: UnsafeMutableRawBufferPointer(rebasing: raw[headerBytes...]))
            }
        }
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    /// FIN, RSV and opcode; the mask bit and the length (7 bits, or 126 and 16 bits, or
    /// 127 and 64 bits); the key.
    static func writeHeader(of frame: WebSocketFrame, length: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger((frame.fin ? 0x80 : 0) | frame.reservedBits.rawValue | UInt8(webSocketOpcode: frame.opcode))
        let maskBit: UInt8 = frame.maskKey == nil ? 0 : 0x80
        switch length {
        case ..<126:
            buffer.writeInteger(maskBit | UInt8(length))
        case ..<65_536:
            buffer.writeInteger(maskBit | 126)
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(maskBit | 127)
            buffer.writeInteger(UInt64(length))
        }
        if let key = frame.maskKey { buffer.writeBytes(key) }
    }
}

/// SwiftNIO's typed WebSocket client upgrader (its request key and the server's accept
/// check), with ``MaskingWebSocketFrameEncoder`` in the pipeline instead of SwiftNIO's
/// encoder.
struct MaskingWebSocketClientUpgrader<UpgradeResult: Sendable>: NIOTypedHTTPClientProtocolUpgrader {
    private let inner: NIOTypedWebSocketClientUpgrader<UpgradeResult>
    private let maxFrameSize: Int
    private let upgradePipelineHandler: @Sendable (any Channel, HTTPResponseHead) -> EventLoopFuture<UpgradeResult>

    init(
        maxFrameSize: Int,
        upgradePipelineHandler: @escaping @Sendable (any Channel, HTTPResponseHead) -> EventLoopFuture<UpgradeResult>
    ) {
        inner = NIOTypedWebSocketClientUpgrader(maxFrameSize: maxFrameSize, upgradePipelineHandler: upgradePipelineHandler)
        self.maxFrameSize = maxFrameSize
        self.upgradePipelineHandler = upgradePipelineHandler
    }

    var supportedProtocol: String { inner.supportedProtocol }
    var requiredUpgradeHeaders: [String] { inner.requiredUpgradeHeaders }

    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        inner.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        inner.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
    }

    func upgrade(channel: any Channel, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<UpgradeResult> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(MaskingWebSocketFrameEncoder())
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)))
            try channel.pipeline.syncOperations.addHandler(WebSocketProtocolErrorHandler(isServer: false))
        }.flatMap {
            upgradePipelineHandler(channel, upgradeResponse)
        }
    }
}
