import Logging
import NIOCore

/// The last handler of a direct connection: the selection rule and pull-based delivery.
///
/// - Selection (docs/direct.md, "Selection"): a data frame is accepted only once the
///   connection is selected. The creator's connection becomes selected when it sends the
///   `selected` control frame; the joiner's when it receives it. A `selected` frame at the
///   creator, a second one, or one with a payload closes the connection.
/// - Back-pressure: frames wait here until ``DirectConnection/incoming`` pulls them. Above
///   the high-water mark the handler stops passing `read()` towards the socket, so TCP
///   flow control slows the sender; below half of it reading resumes.
///
/// All methods run on the channel's event loop.
final class DirectDeliveryHandler: ChannelDuplexHandler {
    typealias InboundIn = DirectInboundFrame
    typealias OutboundIn = DirectOutboundFrame
    typealias OutboundOut = DirectOutboundFrame

    private let role: V2Pairing.Role
    private let highWaterBytes: Int
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var buffered = CircularBuffer<[UInt8]>()
    private var bufferedBytes = 0
    private var readHeld = false
    private var reader: EventLoopPromise<[UInt8]?>?
    private var selected = false
    private var selection: EventLoopPromise<Void>?
    private var finished = false

    /// - Parameters:
    ///   - role: This side's role (who sends `selected`).
    ///   - highWaterBytes: Payload bytes buffered before reading from the socket pauses.
    init(role: V2Pairing.Role, highWaterBytes: Int, logger: Logger) {
        self.role = role
        self.highWaterBytes = max(highWaterBytes, 1)
        self.logger = logger
    }

    // MARK: - Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    private func finish() {
        finished = true
        reader?.succeed(nil)
        reader = nil
        selection?.fail(DirectError.connectionClosed)
        selection = nil
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        let frame = unwrapInboundIn(data)
        switch frame.kind {
        case .selected:
            guard role == .joiner, !selected, frame.payload.isEmpty else { return violation(context) }
            selected = true
            selection?.succeed(())
            selection = nil
        case .data, .sealedChunk:
            guard selected else { return violation(context) }
            if let reader {
                self.reader = nil
                reader.succeed(frame.payload)
            } else {
                buffered.append(frame.payload)
                bufferedBytes += frame.payload.count
            }
        }
    }

    private func violation(_ context: ChannelHandlerContext) {
        logger.debug("direct connection dropped", metadata: ["reason": "\(DirectError.protocolViolation)"])
        finish()
        context.close(promise: nil)
    }

    // MARK: - Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        if frame.kind == .selected {
            guard role == .creator, !selected else {
                promise?.fail(DirectError.protocolViolation)
                return
            }
            selected = true
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if bufferedBytes >= highWaterBytes {
            readHeld = true
        } else {
            context.read()
        }
    }

    // MARK: - Pulling (called on the event loop by DirectConnection)

    /// The next data frame; `nil` once the connection closed and every frame was taken.
    func nextFrame(eventLoop: any EventLoop) -> EventLoopFuture<[UInt8]?> {
        if let frame = buffered.popFirst() {
            bufferedBytes -= frame.count
            if readHeld, bufferedBytes < highWaterBytes / 2, let context {
                readHeld = false
                context.read()
            }
            return eventLoop.makeSucceededFuture(frame)
        }
        if finished || reader != nil { return eventLoop.makeSucceededFuture(nil) }
        let promise = eventLoop.makePromise(of: [UInt8]?.self)
        reader = promise
        if readHeld, let context {
            readHeld = false
            context.read()
        }
        return promise.futureResult
    }

    /// Ends a pending pull with `nil` (the consumer was cancelled).
    func cancelPull() {
        reader?.succeed(nil)
        reader = nil
    }

    /// Completes when the joiner receives `selected`; fails when the connection closes first.
    func waitSelected(eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        if selected { return eventLoop.makeSucceededFuture(()) }
        if finished { return eventLoop.makeFailedFuture(DirectError.connectionClosed) }
        if let selection { return selection.futureResult }
        let promise = eventLoop.makePromise(of: Void.self)
        selection = promise
        return promise.futureResult
    }
}
