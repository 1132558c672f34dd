import Crypto
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A WebSocket server on 127.0.0.1 that completes the upgrade, greets with `connected`
/// like the Inviso server, and then never answers anything — not even a ping — so the
/// client's pong timeout is what ends the connection.
final class SilentWebSocketServer: Sendable {
    private let channel: any Channel
    private let counter: UpgradeCounter

    var port: Int { channel.localAddress?.port ?? 0 }

    init() async throws {
        let box = UpgradeCounter()
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(counter: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        counter = box
    }

    /// How many WebSocket upgrades it completed.
    var upgradeCount: Int { counter.value.withLock { $0 } }

    func close() async { try? await channel.close() }

    final class UpgradeCounter: Sendable {
        let value = Mutex(0)
    }

    /// Reads the HTTP request, answers 101 with the greeting, then swallows every byte.
    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var request: [UInt8] = []
        private var upgraded = false
        private let counter: UpgradeCounter

        init(counter: UpgradeCounter) { self.counter = counter }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !upgraded else { return }
            var buffer = unwrapInboundIn(data)
            request += buffer.readBytes(length: buffer.readableBytes) ?? []
            guard let text = String(bytes: request, encoding: .utf8), text.contains("\r\n\r\n") else {
                if request.count > 16_384 { context.close(promise: nil) }
                return
            }
            guard let key = text.split(separator: "\r\n")
                .first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") })?
                .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
            else {
                context.close(promise: nil)
                return
            }
            upgraded = true
            counter.value.withLock { $0 += 1 }
            // RFC 6455 §4.2.2: base64(SHA-1(key ‖ the protocol's GUID)).
            let digest = Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
            let accept = Data(digest).base64EncodedString()
            var out = context.channel.allocator.buffer(capacity: 256)
            out.writeString(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(accept)\r\n\r\n")
            let greeting = Array(#"{"type":"connected","clientId":"silent","server":"silent"}"#.utf8)
            out.writeBytes([0x81, UInt8(greeting.count)] + greeting)  // FIN + text, unmasked, < 126 bytes
            context.writeAndFlush(wrapOutboundOut(out), promise: nil)
        }
    }
}
