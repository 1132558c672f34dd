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
        return try await withTimeout(timeout, clock: clock, error: NIOHTTPTransportError.timedOut) {
            let channel = try await endpoint.connect(group: group, timeout: connectTimeout) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
            return try await channel.executeThenClose { inbound, outbound in
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: endpoint.hostHeader)
                headers.add(name: "Content-Type", value: "application/json")
                headers.add(name: "Content-Length", value: String(request.body.count))
                headers.add(name: "Connection", value: "close")
                let head = HTTPRequestHead(
                    version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.path, headers: headers)
                try await outbound.write(.head(head))
                try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: request.body))))
                try await outbound.write(.end(nil))

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
