import HTTPTypes
public import HummingbirdCore
public import Logging
public import NIOCore
import NIOHTTP1
public import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Hummingbird's child channel for the signaling server: HTTP/1.1 served by Hummingbird's
/// responder, and `GET /` with `Upgrade: websocket` upgraded to a signaling socket.
///
/// The upgraded socket is served by NIO handlers (``SignalingSocketHandler``) rather than
/// by a Swift task per connection as `HTTP1WebSocketUpgradeChannel` does: a task's async
/// stack keeps its deepest extent for the task's life, which measured ≈ 16 KiB of the
/// ≈ 24 KiB an idle hummingbird-websocket socket costs here; the server must hold tens of
/// thousands of idle sockets at ≤ 20 KiB each (see `docs/server.md`).
public struct SignalingChannel: ServerChildChannel, HTTPChannelHandler {
    /// The negotiated result of a connection's first request.
    public enum Negotiated: Sendable {
        /// Upgraded: the NIO handlers serve it; nothing left to do.
        case signaling
        /// Plain HTTP, served by Hummingbird.
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade request we refused: answered with 400 (wrong path or headers), or
        /// 426 and `Sec-WebSocket-Version: 13` for another protocol version (RFC 6455 §4.4).
        case refusedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>, versionMismatch: Bool)
    }

    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        public let channel: any Channel
    }

    /// A connection refused by a connection cap before it was set up.
    struct Refused: Error {}

    public let responder: HTTPChannelHandler.Responder
    private let hub: SignalingHub
    private let guardian: ConnectionGuardian
    private let maxMessageBytes: Int
    private let socketLimits: SocketLimits
    private let timeouts: ConnectionGuardHandler.Timeouts
    private let ipv6PrefixLength: Int
    private let http1: HTTP1Channel.Configuration

    init(
        responder: @escaping HTTPChannelHandler.Responder, hub: SignalingHub, guardian: ConnectionGuardian, limits: ServerLimits,
        http1: HTTP1Channel.Configuration = .init()
    ) {
        self.responder = responder
        self.hub = hub
        self.guardian = guardian
        maxMessageBytes = limits.webSocketMessageBytes
        socketLimits = limits.socket
        timeouts = .init(
            handshake: TimeAmount(limits.handshakeTimeout), request: TimeAmount(limits.requestTimeout),
            keepAlive: TimeAmount(limits.keepAliveTimeout))
        ipv6PrefixLength = limits.ipv6PrefixLength
        self.http1 = http1
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let source = SourceKey.of(channel.remoteAddress, ipv6PrefixLength: ipv6PrefixLength)
        guard let id = guardian.admit(channel, source: source) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(Value(negotiated: channel.eventLoop.makeFailedFuture(Refused()), channel: channel))
        }
        // Forgotten when the channel closes, however it closes: a client that is gone
        // before the handlers below are added never delivers channelInactive to them, and
        // its entry would otherwise count against its source forever.
        let guardian = self.guardian
        channel.closeFuture.whenComplete { _ in guardian.remove(id) }
        return channel.eventLoop.makeCompletedFuture {
            let connectionGuard = ConnectionGuardHandler(guardian: guardian, id: id, timeouts: timeouts)
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
            let boundGuard = NIOLoopBound(connectionGuard, eventLoop: channel.eventLoop)
            let observer = HTTPProgressObserver(connectionGuard: connectionGuard)
            let boundObserver = NIOLoopBound(observer, eventLoop: channel.eventLoop)
            let hub = self.hub
            let maxMessageBytes = self.maxMessageBytes
            let socketLimits = self.socketLimits
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: maxMessageBytes,
                shouldUpgrade: { channel, head in
                    let path = head.uri
                    let accepted = path == "/" || path.hasPrefix("/?")
                    return channel.eventLoop.makeSucceededFuture(accepted ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.syncOptions?.setOption(
                            ChannelOptions.writeBufferWaterMark,
                            value: .init(low: SocketWriter.lowWaterMark, high: SocketWriter.highWaterMark))
                        boundGuard.value.upgraded()
                        let handlers = channel.pipeline.syncOperations
                        handlers.removeHandler(boundObserver.value, promise: nil)
                        try handlers.addHandler(SignalingSocketHandler(hub: hub, limits: socketLimits))
                        return .signaling
                    }
                }
            )
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handlers = channel.pipeline.syncOperations
                        try handlers.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try handlers.addHandlers(self.http1.additionalChannelHandlers())
                        try handlers.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: self.http1.idleTimeout.map { .init($0) }, logger: logger))
                        let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        switch boundObserver.value.upgradeRequested {
                        case nil: return .http(http)
                        case let version?: return .refusedUpgrade(http, versionMismatch: version != "13")
                        }
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(upgradeConfiguration: upgrade)
            configuration.enablePipelining = false  // NIOAsyncChannel serves one request at a time
            // A request NIO cannot parse (a garbage request line, Content-Length beside
            // Transfer-Encoding, a negative length, headers over the limit) gets 400 and
            // the connection is closed.
            configuration.enableErrorHandling = true
            configuration.enableResponseHeaderValidation = false  // swift-http-types validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let handlers = channel.pipeline.syncOperations
            let negotiated = try handlers.configureUpgradableHTTPServerPipeline(configuration: configuration)
            // Sees every request head and response end of the HTTP phase (for the deadlines),
            // including the upgrade request the upgrade handler consumes.
            let upgradeHandler = try handlers.context(handlerType: NIOTypedHTTPServerUpgradeHandler<Negotiated>.self).handler
            try handlers.addHandler(observer, position: .before(upgradeHandler))
            return Value(negotiated: negotiated, channel: channel)
        }
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .signaling:
                return  // the socket lives on in its NIO handlers
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refusedUpgrade(let http, let versionMismatch):
                try await http.executeThenClose { _, outbound in
                    var head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                    if versionMismatch {
                        head.status = .upgradeRequired
                        head.headerFields[.secWebSocketVersion] = "13"
                    }
                    try await outbound.write(contentsOf: [.head(head), .end(nil)])
                }
            }
        } catch {
            logger.debug("connection ended during negotiation", metadata: ["error.type": "\(type(of: error))"])
        }
    }
}
