import Foundation
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import InvisoWire
public import Logging
import NIOCore
import NIOSSL
public import ServiceLifecycle
public import UnixSignals
import Prometheus

/// The rendezvous and signaling server: the REST API, the WebSocket hub on `/`, health
/// and metrics, on one port.
///
/// ```swift
/// let store = try SQLiteRoomStore(path: "inviso-data/rooms.sqlite")
/// let server = try SignalingServer(configuration: .init(port: 8080), store: store, logger: logger)
/// try await server.run()   // until SIGTERM/SIGINT
/// ```
public struct SignalingServer: Sendable {
    /// Where it listens and its limits.
    public let configuration: ServerConfiguration
    /// The WebSocket hub.
    public let hub: SignalingHub
    /// Its metrics (`GET /metrics`).
    public let metrics: ServerMetrics
    let api: RoomAPI
    /// Connection caps and deadlines.
    let guardian: ConnectionGuardian
    let store: any RoomStore
    let environment: ServerEnvironment
    let logger: Logger
    let startedAt: Date

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - store: Where rooms live; ``run(services:onListening:)`` migrates it first.
    ///   - bus: The link to other instances sharing the store, if any.
    ///   - environment: Clock and randomness.
    public init(
        configuration: ServerConfiguration, store: any RoomStore, bus: (any SignalingBus)? = nil,
        environment: ServerEnvironment = .live, metrics: ServerMetrics = ServerMetrics(), logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.environment = environment
        self.metrics = metrics
        self.logger = logger
        startedAt = environment.now()
        hub = SignalingHub(
            store: store, bus: bus, limits: configuration.limits.signaling, environment: environment, metrics: metrics,
            logger: logger, maxQueuedBytesTotal: configuration.limits.queuedBytesTotal)
        guardian = ConnectionGuardian(
            limits: .init(
                total: configuration.limits.maxConnections, perSource: configuration.limits.connectionsPerSource,
                pendingPerSource: configuration.limits.pendingConnectionsPerSource),
            metrics: metrics)
        api = RoomAPI(
            store: store, hub: hub, environment: environment, limits: configuration.limits,
            sourceLimits: store.sharedSourceLimits(configuration.limits) ?? MemorySourceLimits(limits: configuration.limits),
            turn: configuration.turn, metrics: metrics, logger: logger)
    }

