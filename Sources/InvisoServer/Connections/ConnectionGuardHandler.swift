import NIOCore
import NIOHTTP1

/// Deadlines for a connection until it becomes a WebSocket, first in every connection's
/// pipeline (before TLS, so a stalled handshake is covered too):
///
/// ```
///  accepted ──► awaiting head ──head──► receiving body ──end──► responding
///   (handshake       ▲  │ deadline          │ deadline               │ response sent
///    deadline)       │  ▼ → close           ▼ → close                 │
///                    └──────── keep-alive deadline ◄──────────────────┘
///  any state ──upgrade──► upgraded (the socket's own silence timeout takes over)
/// ```
///
/// A connection that has not sent a complete request head within the handshake timeout
/// of its first moment (slowloris, an idle TCP connection, a TLS client that never
/// finishes its ClientHello), or a body within the request timeout of its head, or its
/// next head within the keep-alive timeout, is closed. On graceful shutdown
/// (`ChannelShouldQuiesceEvent`) a connection that is not being answered is closed at
/// once, so it cannot hold the shutdown up. The ``ConnectionGuardian`` learns when the
/// connection stops or starts being *pending* (its eviction order).
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// The three timeouts.
    struct Timeouts: Sendable {
        var handshake: TimeAmount
        var request: TimeAmount
        var keepAlive: TimeAmount
    }

    private enum Phase {
        case awaitingHead(NIODeadline)
        case receivingBody(NIODeadline)
        case responding
        case upgraded
    }

    private let guardian: ConnectionGuardian
    private let id: UInt64
    private let timeouts: Timeouts
    private var phase: Phase
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(guardian: ConnectionGuardian, id: UInt64, timeouts: Timeouts) {
        self.guardian = guardian
        self.id = id
        self.timeouts = timeouts
        phase = .awaitingHead(.now() + timeouts.handshake)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        arm()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()  // the guardian forgets the connection on closeFuture
    }

    // MARK: - Progress (called on the event loop by HTTPProgressObserver and the upgrader)

    /// A request head arrived.
    func requestHead() {
        guard case .awaitingHead = phase else { return }
        phase = .receivingBody(.now() + timeouts.request)
        arm()
    }

    /// A request ended: the server owes the response, so no deadline runs.
    func requestEnd() {
        phase = .responding
        guardian.settle(id)
        arm()
    }

    /// The response was sent; the client may send another request.
    func responseEnd() {
        guard case .responding = phase else { return }
        phase = .awaitingHead(.now() + timeouts.keepAlive)
        guardian.markPending(id)
        arm()
    }

    /// The connection is a WebSocket now.
    func upgraded() {
        phase = .upgraded
        guardian.settle(id)
        arm()
    }

    // MARK: - Timer

    private var deadline: NIODeadline? {
        switch phase {
        case .awaitingHead(let deadline), .receivingBody(let deadline): deadline
        case .responding, .upgraded: nil
        }
    }

    private func arm() {
        timer?.cancel()
        timer = nil
        guard let context, let deadline else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            handler.value.expired()
        }
    }

    private func expired() {
        timer = nil
        guard let context, let deadline, deadline <= .now() else { return arm() }
        guardian.metrics.closed(.deadline)
        context.close(promise: nil)
    }

    // MARK: - Events

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let closesNow: Bool
        switch event {
        case is ChannelShouldQuiesceEvent: closesNow = deadline != nil
        case let event as ChannelEvent where event == .inputClosed: closesNow = deadline != nil
        default: closesNow = false
        }
        context.fireUserInboundEventTriggered(event)
        if closesNow { context.close(promise: nil) }
    }
}

/// Sits after the HTTP decoder, before the upgrade handler, until the connection is
/// upgraded: tells its ``ConnectionGuardHandler`` when a request's head and end arrive and
/// when a response has been sent, and remembers whether a head asked for a WebSocket
/// (the upgrade handler consumes that head, so a refusal could not tell why otherwise).
final class HTTPProgressObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let connectionGuard: ConnectionGuardHandler
    /// The `Sec-WebSocket-Version` of the last head that asked to upgrade to WebSocket
    /// (`""` when it gave none); `nil` when it did not ask.
    private(set) var upgradeRequested: String?

    init(connectionGuard: ConnectionGuardHandler) {
        self.connectionGuard = connectionGuard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let upgrade = head.headers["upgrade"].contains { $0.lowercased().contains("websocket") }
            upgradeRequested = upgrade ? (head.headers.first(name: "sec-websocket-version") ?? "") : nil
            connectionGuard.requestHead()
        case .end: connectionGuard.requestEnd()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    /// A request NIO could not parse was answered with 400 by `HTTPServerProtocolErrorHandler`
    /// (before this handler); nothing more can be read from the connection, so close it
    /// instead of holding its descriptor until the client leaves.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(error)
        if error is HTTPParserError { context.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            let connectionGuard = NIOLoopBound(self.connectionGuard, eventLoop: context.eventLoop)
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in connectionGuard.value.responseEnd() }
            context.write(data, promise: written)
        } else {
            context.write(data, promise: promise)
        }
    }
}
