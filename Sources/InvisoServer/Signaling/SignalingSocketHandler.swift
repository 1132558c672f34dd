import NIOCore
import NIOWebSocket

/// What bounds one signaling socket (from ``ServerLimits``).
struct SocketLimits: Sendable {
    /// Frames and messages: size, fragments, assembly deadline.
    var messages: WebSocketMessageAssembler.Limits
    /// A socket that sends nothing — no message, no control frame — for this long is closed.
    var silenceTimeout: TimeAmount
    /// A socket that stays unwritable (its reader does not read) this long is closed with 1008.
    var stallTimeout: TimeAmount
    /// Bytes the socket's channel may hold for its reader before it is closed with 1008.
    var maxQueuedBytes: Int
}

/// One upgraded signaling socket, as a NIO handler after the frame decoder: checks and
/// assembles frames (``WebSocketMessageAssembler``), hands each message to the
/// ``SignalingHub`` on the event loop, answers control frames, and closes cleanly.
///
/// A socket that sends nothing — no message, no control frame — for `silenceTimeout` is
/// closed: a half-open socket (a phone that lost its network) gives up its room seat
/// instead of keeping it forever. Clients' control pings every 25 s keep it open; while the
/// server itself has stopped reading a socket (below) it is not silent. A client
/// that half-closes (TCP FIN without a close frame) is closed at once, so the other member
/// hears `peer_disconnected` now rather than at the next write.
///
/// There is no Swift task per socket — an idle socket costs its channel, a few handlers
/// and the hub's entries. A message whose handling must wait (a store lookup for
/// `join_room`/`watch_code`, a publish to other instances, a peer that is not reading)
/// pauses this socket: later messages queue behind it, so every socket's messages are
/// still handled one at a time, in order. Control frames are answered at once even while
/// paused (a client's ping must not wait for a store); once ``maxQueued`` messages or one
/// largest message's worth of bytes wait, reading stops until the pause ends.
///
/// Memory stays bounded against a client that never reads: a pong is written only while
/// the socket is writable — otherwise only the latest ping is remembered and answered when
/// the reader catches up (RFC 6455 §5.5.3 allows answering just the last one) — and a
/// socket that stays unwritable for `stallTimeout`, or whose queued bytes pass
/// `maxQueuedBytes`, is closed with 1008 (see ``SocketWriter``).
final class SignalingSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let hub: SignalingHub
    private let limits: SocketLimits
    private var assembler: WebSocketMessageAssembler
    private var lastRead = NIODeadline.now()
    private var silenceCheck: Scheduled<Void>?
    private var assemblyCheck: Scheduled<Void>?
    private var stallCheck: Scheduled<Void>?
    private var connection: (id: ConnectionID, writer: SocketWriter)?
    /// Messages that arrive while paused wait here, at most this many before reading stops.
    static let maxQueued = 64

    /// Messages decoded while paused, handled in order on resume.
    private var queued = CircularBuffer<WebSocketMessageAssembler.Output>()
    private var queuedBytes = 0
    private var paused = false
    /// Reading was stopped because the queue is full.
    private var readingStopped = false
    /// A close frame was sent or received: nothing more is handled.
    private var closing = false
    /// The payload of the latest ping not yet answered because the socket was not writable.
    private var pendingPong: ByteBuffer?

    init(hub: SignalingHub, limits: SocketLimits) {
        self.hub = hub
        self.limits = limits
        assembler = WebSocketMessageAssembler(limits: limits.messages)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { open(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
    }

    func channelActive(context: ChannelHandlerContext) {
        open(context)
        context.fireChannelActive()
    }

    private func open(_ context: ChannelHandlerContext) {
        guard connection == nil else { return }
        let writer = hub.makeWriter(for: context.channel, maxQueuedBytes: limits.maxQueuedBytes)
        connection = (hub.open(writer), writer)
        lastRead = .now()
        scheduleSilenceCheck(context)
    }

    // MARK: - Timers

    private func scheduleSilenceCheck(_ context: ChannelHandlerContext) {
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        silenceCheck = context.eventLoop.scheduleTask(deadline: lastRead + limits.silenceTimeout) {
            let (self_, context) = handler.value
            self_.silenceCheck = nil
            guard context.channel.isActive else { return }
            // While reading is stopped (the socket waits behind a peer that does not read)
            // the silence is ours, not the client's: the clock restarts when reading does.
            if self_.readingStopped {
                self_.lastRead = .now()
                self_.scheduleSilenceCheck(context)
            } else if NIODeadline.now() - self_.lastRead >= self_.limits.silenceTimeout {
                context.close(promise: nil)
            } else {
                self_.scheduleSilenceCheck(context)
            }
        }
    }

    private func scheduleAssemblyCheck(_ context: ChannelHandlerContext) {
        guard assemblyCheck == nil, let deadline = assembler.assemblyDeadline else { return }
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        assemblyCheck = context.eventLoop.scheduleTask(deadline: deadline) {
            let (self_, context) = handler.value
            self_.assemblyCheck = nil
            self_.perform(self_.assembler.checkDeadline(now: .now()), context: context)
        }
    }

    private func cancelTimers() {
        silenceCheck?.cancel()
        silenceCheck = nil
        assemblyCheck?.cancel()
        assemblyCheck = nil
        stallCheck?.cancel()
        stallCheck = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        queued.removeAll()
        queuedBytes = 0
        pendingPong = nil
        if let (id, writer) = connection {
            connection = nil
            writer.writabilityChanged(closed: true)
            if let pending = hub.closed(id) { Task { await pending() } }
        }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connection?.writer.writabilityChanged()
        if context.channel.isWritable {
            stallCheck?.cancel()
            stallCheck = nil
            if let pong = pendingPong {
                pendingPong = nil
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: pong)), promise: nil)
            }
        } else if stallCheck == nil {
            let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            stallCheck = context.eventLoop.scheduleTask(in: limits.stallTimeout) {
                let (self_, context) = handler.value
                self_.stallCheck = nil
                guard context.channel.isActive, !context.channel.isWritable else { return }
                self_.closing = true
                self_.connection?.writer.closeSlowReader()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: - Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        guard !closing else { return }
        let output = assembler.receive(unwrapInboundIn(data), now: lastRead)
        switch output {
        case .text(let buffer), .binary(let buffer):
            assemblyCheck?.cancel()
            assemblyCheck = nil
            guard paused || !queued.isEmpty else { return perform(output, context: context) }
            queued.append(output)
            queuedBytes += buffer.readableBytes
            if queued.count >= Self.maxQueued || queuedBytes >= limits.messages.maxMessageBytes, !readingStopped {
                readingStopped = true
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            }
        case .ignore:
            scheduleAssemblyCheck(context)
        case .ping, .close, .fail:
            perform(output, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !closing, let writer = connection?.writer {
            closing = true
            writer.close(code: 1001, reason: "server shutting down")
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            // TCP FIN without a close frame: the client is gone; free its seat now.
            closing = true
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func perform(_ output: WebSocketMessageAssembler.Output, context: ChannelHandlerContext) {
        guard !closing, let (id, writer) = connection, !writer.isClosing else { return }
        switch output {
        case .text(let text):
            if let pending = hub.received(text: text, from: id) { pause(context, until: pending) }
        case .binary(let binary):
            if let pending = hub.received(binary: binary, from: id) { pause(context, until: pending) }
        case .ping(let payload):
            if context.channel.isWritable {
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), promise: nil)
            } else {
                pendingPong = payload  // answered when the reader catches up; older ones dropped
            }
        case .close(let code):
            // Echo the status code (RFC 6455 §5.5.1), then close.
            closing = true
            writer.close(code: code, reason: "")
        case .fail(let code, let reason):
            closing = true
            queued.removeAll()
            queuedBytes = 0
            writer.close(code: code, reason: reason)
        case .ignore:
            break
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
        while !paused, let output = queued.popFirst() {
            queuedBytes -= output.messageBytes
            perform(output, context: context)
        }
        if !paused, readingStopped, context.channel.isActive {
            readingStopped = false
            lastRead = .now()
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
    }

    // MARK: - Errors

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOWebSocketError (a frame over the limit, a fragmented or oversized control
        // frame) was already answered with a close frame by WebSocketProtocolErrorHandler.
        if !(error is NIOWebSocketError) {
            context.close(promise: nil)
        } else {
            closing = true
        }
    }
}
