import NIOCore
import NIOPosix
import Synchronization

/// A minimal WebSocket client for the server benchmark: thousands of these must be cheap,
/// so it is one NIO handler that sends the upgrade request, then parses unmasked server
/// frames and writes pre-masked client frames. Not a general client: it assumes the
/// server speaks RFC 6455 correctly (the benchmark's own server does).
final class BenchWebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Called on the event loop for each text or binary frame's payload.
    var onFrame: (ByteBufferView) -> Void = { _ in }
    private var upgraded = false
    private var cumulation: ByteBuffer?
    private let host: String
    private let connected: EventLoopPromise<Void>
    private var greeted = false
    private var expectation: (needle: [UInt8], promise: EventLoopPromise<Void>)?

    init(host: String, connected: EventLoopPromise<Void>) {
        self.host = host
        self.connected = connected
    }

    func channelActive(context: ChannelHandlerContext) {
        let request =
            "GET / HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        connected.fail(ChannelError.ioOnClosedChannel)
        expectation?.promise.fail(ChannelError.ioOnClosedChannel)
        expectation = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Succeeds when a frame containing `needle` arrives (one expectation at a time).
    func expect(_ needle: [UInt8], on loop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        expectation = (needle, promise)
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if cumulation == nil {
            cumulation = incoming
        } else {
            cumulation!.writeBuffer(&incoming)
        }
        if !upgraded {
            guard let view = cumulation?.readableBytesView, let end = Self.headerEnd(view) else { return }
            let head = cumulation!.readString(length: end - view.startIndex + 4) ?? ""
            guard head.hasPrefix("HTTP/1.1 101") else {
                context.close(promise: nil)
                return
            }
            upgraded = true
        }
        while let (opcode, payload) = nextFrame() {
            if opcode == 0x8 {
                context.close(promise: nil)
                return
            }
            guard opcode == 0x1 || opcode == 0x2 else { continue }
            let bytes = payload.readableBytesView
            if !greeted {
                greeted = true
                connected.succeed()
                continue
            }
            if let (needle, promise) = expectation, Self.contains(bytes, needle) {
                expectation = nil
                promise.succeed()
            }
            onFrame(bytes)
        }
        if cumulation?.readableBytes == 0 { cumulation = nil } else { cumulation?.discardReadBytes() }
    }

    /// The next complete frame in the cumulation, if any.
    private func nextFrame() -> (UInt8, ByteBuffer)? {
        guard var buffer = cumulation, buffer.readableBytes >= 2,
            let first: UInt8 = buffer.readInteger(), let second: UInt8 = buffer.readInteger()
        else { return nil }
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let extended: UInt16 = buffer.readInteger() else { return nil }
            length = Int(extended)
        } else if length == 127 {
            guard let extended: UInt64 = buffer.readInteger() else { return nil }
            length = Int(extended)
        }
        guard let payload = buffer.readSlice(length: length) else { return nil }
        cumulation = buffer
        return (first & 0x0F, payload)
    }

    private static func headerEnd(_ view: ByteBufferView) -> Int? {
        var index = view.startIndex
        while index + 3 < view.endIndex {
            if view[index] == 13 && view[index + 1] == 10 && view[index + 2] == 13 && view[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }

    private static func contains(_ haystack: ByteBufferView, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return false }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == first && haystack[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// A client text frame (masked with a zero key, which leaves the payload as is).
    static func textFrame(_ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        frame += [0, 0, 0, 0]
        return frame + payload
    }
}

/// One benchmark client connection.
struct BenchSocket: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<BenchWebSocketHandler>

    /// Connects from `source` (a loopback address) to the server and waits for `connected`.
    static func connect(group: any EventLoopGroup, host: String, port: Int, source: String?) async throws -> BenchSocket {
        let loop = group.next()
        let connected = loop.makePromise(of: Void.self)
        var bootstrap = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let handler = BenchWebSocketHandler(host: host, connected: connected)
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }.connect(host: host, port: port).get()
        try await connected.futureResult.get()
        let handler = try await channel.pipeline.handler(type: BenchWebSocketHandler.self).map {
            NIOLoopBound($0, eventLoop: channel.eventLoop)
        }.get()
        return BenchSocket(channel: channel, handler: handler)
    }

    /// Sends already-framed bytes.
    func send(_ frames: [UInt8]) -> EventLoopFuture<Void> {
        channel.writeAndFlush(ByteBuffer(bytes: frames))
    }

    /// Sends `text` and resolves when a frame containing `needle` arrives.
    func send(_ text: String, thenExpect needle: String) -> EventLoopFuture<Void> {
        let loop = channel.eventLoop
        return loop.flatSubmit {
            let waiting = handler.value.expect(Array(needle.utf8), on: loop)
            return send(BenchWebSocketHandler.textFrame(Array(text.utf8))).flatMap { waiting }
        }
    }

    /// Counts every frame into `counter`.
    func count(into counter: FrameCounter) -> EventLoopFuture<Void> {
        channel.eventLoop.submit { handler.value.onFrame = { _ in counter.add() } }
    }
}

/// Frames received across all sockets.
final class FrameCounter: Sendable {
    private let value = Atomic<Int>(0)

    func add() { value.add(1, ordering: .relaxed) }

    var count: Int { value.load(ordering: .relaxed) }
}