    /// Migrates the store, then serves until graceful shutdown (SIGTERM or SIGINT, or the
    /// surrounding service group's): the hub closes every socket with 1001 first, then
    /// the HTTP server finishes in-flight requests, then `services` stop.
    ///
    /// - Parameters:
    ///   - services: Services the server needs running first and stopped last (a
    ///     ``PostgresRoomStore``, a ``PostgresSignalingBus``).
    ///   - signals: The signals that start a graceful shutdown (none in tests).
    ///   - onListening: Called with the bound port once the server accepts connections.
    public func run(
        services: [any Service] = [], signals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: try makeServices(services, onListening: onListening), gracefulShutdownSignals: signals,
                logger: logger))
        try await group.run()
    }

    /// The services ``run(services:signals:onListening:)`` runs, in start order: `services`,
    /// the expiry sweeper, the HTTP application, the hub. A service group shuts them down
    /// in reverse order.
    public func makeServices(
        _ services: [any Service] = [], onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> [any Service] {
        services + [Sweeper(server: self), try makeApplication(onListening: onListening), hub]
    }

    /// The Hummingbird application (HTTP/1.1 with WebSocket upgrade, TLS when configured).
    /// It does not run the hub's service; ``run(services:signals:onListening:)`` does.
    public func makeApplication(
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let router = makeRouter()
        let limits = configuration.limits
        let hub = self.hub
        let guardian = self.guardian
        var base = HTTPServerBuilder { responder in
            SignalingChannel(responder: responder, hub: hub, guardian: guardian, limits: limits)
        }
        if let tls = configuration.tls {
            let certificates = try NIOSSLCertificate.fromPEMFile(tls.certificatePath).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: tls.keyPath, format: .pem)
            var tlsConfiguration = TLSConfiguration.makeServerConfiguration(certificateChain: certificates, privateKey: .privateKey(key))
            Self.harden(&tlsConfiguration)
            base = try .tls(base, tlsConfiguration: tlsConfiguration)
        }
        let store = self.store
        let logger = self.logger
        return Application(
            router: router, server: base,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? 0)
            },
            logger: logger
        ).withMigration(store)
    }

    /// TLS 1.2 or newer, and for TLS 1.2 only forward-secret AEAD suites (ECDHE with
    /// AES-GCM or ChaCha20-Poly1305): no TLS 1.0/1.1, no CBC-SHA1, no static-RSA key
    /// exchange. TLS 1.3's suites are all forward-secret AEAD.
    static func harden(_ configuration: inout TLSConfiguration) {
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = tls12CipherSuites
    }

    /// The TLS 1.2 suites offered, in OpenSSL's cipher-list syntax.
    static let tls12CipherSuites =
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
        + "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"

    // MARK: - Routes

    func makeRouter() -> Router<InvisoRequestContext> {
        let router = Router(context: InvisoRequestContext.self)
        router.middlewares.add(JSONErrorMiddleware())
        for route in RESTRoute.allCases {
            router.on(RouterPath(route.routerPath), method: HTTPRequest.Method(route.method)!) { request, context in
                try await respond(route, request, context)
            }
        }
        // The browser client's files (docs/web.md); the page itself is `GET /` below.
        router.get("/web/**") { request, _ in
            WebAssets.shared.response(for: request.uri.path, request: request) ?? Self.response(RESTReply(.notFound))
        }
        return router
    }

    private func respond(_ route: RESTRoute, _ request: Request, _ context: InvisoRequestContext) async throws -> Response {
        let reply: RESTReply
        switch route {
        case .root where WebAssets.wantsPage(request):
            // A browser gets the page; other clients (the app, monitors) the health JSON.
            guard let page = WebAssets.shared.response(for: "/", request: request) else { return Self.response(RESTReply(.notFound)) }
            return page
        case .root, .health:
            reply = RESTReply(status: 200, body: health())
        case .metrics:
            if let counts = try? await store.counts(now: environment.now()) {
                metrics.rooms.set(Double(counts.rooms))
                metrics.pendingCodes.set(Double(counts.pendings))
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        case .getRoom:
            reply = await api.getRoom(roomID: request.uri.queryParameters.get("roomid"))
        case .legacyGetRoom, .legacyAcceptRoom, .legacyDeleteRoom:
            reply = RESTReply(.gone)
        default:
            guard let body = try await readBody(request) else { return Self.response(RESTReply(.bodyTooLarge)) }
            let bytes = body.readableBytesView
            let source = SourceKey.of(context.remoteAddress, ipv6PrefixLength: configuration.limits.ipv6PrefixLength)
            switch route {
            case .createRoom: reply = await api.createRoom(bytes, clientAddress: source)
            case .acceptRoom: reply = await api.acceptRoom(bytes, clientAddress: source)
            case .checkRoom: reply = await api.checkRoom(bytes, clientAddress: source)
            case .deleteRoom: reply = await api.deleteRoom(bytes)
            case .purge: reply = await api.purge(bytes)
            case .badgeReset: reply = await api.resetBadge(bytes)
            case .turn: reply = await api.turnCredentials(bytes)
            default: reply = RESTReply(.notFound)
            }
        }
        return Self.response(reply)
    }

    /// The body, or `nil` when it is larger than the limit.
    private func readBody(_ request: Request) async throws -> ByteBuffer? {
        let limit = configuration.limits.restBodyBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { return nil }
        do {
            return try await request.body.collect(upTo: limit)
        } catch {
            return nil
        }
    }

    private func health() -> JSONObject {
        let uptime = Int(environment.now().timeIntervalSince(startedAt))
        return JSONObject([
            ("status", .string("ok")), ("server", .string(ServerMessage.serverName)),
            ("uptimeSeconds", .integer(uptime)), ("connections", .integer(hub.connectionCount)),
        ])
    }

    static func response(_ reply: RESTReply) -> Response {
        let status = HTTPResponse.Status(code: reply.status)
        guard let body = reply.body else { return Response(status: status) }
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.serialized())))
    }

    // MARK: - Maintenance

    /// Deletes expired codes and prunes the attempt limiter every `sweepInterval`.
    struct Sweeper: Service {
        let server: SignalingServer

        func run() async throws {
            let interval = server.configuration.limits.sweepInterval
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    let clock = server.environment.clock
                    try await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
                } catch {
                    return  // shutting down
                }
                await server.sweep()
            }
        }
    }

    /// One maintenance pass.
    func sweep() async {
        let now = environment.now()
        do {
            let deleted = try await store.deleteExpired(now: now)
            if deleted > 0 { logger.debug("expired codes deleted", metadata: ["count": "\(deleted)"]) }
        } catch {
            logger.warning("expired-code sweep failed", metadata: ["error": "\(error)"])
        }
        await api.sourceLimits.prune(now: now)
    }
}

/// Turns any error that escapes a handler (unknown route, wrong method, framework errors)
/// into `{"error":"<code>"}` with the right status.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = InvisoRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            // The path exists with other methods (TRACE /health, PUT /api/rooms): 405 and
            // `Allow`, as RFC 9110 §15.5.6 asks; a path that does not exist stays 404.
            let methods = RESTRoute.methods(forPath: request.uri.path)
            guard !methods.isEmpty else { return SignalingServer.response(RESTReply(.notFound)) }
            var response = SignalingServer.response(RESTReply(.methodNotAllowed))
            response.headers[.allow] = methods.joined(separator: ", ")
            return response
        } catch let error as HTTPError {
            let code: String =
                switch error.status.code {
                case 404: "not_found"
                case 405: "method_not_allowed"
                case 413: "body_too_large"
                default: "http_\(error.status.code)"
                }
            return SignalingServer.response(RESTReply(RESTError(status: error.status.code, code: code)))
        } catch {
            context.logger.error("unhandled error", metadata: ["error.type": "\(type(of: error))"])
            return SignalingServer.response(RESTReply(RESTError(status: 500, code: "internal")))
        }
    }
}

extension Application {
    /// Runs the store's migrations before the server accepts connections.
    fileprivate func withMigration(_ store: any RoomStore) -> Self {
        var application = self
        application.beforeServerStarts { try await store.migrate() }
        return application
    }
}
