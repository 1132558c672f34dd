import NIOCore
import NIOWebSocket

/// One upgraded signaling socket, as a NIO handler after the frame decoder and the
/// fragment aggregator: hands each message to the ``SignalingHub`` on the event loop,
/// answers control frames, and closes cleanly.
///
/// There is no Swift task per socket — an idle socket costs its channel, a few handlers
/// and the hub's entries. A message whose handling must wait (a store lookup for
/// `join_room`/`watch_code`, a publish to other instances, a peer that is not reading)
/// pauses this socket: reading stops and frames already decoded are queued, so every
/// socket's messages are still handled one at a time, in order.
final class SignalingSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let hub: SignalingHub
    private var connection: (id: ConnectionID, writer: SocketWriter)?
    /// Frames decoded while paused, handled in order on resume.
    private var queued = CircularBuffer<WebSocketFrame>()
    private var paused = false
    /// A close frame was sent or received: nothing more is handled.
    private var closing = false

    init(hub: SignalingHub) {
        self.hub = hub
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { open(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        open(context)
        context.fireChannelActive()
    }

    private func open(_ context: ChannelHandlerContext) {
        guard connection == nil else { return }
        let writer = SocketWriter(channel: context.channel)
        connection = (hub.open(writer), writer)
    }

    func channelInactive(context: ChannelHandlerContext) {
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
        let frame = unwrapInboundIn(data)
        if paused || !queued.isEmpty {
            queued.append(frame)
        } else {
            handle(frame, context: context)
        }
    }

    private func handle(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        guard !closing, let (id, writer) = connection else { return }
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
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
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
        if !paused, context.channel.isActive {
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
