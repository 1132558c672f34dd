import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

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
    /// the trust roots (``trustRootsFile``, else the system's) and `host`.
    public var useTLS: Bool
    /// A PEM file of certificates to trust *instead of* the system trust roots (a private
    /// CA or a self-signed server certificate); `nil` for the system roots.
    public var trustRootsFile: String?
    /// The WebSocket signaling path (`/` on the Inviso server; see `docs/server.md`).
    public var webSocketPath: String

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - host: The host name or IP address.
    ///   - port: The TCP port.
    ///   - useTLS: Whether to use TLS; defaults to `true`.
    ///   - webSocketPath: The signaling path; defaults to `/`.
    ///   - trustRootsFile: A PEM file of certificates to trust instead of the system roots.
    public init(host: String, port: Int, useTLS: Bool = true, webSocketPath: String = "/", trustRootsFile: String? = nil) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.webSocketPath = webSocketPath
        self.trustRootsFile = trustRootsFile
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
        let tlsContext = useTLS ? try await tlsContext() : nil
        let literal = try? SocketAddress(ipAddress: host, port: port)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Output> = { channel in
            do {
                if let tlsContext {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: tlsContext, serverHostname: literal == nil ? host : nil))
                }
                return try configure(channel)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        // An address literal is connected to as it is: a host name goes through NIO's
        // resolver (getaddrinfo on a thread of its own) and Happy Eyeballs, which a
        // literal does not need.
        if let literal { return try await bootstrap.connect(to: literal, channelInitializer: initializer) }
        return try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
    }
}

extension ServerEndpoint {
    /// The TLS contexts made so far, by trust roots file (`nil`: the system's roots).
    private static let tlsContexts = Mutex<[String?: NIOSSLContext]>([:])

    /// Full certificate verification against ``trustRootsFile`` or the system roots.
    ///
    /// Made once per process and trust roots, on NIO's thread pool: loading the system's
    /// roots takes tens of milliseconds (about 100 in a debug build), which every REST
    /// request and signaling connection paid on its event loop, holding up every other
    /// connection of that loop. A trust roots file is read once; a process that must see
    /// a changed file starts again.
    private func tlsContext() async throws -> NIOSSLContext {
        let key = trustRootsFile
        if let cached = Self.tlsContexts.withLock({ $0[key] }) { return cached }
        let made = try await NIOThreadPool.singleton.runIfActive {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let key {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(key))
            }
            return try NIOSSLContext(configuration: configuration)
        }
        // Two first connections at once may both make one; the first stored is kept.
        return Self.tlsContexts.withLock { contexts in
            if let stored = contexts[key] { return stored }
            contexts[key] = made
            return made
        }
    }
}
