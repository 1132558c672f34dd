public import NIOCore
import NIOPosix
import NIOSSL

/// Where the Inviso server listens: a host, a port and whether to use TLS.
///
/// Both ``NIOHTTPTransport`` (REST) and ``SignalingClient`` (WebSocket) connect through
/// the same endpoint, so one value describes the server for a whole client.
public struct ServerEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// Whether to speak TLS (`https` / `wss`), verifying the server's certificate against
    /// the system trust roots and `host`.
    public var useTLS: Bool
    /// The WebSocket signaling path (`/` on the Inviso server; see `docs/server.md`).
    public var webSocketPath: String

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - host: The host name or IP address.
    ///   - port: The TCP port.
    ///   - useTLS: Whether to use TLS; defaults to `true`.
    ///   - webSocketPath: The signaling path; defaults to `/`.
    public init(host: String, port: Int, useTLS: Bool = true, webSocketPath: String = "/") {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.webSocketPath = webSocketPath
    }

    /// `host:port` and the scheme; no path or query, nothing secret.
    public var description: String { "\(useTLS ? "https" : "http")://\(host):\(port)" }

    /// The `Host` header value.
    var hostHeader: String { "\(host):\(port)" }
}

// MARK: - Connecting

extension ServerEndpoint {
    /// Opens a TCP (and, with ``useTLS``, TLS) connection and lets `configure` add the
    /// protocol handlers on the channel's event loop.
    ///
    /// Shared by the REST transport and the signaling client so that both use the same
    /// bootstrap, timeout and TLS set-up.
    func connect<Output: Sendable>(
        group: any EventLoopGroup,
        timeout: TimeAmount,
        configure: @escaping @Sendable (any Channel) throws -> EventLoopFuture<Output>
    ) async throws -> Output {
        let host = host
        let tlsContext = useTLS ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        return try await ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                do {
                    if let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tlsContext, serverHostname: host.isIPAddress ? nil : host))
                    }
                    return try configure(channel)
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 literal (not valid as a TLS server name).
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
