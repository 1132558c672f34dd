import InvisoWire
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import InvisoKit

/// Our WebSocket masking and client frame encoder against SwiftNIO's, which they replace
/// on the client (and, for unmasking, on the server) for speed: the same bytes.
@Suite("WebSocket masking")
struct WebSocketMaskingTests {
    static func randomBytes(_ count: Int, _ generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test("masking equals SwiftNIO's for every length up to 100 and every phase, and undoes itself")
    func maskingMatchesNIO() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...100 {
            for phase in 0..<4 {
                let bytes = Self.randomBytes(count, &generator)
                let key = WebSocketMaskingKey.random()
                var expected = ByteBuffer(bytes: bytes)
                expected.webSocketMask(key, indexOffset: phase)
                var ours = bytes
                ours.withUnsafeMutableBytes { WebSocketMasking.apply((key[0], key[1], key[2], key[3]), to: $0, phase: phase) }
                #expect(ours == Array(expected.readableBytesView), "length \(count), phase \(phase)")
                ours.withUnsafeMutableBytes { WebSocketMasking.apply((key[0], key[1], key[2], key[3]), to: $0, phase: phase) }
                #expect(ours == bytes)
            }
        }
    }

    @Test("the client encoder writes the bytes SwiftNIO's encoder writes", arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
    func encoderMatchesNIO(length: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let payload = Self.randomBytes(length, &generator)
        let frames = [
            WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(bytes: payload)),
            WebSocketFrame(fin: false, opcode: .text, maskKey: nil, data: ByteBuffer(bytes: payload)),
            WebSocketFrame(fin: true, rsv1: true, opcode: .continuation, maskKey: .random(), data: ByteBuffer(bytes: payload)),
            WebSocketFrame(
                fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(bytes: payload),
                extensionData: ByteBuffer(bytes: [1, 2, 3])),
        ]
        for frame in frames {
            #expect(try Self.encode(frame, with: MaskingWebSocketFrameEncoder()) == Self.encode(frame, with: WebSocketFrameEncoder()))
        }
    }

    @Test("a frame our encoder wrote decodes to the frame that was written")
    func encodedFramesDecode() throws {
        var generator = SystemRandomNumberGenerator()
        let payload = Self.randomBytes(1_000, &generator)
        let frame = WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: ByteBuffer(bytes: payload))
        let bytes = try Self.encode(frame, with: MaskingWebSocketFrameEncoder())
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 16)))
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        let decoded = try #require(try channel.readInbound(as: WebSocketFrame.self))
        #expect(decoded.opcode == .binary && decoded.fin && decoded.maskKey == frame.maskKey)
        #expect(Array(decoded.unmaskedData.readableBytesView) == payload)
        _ = try channel.finish()
    }

    static func encode(_ frame: WebSocketFrame, with encoder: some ChannelOutboundHandler) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: encoder)
        try channel.writeOutbound(frame)
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        _ = try channel.finish()
        return bytes
    }
}
