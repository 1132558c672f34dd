import InvisoKit
import NIOCore
import NIOPosix
import Synchronization

/// A whole WebSocket data message the proxy saw going from the server to a client.
struct ProxiedMessage: Sendable, Equatable {
    enum Kind: UInt8, Sendable { case text = 0x1, binary = 0x2 }
    var kind: Kind
    var payload: [UInt8]
}

/// Rewrites the server → client byte stream of one proxied TCP connection.
///
/// The HTTP response head is passed through. When it is `HTTP/1.1 101` the rest of the
/// stream is parsed as RFC 6455 server frames: control frames (ping, pong, close) pass
/// through byte for byte, even between the fragments of a message; text and binary
/// messages, fragmented or not, are reassembled, handed to `transform`, and written as one
/// unmasked FIN frame with the shortest length encoding (7, 16 or 64 bits). Any other
/// response leaves the connection a plain pipe. Buffers are bounded: a head above
/// `maxHeaderBytes` or a message above `maxMessageBytes` is a ``Failure``.
struct ServerStreamRewriter {
    enum Failure: Error, Equatable, CustomStringConvertible {
        case headerTooLarge
        case messageTooLarge
        /// Something this proxy cannot rewrite faithfully (RSV bits, i.e. an extension such
        /// as permessage-deflate; a reserved opcode; a stray continuation).
        case unsupported(String)

        var description: String {
            switch self {
            case .headerTooLarge: "HTTP response head too large"
            case .messageTooLarge: "WebSocket message too large"
            case .unsupported(let what): "unsupported WebSocket stream: \(what)"
            }
        }
    }

    private enum Mode { case header, webSocket, passthrough }

    let maxHeaderBytes: Int
    let maxMessageBytes: Int
    /// Returns the replacement payload, or nil to keep the message as it is.
    let transform: @Sendable (ProxiedMessage) -> [UInt8]?
    private var mode = Mode.header
    private var pending: [UInt8] = []
    private var fragments: ProxiedMessage?

    init(
        maxHeaderBytes: Int = 16_384, maxMessageBytes: Int = 1 << 22,
        transform: @escaping @Sendable (ProxiedMessage) -> [UInt8]?
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxMessageBytes = maxMessageBytes
        self.transform = transform
    }

    /// Whether the stream switched to WebSocket frames.
    var isWebSocket: Bool { mode == .webSocket }

    /// Takes the next bytes from the server; returns the bytes to send to the client.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        switch mode {
        case .passthrough:
            return Array(bytes)
        case .header:
            pending.append(contentsOf: bytes)
            guard let end = Self.headerEnd(pending) else {
                guard pending.count <= maxHeaderBytes else { throw .headerTooLarge }
                return []
            }
            output += pending[..<end]
            mode = pending.starts(with: Array("HTTP/1.1 101 ".utf8)) ? .webSocket : .passthrough
            pending.removeFirst(end)
            if mode == .passthrough {
                output += pending
                pending = []
                return output
            }
        case .webSocket:
            pending.append(contentsOf: bytes)
        }
        var offset = 0
        while let consumed = try frame(at: offset, into: &output) { offset += consumed }
        pending.removeFirst(offset)
        return output
    }

    /// The index just past `\r\n\r\n`, if the head is complete.
    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index + 4
        }
        return nil
    }

    /// Parses one frame at `start` of `pending`; returns its length, or nil when incomplete.
    private mutating func frame(at start: Int, into output: inout [UInt8]) throws(Failure) -> Int? {
        let available = pending.count - start
        guard available >= 2 else { return nil }
        let first = pending[start], second = pending[start + 1]
        let isFinal = first & 0x80 != 0
        let opcode = first & 0x0F
        guard first & 0x70 == 0 else { throw .unsupported("RSV bits set") }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(pending[start + 2]) << 8 | UInt64(pending[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = pending[(start + 2)..<(start + 10)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            headerLength = 10
        }
        guard length <= UInt64(maxMessageBytes) else { throw .messageTooLarge }
        let isMasked = second & 0x80 != 0
        if isMasked { headerLength += 4 }
        let total = headerLength + Int(length)
        guard available >= total else { return nil }
        var payload = Array(pending[(start + headerLength)..<(start + total)])
        if isMasked {
            let key = pending[(start + headerLength - 4)..<(start + headerLength)].map { $0 }
            for index in payload.indices { payload[index] ^= key[index % 4] }
        }
        switch opcode {
        case 0x8, 0x9, 0xA:
            guard isFinal, length <= 125 else { throw .unsupported("fragmented or long control frame") }
            output += pending[start..<(start + total)]
        case 0x1, 0x2:
            guard fragments == nil else { throw .unsupported("a new message inside a fragmented one") }
            let message = ProxiedMessage(kind: opcode == 0x1 ? .text : .binary, payload: payload)
            if isFinal { emit(message, into: &output) } else { fragments = message }
        case 0x0:
            guard var message = fragments else { throw .unsupported("continuation without a message") }
            guard message.payload.count + payload.count <= maxMessageBytes else { throw .messageTooLarge }
            message.payload += payload
            if isFinal {
                fragments = nil
                emit(message, into: &output)
            } else {
                fragments = message
            }
        default:
            throw .unsupported("reserved opcode \(opcode)")
        }
        return total
    }

    private func emit(_ message: ProxiedMessage, into output: inout [UInt8]) {
        output += Self.frame(message.kind.rawValue, payload: transform(message) ?? message.payload)
    }

    /// An unmasked FIN frame with the shortest length encoding.
    static func frame(_ opcode: UInt8, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        switch payload.count {
        case ..<126:
            frame.append(UInt8(payload.count))
        case ...0xFFFF:
            frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            frame.append(127)
            frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64($0))) }
        }
        return frame + payload
    }
}

