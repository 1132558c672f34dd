import NIOCore
import NIOWebSocket

/// One upgraded signaling socket, as a NIO handler after the frame decoder and the
/// fragment aggregator: hands each message to the ``SignalingHub`` on the event loop,
/// answers control frames, and closes cleanly.
///
/// A socket that sends nothing — no message, no control frame — for `silenceTimeout` is
/// closed: a half-open socket (a phone that lost its network) gives up its room seat
/// instead of keeping it forever. Clients' control pings every 25 s keep it open.
///
/// There is no Swift task per socket — an idle socket costs its channel, a few handlers
/// and the hub's entries. A message whose handling must wait (a store lookup for
/// `join_room`/`watch_code`, a publish to other instances, a peer that is not reading)
/// pauses this socket: later messages queue behind it, so every socket's messages are
/// still handled one at a time, in order. Control frames are answered at once even while
/// paused (a client's ping must not wait for a store); once ``maxQueued`` messages wait,
/// reading stops until the pause ends.
final class SignalingSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let hub: SignalingHub
    private let silenceTimeout: TimeAmount
    private var lastRead = NIODeadline.now()
    private var silenceCheck: Scheduled<Void>?
    private var connection: (id: ConnectionID, writer: SocketWriter)?
    /// Messages that arrive while paused wait here, at most this many before reading stops.
    static let maxQueued = 64

    /// Messages decoded while paused, handled in order on resume.
    private var queued = CircularBuffer<WebSocketFrame>()
    private var paused = false
    /// Reading was stopped because the queue is full.
    private var readingStopped = false
    /// A close frame was sent or received: nothing more is handled.
    private var closing = false

    init(hub: SignalingHub, silenceTimeout: TimeAmount) {
        self.hub = hub
        self.silenceTimeout = silenceTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { open(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopSilenceCheck()
    }

    func channelActive(context: ChannelHandlerContext) {
        open(context)
        context.fireChannelActive()
    }

    private func open(_ context: ChannelHandlerContext) {
        guard connection == nil else { return }
        let writer = SocketWriter(channel: context.channel)
        connection = (hub.open(writer), writer)
        lastRead = .now()
        scheduleSilenceCheck(context)
    }

    private func scheduleSilenceCheck(_ context: ChannelHandlerContext) {
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        silenceCheck = context.eventLoop.scheduleTask(deadline: lastRead + silenceTimeout) {
            let (self_, context) = handler.value
            self_.silenceCheck = nil
            guard context.channel.isActive else { return }
            if NIODeadline.now() - self_.lastRead >= self_.silenceTimeout {
                context.close(promise: nil)
            } else {
                self_.scheduleSilenceCheck(context)
            }
        }
    }

    private func stopSilenceCheck() {
        silenceCheck?.cancel()
        silenceCheck = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopSilenceCheck()
        queued.removeAll()
        if let (id, writer) = connection {
            connection = nil
            writer.writabilityChanged(closed: true)
            if let pending = hub.closed(id) { Task { await pending() } }
        }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connection?.writer.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        let frame = unwrapInboundIn(data)
        guard paused || !queued.isEmpty, frame.opcode == .text || frame.opcode == .binary else {
            return handle(frame, context: context)
        }
        queued.append(frame)
        if queued.count >= Self.maxQueued, !readingStopped {
            readingStopped = true
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    private func handle(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard !closing, let (id, writer) = connection, !writer.isClosing else { return }
        switch frame.opcode {
        case .text:
            if let pending = hub.received(text: frame.unmaskedData, from: id) { pause(context, until: pending) }
        case .binary:
            if let pending = hub.received(binary: frame.unmaskedData, from: id) { pause(context, until: pending) }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            // Echo the status code (RFC 6455 §5.5.1), then close.
            closing = true
            var data = frame.unmaskedData
            let code = data.readableBytes >= 2 ? data.readInteger(as: UInt16.self) : nil
            writer.close(code: code ?? 1000, reason: "")
        default:
            break  // pongs; continuations are aggregated before this handler
        }
    }

    // MARK: - Pausing

    private func pause(_ context: ChannelHandlerContext, until pending: SignalingHub.Pending) {
        paused = true
        let resume = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        switch pending {
        case .work(let work):
            Task {
                await work()
                loop.execute { resume.value.0.resume(resume.value.1) }
            }
        case .peerWritable(let peer):
            peer.whenWritable { loop.execute { resume.value.0.resume(resume.value.1) } }
        }
    }

    private func resume(_ context: ChannelHandlerContext) {
        paused = false
        while !paused, let frame = queued.popFirst() {
            handle(frame, context: context)
        }
        if !paused, readingStopped, context.channel.isActive {
            readingStopped = false
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
    }

    // MARK: - Errors and shutdown

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOWebSocketError (a frame over the limit, a protocol violation) was already
        // answered with a close frame by WebSocketProtocolErrorHandler.
        if let aggregation = error as? NIOWebSocketFrameAggregator.Error, !closing, let writer = connection?.writer {
            closing = true
            queued.removeAll()
            if aggregation == .accumulatedFrameSizeIsTooLarge {
                writer.close(code: 1009, reason: "message too large")
            } else {
                writer.close(code: 1002, reason: "protocol error")
            }
        } else if !(error is NIOWebSocketError) {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !closing, let writer = connection?.writer {
            closing = true
            writer.close(code: 1001, reason: "server shutting down")
        }
        context.fireUserInboundEventTriggered(event)
    }
}
