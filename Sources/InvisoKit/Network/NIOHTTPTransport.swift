public import InvisoTime
public import NIOCore
import NIOHTTP1
import NIOPosix

/// ``HTTPTransport`` on SwiftNIO: one HTTP/1.1 connection per request (`Connection: close`).
///
/// Why SwiftNIO directly rather than async-http-client: the REST API is five small JSON
/// calls made once per session, so connection pooling, redirects, proxies and HTTP/2 buy
/// nothing here, while async-http-client would add swift-nio-http2 and
/// swift-nio-transport-services to every client build. The WebSocket client
/// (``SignalingClient``) needs SwiftNIO directly anyway (control-frame pings with their
/// own pong timeout), so both share one bootstrap and one TLS set-up
/// (``ServerEndpoint``), which also runs on iOS.
///
/// Answers larger than ``maxResponseBytes`` are refused: the API's are a few hundred bytes.
public struct NIOHTTPTransport: HTTPTransport {
    /// The largest response body read (64 KiB).
    public static let maxResponseBytes = 64 * 1024

    private let endpoint: ServerEndpoint
    private let group: any EventLoopGroup
    private let timeout: Duration
    private let clock: any InvisoClock

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - endpoint: The server.
    ///   - group: The event loops; `nil` uses NIO's shared singleton.
    ///   - timeout: The longest a whole request may take (connect, send, answer); 15 s.
    ///   - clock: Measures the timeout.
    public init(
        endpoint: ServerEndpoint,
        group: (any EventLoopGroup)? = nil,
        timeout: Duration = .seconds(15),
        clock: any InvisoClock = SystemClock()
    ) {
        self.endpoint = endpoint
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
        self.timeout = timeout
        self.clock = clock
    }

    /// The TCP connect timeout NIO gets: the whole request's timeout, sub-second parts kept
    /// (building it from `Duration.components.seconds` cut 0.5 s to 0 s, which failed every
    /// connection at once).
    package var connectTimeout: TimeAmount { TimeAmount(timeout) }

    /// Sends `request` and reads the whole answer.
    ///
    /// - Throws: ``NIOHTTPTransportError`` or a NIO error when the connection fails, the
    ///   answer is malformed or too large, or ``init(endpoint:group:timeout:)``'s timeout
    ///   passes.
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let endpoint = endpoint
        let group = group
        let connectTimeout = self.connectTimeout
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: endpoint.hostHeader)
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(request.body.count))
        headers.add(name: "Connection", value: "close")
        let head = HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.path, headers: headers)
        let body = request.body
        return try await withTimeout(timeout, clock: clock, error: NIOHTTPTransportError.timedOut) {
            let channel = try await endpoint.connect(group: group, timeout: connectTimeout) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(RequestOnConnect(head: head, body: body))
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
            return try await channel.executeThenClose { inbound, _ in
                var status: Int?
                var body: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        status = Int(head.status.code)
                    case .body(let buffer):
                        guard body.count + buffer.readableBytes <= Self.maxResponseBytes else {
                            throw NIOHTTPTransportError.responseTooLarge
                        }
                        body.append(contentsOf: buffer.readableBytesView)
                    case .end:
                        guard let status else { throw NIOHTTPTransportError.malformedResponse }
                        return HTTPTransportResponse(status: status, body: body)
                    }
                }
                throw NIOHTTPTransportError.malformedResponse
            }
        }
    }
}

/// Writes the request from the event loop as soon as the connection is up.
///
/// Not from the calling task: on a loaded host the cooperative pool can stall that task
/// for seconds between the connect and its first write, and a server closes a connection
/// whose request does not arrive within its handshake deadline (`inviso serve`: 10 s).
/// The request then met a reset (seen under the parallel test suite).
private final class RequestOnConnect: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let body: [UInt8]

    init(head: HTTPRequestHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { write(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        write(context)
        context.fireChannelActive()
    }

    private func write(_ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Why ``NIOHTTPTransport`` got no usable answer.
public struct NIOHTTPTransportError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case timedOut, responseTooLarge, malformedResponse
    }

    private let code: Code

    /// The request did not complete within the transport's timeout.
    public static let timedOut = NIOHTTPTransportError(code: .timedOut)
    /// The response body exceeded ``NIOHTTPTransport/maxResponseBytes``.
    public static let responseTooLarge = NIOHTTPTransportError(code: .responseTooLarge)
    /// The connection ended before a complete response.
    public static let malformedResponse = NIOHTTPTransportError(code: .malformedResponse)

    /// What went wrong.
    public var description: String {
        switch code {
        case .timedOut: "HTTP request timed out"
        case .responseTooLarge: "HTTP response too large"
        case .malformedResponse: "incomplete HTTP response"
        }
    }
}
