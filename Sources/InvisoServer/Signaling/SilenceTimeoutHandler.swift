import NIOCore

/// Closes a connection that has received nothing for `timeout`: a half-open socket (a
/// phone that lost its network) gives up its room seat instead of keeping it forever.
/// Any bytes count — data frames and the control-frame pings clients send every 25 s.
/// Installed first in the pipeline, so it sees raw bytes before any decoder.
final class SilenceTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    private let timeout: TimeAmount
    private var lastRead: NIODeadline = .now()
    private var check: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastRead = .now()
        if context.channel.isActive { schedule(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        if check == nil { schedule(context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        context.fireChannelRead(data)
    }

    private func schedule(_ context: ChannelHandlerContext) {
        let deadline = lastRead + timeout
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.fire(context)
        }
    }

    private func fire(_ context: ChannelHandlerContext) {
        check = nil
        guard context.channel.isActive else { return }
        if NIODeadline.now() - lastRead >= timeout {
            context.close(promise: nil)
        } else {
            schedule(context)
        }
    }
}
