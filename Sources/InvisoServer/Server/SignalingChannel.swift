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
        /// An upgrade request we refused (wrong path or headers): answered with 400.
        case refusedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    public struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        public let channel: any Channel
    }

    public let responder: HTTPChannelHandler.Responder
    private let hub: SignalingHub
    private let maxMessageBytes: Int
    private let silenceTimeout: TimeAmount
    private let http1: HTTP1Channel.Configuration

    init(
        responder: @escaping HTTPChannelHandler.Responder, hub: SignalingHub, maxMessageBytes: Int, silenceTimeout: TimeAmount,
        http1: HTTP1Channel.Configuration = .init()
    ) {
        self.responder = responder
        self.hub = hub
        self.maxMessageBytes = maxMessageBytes
        self.silenceTimeout = silenceTimeout
        self.http1 = http1
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let attempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let hub = self.hub
            let maxMessageBytes = self.maxMessageBytes
            let silenceTimeout = self.silenceTimeout
            let upgrader = NIOTypedWebSocketServerUpgrader<Negotiated>(
                maxFrameSize: maxMessageBytes,
                shouldUpgrade: { channel, head in
                    attempted.value = true
                    let path = head.uri
                    let accepted = path == "/" || path.hasPrefix("/?")
                    return channel.eventLoop.makeSucceededFuture(accepted ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.syncOptions?.setOption(
                            ChannelOptions.writeBufferWaterMark,
                            value: .init(low: SocketWriter.lowWaterMark, high: SocketWriter.highWaterMark))
                        let handlers = channel.pipeline.syncOperations
                        try handlers.addHandler(
                            NIOWebSocketFrameAggregator(
                                minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1_024,
                                maxAccumulatedFrameSize: maxMessageBytes))
                        try handlers.addHandler(SignalingSocketHandler(hub: hub, silenceTimeout: silenceTimeout))
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
                        return attempted.value ? .refusedUpgrade(http) : .http(http)
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<Negotiated>(upgradeConfiguration: upgrade)
            configuration.enablePipelining = false  // NIOAsyncChannel serves one request at a time
            configuration.enableErrorHandling = false  // Hummingbird answers malformed requests
            configuration.enableResponseHeaderValidation = false  // swift-http-types validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let negotiated = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
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
            case .refusedUpgrade(let http):
                try await http.executeThenClose { _, outbound in
                    let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
                    try await outbound.write(contentsOf: [.head(head), .end(nil)])
                }
            }
        } catch {
            logger.debug("connection ended during negotiation", metadata: ["error.type": "\(type(of: error))"])
        }
    }
}
