import NIOCore

/// Passes a TCP connection's life to the node: opened (with what the dialler expects),
/// bytes in order, closed. The node runs the protocol; this handler does no parsing.
final class NearbySocketHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let sink: @Sendable (NearbyNode.Input) -> Void
    private let dial: NearbyNode.Dial?

    init(dial: NearbyNode.Dial?, sink: @escaping @Sendable (NearbyNode.Input) -> Void) {
        self.dial = dial
        self.sink = sink
    }

    func channelActive(context: ChannelHandlerContext) {
        sink(.opened(ObjectIdentifier(context.channel), NearbyNode.ChannelBox(context.channel), dial))
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        sink(.bytes(ObjectIdentifier(context.channel), unwrapInboundIn(data)))
    }

    func channelInactive(context: ChannelHandlerContext) {
        sink(.socketClosed(ObjectIdentifier(context.channel)))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