/// A TCP proxy on 127.0.0.1 that plays a malicious server: the clients use it as their
/// server endpoint (REST and WebSocket share host and port), it forwards every connection
/// to the real server, passes client → server bytes untouched, and lets `transform`
/// rewrite whole WebSocket messages going server → client (``ServerStreamRewriter``).
///
/// Each accepted connection and its upstream connection share one event loop. Reading
/// stops while the other side is not writable, so nothing buffers without bound.
/// ``close()`` closes the listener and every proxied connection.
final class TamperingProxy: Sendable {
    private let listener: any Channel
    private let state: State

    final class State: Sendable {
        let channels = Mutex<[any Channel]>([])
        let failures = Mutex<[ServerStreamRewriter.Failure]>([])
        let upgrades = Mutex(0)
    }

    var port: Int { listener.localAddress?.port ?? 0 }
    /// The endpoint clients use instead of the real server's.
    var endpoint: ServerEndpoint { ServerEndpoint(host: "127.0.0.1", port: port, useTLS: false) }
    /// Streams the proxy could not rewrite (each closed its connection). Empty when healthy.
    var failures: [ServerStreamRewriter.Failure] { state.failures.withLock { $0 } }
    /// How many proxied connections switched to WebSocket.
    var webSocketConnections: Int { state.upgrades.withLock { $0 } }

    init(upstreamPort: Int, transform: @escaping @Sendable (ProxiedMessage) -> [UInt8]?) async throws {
        let state = State()
        self.state = state
        listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                // The accepted channel registers (and starts reading) only once this future
                // completes, so nothing is read before both forwarders are in place.
                ClientBootstrap(group: client.eventLoop)
                    .connectTimeout(.seconds(5))
                    .channelInitializer { upstream in
                        upstream.eventLoop.makeCompletedFuture {
                            let rewriter = ServerStreamRewriter(transform: transform)
                            try upstream.pipeline.syncOperations.addHandler(
                                Forwarder(peer: client, rewriter: rewriter, state: state))
                        }
                    }
                    .connect(host: "127.0.0.1", port: upstreamPort)
                    .flatMapThrowing { upstream in
                        state.channels.withLock { $0 += [client, upstream] }
                        try client.pipeline.syncOperations.addHandler(Forwarder(peer: upstream, rewriter: nil, state: state))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    /// Closes the listener and every proxied connection, and waits until they are closed.
    func close() async {
        try? await listener.close()
        let channels = state.channels.withLock { channels in
            defer { channels = [] }
            return channels
        }
        for channel in channels {
            try? await channel.close()
            try? await channel.closeFuture.get()
        }
    }

    /// Copies bytes to `peer` (through `rewriter` when set) with back-pressure, and closes
    /// `peer` when its own channel closes.
    private final class Forwarder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let peer: any Channel
        private var rewriter: ServerStreamRewriter?
        private let state: State

        init(peer: any Channel, rewriter: ServerStreamRewriter?, state: State) {
            self.peer = peer
            self.rewriter = rewriter
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            guard rewriter != nil else {
                peer.write(buffer, promise: nil)
                return
            }
            do throws(ServerStreamRewriter.Failure) {
                let wasWebSocket = rewriter?.isWebSocket == true
                let output = try rewriter?.feed(buffer.readableBytesView) ?? []
                if !wasWebSocket, rewriter?.isWebSocket == true { state.upgrades.withLock { $0 += 1 } }
                if !output.isEmpty { peer.write(ByteBuffer(bytes: output), promise: nil) }
            } catch {
                state.failures.withLock { $0.append(error) }
                context.close(promise: nil)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            peer.flush()
            if !peer.isWritable { _ = context.channel.setOption(ChannelOptions.autoRead, value: false) }
            context.fireChannelReadComplete()
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { _ = peer.setOption(ChannelOptions.autoRead, value: true) }
            context.fireChannelWritabilityChanged()
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
