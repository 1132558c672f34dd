public import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization

/// The default ``SignalingConnector``: a WebSocket to the server over SwiftNIO — TCP (and
/// TLS for `wss`), then the HTTP/1.1 upgrade on the endpoint's path.
public struct WebSocketSignalingConnector: SignalingConnector {
    /// The server.
    public var endpoint: ServerEndpoint
    /// The largest frame accepted (the server's message limit).
    public var maxFrameBytes: Int
    /// The longest TCP, TLS and upgrade may take together; the client's own connect timer
    /// abandons the attempt too.
    public var connectTimeout: Duration
    /// The event loops.
    public var group: any EventLoopGroup

    /// A connector to `endpoint`.
    public init(endpoint: ServerEndpoint, maxFrameBytes: Int, connectTimeout: Duration, group: any EventLoopGroup) {
        self.endpoint = endpoint
        self.maxFrameBytes = maxFrameBytes
        self.connectTimeout = connectTimeout
        self.group = group
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    public func connect(_ attempt: SignalingConnectAttempt) async throws -> any SignalingConnection {
        let endpoint = endpoint
        let maxFrameSize = maxFrameBytes
        let pongLog = PongLog()
        let upgrade = try await endpoint.connect(group: group, timeout: TimeAmount(connectTimeout)) { channel in
            attempt.whenAbandoned { channel.close(promise: nil) }
            return channel.eventLoop.makeCompletedFuture {
                let upgrader = MaskingWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(PongObserver(log: pongLog))
                        return .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: endpoint.hostHeader)
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.webSocketPath, headers: headers)
                let upgradeConfiguration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgradeConfiguration)
                // The server's `connected` greeting often arrives in the same segment as the
                // 101 response: hand those bytes to the WebSocket decoder, don't drop them.
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            }
        }
        switch try await upgrade.get() {
        case .websocket(let channel): return Connection(channel: channel, pongLog: pongLog)
        case .refused: throw SignalingClientError.connectFailed
        }
    }

    /// The payload of the latest pong of a connection, recorded on its event loop as the
    /// frame is decoded.
    final class PongLog: Sendable {
        let latest = Atomic<UInt64>(0)
    }

    /// Records pongs in a ``PongLog`` and passes every frame on.
    final class PongObserver: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = WebSocketFrame
        let log: PongLog

        init(log: PongLog) { self.log = log }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .pong, frame.length == 8 {
                let payload = frame.unmaskedData
                if let value = payload.getInteger(at: payload.readerIndex, as: UInt64.self) {
                    log.latest.store(value, ordering: .relaxed)
                }
            }
            context.fireChannelRead(data)
        }
    }

    /// One upgraded WebSocket.
    final class Connection: SignalingConnection {
        let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
        let pongLog: PongLog
        /// The writer while ``serve(opened:received:)`` runs.
        let writer = Mutex<NIOAsyncChannelOutboundWriter<WebSocketFrame>?>(nil)

        init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, pongLog: PongLog) {
            self.channel = channel
            self.pongLog = pongLog
        }

        var latestPong: UInt64 { pongLog.latest.load(ordering: .relaxed) }

        func serve(
            opened: @Sendable () async -> Bool, received: @Sendable (SignalingMachine.Frame) async -> Void
        ) async {
            do {
                try await channel.executeThenClose { inbound, outbound in
                    writer.withLock { $0 = outbound }
                    guard await opened() else { return }
                    for try await frame in inbound {
                        let data = frame.unmaskedData
                        await received(
                            SignalingMachine.Frame(
                                opcode: Self.opcode(frame.opcode), fin: frame.fin,
                                payload: Array(data.readableBytesView)))
                    }
                }
            } catch {}
            writer.withLock { $0 = nil }
        }

        func write(_ frame: SignalingMachine.Frame) async throws {
            guard let writer = writer.withLock({ $0 }) else { throw SignalingClientError.notConnected }
            guard let opcode = Self.opcode(frame.opcode) else { throw SignalingClientError.notConnected }
            // A client frame is masked (RFC 6455 §5.3; the mask key is not a secret).
            try await writer.write(
                WebSocketFrame(fin: frame.fin, opcode: opcode, maskKey: .random(), data: ByteBuffer(bytes: frame.payload)))
        }

        func write(contentsOf frames: [SignalingMachine.Frame]) async throws {
            guard let writer = writer.withLock({ $0 }) else { throw SignalingClientError.notConnected }
            var wire: [WebSocketFrame] = []
            wire.reserveCapacity(frames.count)
            for frame in frames {
                guard let opcode = Self.opcode(frame.opcode) else { throw SignalingClientError.notConnected }
                wire.append(WebSocketFrame(fin: frame.fin, opcode: opcode, maskKey: .random(), data: ByteBuffer(bytes: frame.payload)))
            }
            try await writer.write(contentsOf: wire)
        }

        func close() {
            channel.channel.close(promise: nil)
        }

        static func opcode(_ opcode: WebSocketOpcode) -> SignalingMachine.Frame.Opcode {
            switch opcode {
            case .text: .text
            case .binary: .binary
            case .continuation: .continuation
            case .ping: .ping
            case .pong: .pong
            case .connectionClose: .close
            default: .other
            }
        }

        /// The wire opcode; `nil` for ``SignalingMachine/Frame/Opcode/other``, which is only
        /// ever received.
        static func opcode(_ opcode: SignalingMachine.Frame.Opcode) -> WebSocketOpcode? {
            switch opcode {
            case .text: .text
            case .binary: .binary
            case .continuation: .continuation
            case .ping: .ping
            case .pong: .pong
            case .close: .connectionClose
            case .other: nil
            }
        }
    }
}
