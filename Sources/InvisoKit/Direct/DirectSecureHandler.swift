import Logging
import NIOCore

/// A frame of an authenticated connection, after its tag was verified.
struct DirectInboundFrame: Sendable {
    var kind: DirectFrameKind
    var payload: [UInt8]
}

/// A frame to seal and send on an authenticated connection.
struct DirectOutboundFrame: Sendable {
    var kind: DirectFrameKind
    var payload: [UInt8]
}

/// Runs the ``DirectHandshake`` on a fresh TCP connection, then seals and opens every frame
/// with the connection's ``DirectFrameProtector``.
///
/// Nothing is passed on before the handshake completes. The handshake must complete within
/// the timeout; any failure (timeout, wrong key, garbage, a bad frame tag later on) closes
/// the connection. `established` completes exactly once: success when the peer proved the
/// key, or the ``DirectError`` that ended the attempt.
final class DirectSecureHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = DirectInboundFrame
    typealias OutboundIn = DirectOutboundFrame
    typealias OutboundOut = ByteBuffer

    private var handshake: DirectHandshake
    private var protector: DirectFrameProtector?
    private let established: EventLoopPromise<Void>
    private let timeout: TimeAmount
    private let logger: Logger
    private var timer: Scheduled<Void>?
    private var started = false
    private var settled = false
    private var failed = false

    init(handshake: DirectHandshake, timeout: TimeAmount, established: EventLoopPromise<Void>, logger: Logger) {
        self.handshake = handshake
        self.timeout = timeout
        self.established = established
        self.logger = logger
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { begin(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        settle(.failure(DirectError.connectionClosed))
    }

    func channelActive(context: ChannelHandlerContext) {
        begin(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        settle(.failure(DirectError.connectionClosed))
        context.fireChannelInactive()
    }

    private func begin(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.fail(context: context, .handshakeTimeout)
        }
        if let first = handshake.start() { writeHandshake(first, context: context) }
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let body = unwrapInboundIn(data)
        guard protector != nil else {
            do {
                let output = try handshake.receive(Array(body.readableBytesView))
                if let reply = output.reply { writeHandshake(reply, context: context) }
                if output.established {
                    protector = handshake.frameKeys()
                    timer?.cancel()
                    timer = nil
                    settle(.success(()))
                }
            } catch {
                fail(context: context, error)
            }
            return
        }
        do {
            let frame = try protector!.open(body)
            context.fireChannelRead(wrapInboundOut(DirectInboundFrame(kind: frame.kind, payload: frame.payload)))
        } catch {
            fail(context: context, error)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, (error as? DirectError) ?? .connectionClosed)
    }

    // MARK: - Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        guard protector != nil, !failed else {
            promise?.fail(DirectError.connectionClosed)
            return
        }
        var buffer = context.channel.allocator.buffer(
            capacity: DirectWire.lengthPrefixBytes + DirectWire.frameOverhead + frame.payload.count)
        protector!.seal(kind: frame.kind, payload: frame.payload, into: &buffer)
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    private func writeHandshake(_ body: [UInt8], context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: DirectWire.lengthPrefixBytes + body.count)
        buffer.writeInteger(UInt32(body.count))
        buffer.writeBytes(body)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    // MARK: - Failure

    private func fail(context: ChannelHandlerContext, _ error: DirectError) {
        guard !failed else { return }
        failed = true
        timer?.cancel()
        timer = nil
        if settled {
            logger.debug("direct connection dropped", metadata: ["reason": "\(error)"])
        } else {
            logger.debug("direct handshake failed", metadata: ["reason": "\(error)", "side": "\(handshake.side)"])
        }
        settle(.failure(error))
        context.close(promise: nil)
    }

    private func settle(_ result: Result<Void, DirectError>) {
        guard !settled else { return }
        settled = true
        switch result {
        case .success: established.succeed(())
        case .failure(let error): established.fail(error)
        }
    }
}
