import NIOCore

/// An authenticated, selected direct TCP connection to the peer: the direct data path.
///
/// Obtained from ``DirectConnector/connect(to:)``. Frames are the secure channel's opaque,
/// already encrypted frames; the connection adds framing and a per-frame authentication
/// tag under a key from the path key (docs/direct.md), so nobody without the key can
/// inject, replay, reorder or cut frames: a frame that fails closes the connection.
///
/// ``incoming`` is pull-based: frames are read from the socket only as fast as they are
/// consumed (beyond a bounded buffer), so a slow reader slows the sender through TCP flow
/// control. It finishes when either side closes or the connection fails. Iterate it from
/// one task; cancelling that task closes the connection.
public final class DirectConnection: FrameTransport {
    /// Always ``ChatPath/direct``.
    public var path: ChatPath { .direct }
    /// Frames from the peer, in order; finishes on close, peer close or failure.
    public let incoming: AsyncStream<[UInt8]>
    /// The largest frame ``send(_:)`` accepts.
    public let maxFrameBytes: Int

    private let channel: any Channel
    private let delivery: NIOLoopBound<DirectDeliveryHandler>

    init(_ setup: DirectChannelSetup, maxFrameBytes: Int) {
        let channel = setup.channel
        let delivery = setup.delivery
        self.channel = channel
        self.delivery = delivery
        self.maxFrameBytes = maxFrameBytes
        incoming = AsyncStream(
            unfolding: {
                let next = try? await channel.eventLoop.flatSubmit {
                    delivery.value.nextFrame(eventLoop: channel.eventLoop)
                }.get()
                return next ?? nil
            },
            onCancel: {
                channel.eventLoop.execute { delivery.value.cancelPull() }
                channel.close(promise: nil)
            })
    }

    /// A connection nobody holds any more is closed.
    deinit {
        channel.close(promise: nil)
    }

    // MARK: - FrameTransport

    /// Sends one frame; returns once it was handed to the socket.
    ///
    /// - Throws: ``TransportError/frameTooLarge`` above ``maxFrameBytes`` (nothing sent);
    ///   ``TransportError/closed`` after ``close()``, after the peer closed, or when the
    ///   connection failed.
    public func send(_ frame: [UInt8]) async throws(TransportError) {
        guard frame.count <= maxFrameBytes else { throw .frameTooLarge }
        do {
            try await channel.writeAndFlush(DirectOutboundFrame(kind: .carrying(frame), payload: frame)).get()
        } catch {
            throw .closed
        }
    }

    /// Sends frames as one write: each is framed and tagged, then one flush, and one wait
    /// for the last. Frames before one above ``maxFrameBytes`` are sent; on a failed write
    /// none counts as sent (the caller sends them again and the peer drops duplicates).
    public func send(contentsOf frames: [[UInt8]]) async -> FrameBatchResult {
        let fitting = frames.firstIndex { $0.count > maxFrameBytes } ?? frames.count
        guard fitting > 0 else { return FrameBatchResult(sent: 0, failure: frames.isEmpty ? nil : .frameTooLarge) }
        let channel = channel
        let last = channel.eventLoop.flatSubmit {
            for frame in frames[..<(fitting - 1)] {
                channel.write(DirectOutboundFrame(kind: .carrying(frame), payload: frame), promise: nil)
            }
            return channel.writeAndFlush(DirectOutboundFrame(kind: .carrying(frames[fitting - 1]), payload: frames[fitting - 1]))
        }
        do {
            try await last.get()
        } catch {
            return FrameBatchResult(sent: 0, failure: .closed)
        }
        return FrameBatchResult(sent: fitting, failure: fitting < frames.count ? .frameTooLarge : nil)
    }

    /// Closes the connection and waits until it is closed; ``incoming`` finishes (after
    /// frames already received). Idempotent.
    public func close() async {
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    // MARK: - Selection (DirectConnector)

    /// Creator: marks this connection as the chosen one by sending `selected`.
    func sendSelected() async throws(DirectError) {
        do {
            try await channel.writeAndFlush(DirectOutboundFrame(kind: .selected, payload: [])).get()
        } catch {
            throw .connectionClosed
        }
    }

    /// Joiner: whether `selected` arrived on this connection before it closed.
    func waitSelected() async -> Bool {
        let delivery = delivery
        let loop = channel.eventLoop
        do {
            try await loop.flatSubmit { delivery.value.waitSelected(eventLoop: loop) }.get()
            return true
        } catch {
            return false
        }
    }

    /// The local TCP port (tests check both sides share one connection).
    var localPort: Int? { channel.localAddress?.port }
    /// The peer's TCP port.
    var remotePort: Int? { channel.remoteAddress?.port }

    /// Starts closing without waiting (cancellation handlers).
    func closeNow() {
        channel.close(promise: nil)
    }
}
