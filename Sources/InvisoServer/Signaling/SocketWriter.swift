import NIOCore
import NIOWebSocket
import Synchronization

/// The sending side of one signaling socket: writes frames from any thread and tells a
/// sender when a slow reader has caught up.
///
/// Frames go through a small outbox drained on the socket's event loop: whatever
/// accumulates before the drain runs is written with one flush (one system call), and
/// frames leave in the order they were sent — closes included.
///
/// Writes never wait. A reader that falls behind makes its channel unwritable (more than
/// ``highWaterMark`` bytes queued); the hub then pauses the *sender's* socket until
/// ``whenWritable(_:)`` fires, so a fast sender cannot make the server buffer without
/// bound.
///
/// What the hub sends without pausing anyone (errors, pongs, frames from other instances)
/// is bounded in bytes too: after each batch the writer reads how many bytes its channel
/// holds and reports them to the server-wide ``OutboundBudget``; a socket holding more
/// than `maxQueuedBytes`, or one that is behind while the budget is spent, is closed with
/// 1008 (a reader that cannot keep up) instead of growing the server's memory.
final class SocketWriter: Sendable {
    /// Queued bytes above which the channel reports itself unwritable (set on each
    /// signaling channel by `SignalingChannel`).
    static let highWaterMark = 256 << 10
    /// Queued bytes below which it is writable again.
    static let lowWaterMark = 64 << 10
    /// How often the queued bytes of a socket that holds some are reported again.
    static let recheckInterval = TimeAmount.seconds(1)

    private let channel: any Channel
    private let maxQueuedBytes: Int
    private let budget: OutboundBudget
    private let onSlowReader: @Sendable () -> Void
    private let outbox = Mutex<Outbox>(Outbox())
    private let waiters = Mutex<Waiters>(Waiters())
    private let accounting = Mutex<Accounting>(Accounting())
    /// Mirrors `Outbox.closeAfter` for ``isClosing``, read on every message without the lock.
    private let closeSent = Atomic<Bool>(false)
    private let slowReaderClosed = Atomic<Bool>(false)
    /// Payload bytes of the frames in the outbox (changed under its lock, read by
    /// ``isWritable`` without it).
    private let outboxBytes = Atomic<Int>(0)

    private struct Outbox: ~Copyable {
        var frames: [WebSocketFrame] = []
        var drainScheduled = false
        var closeAfter = false
    }

    private struct Waiters: ~Copyable {
        var callbacks: [@Sendable () -> Void] = []
        var closed = false
    }

    private struct Accounting: ~Copyable {
        /// The channel's queued bytes as last reported to the budget.
        var reported = 0
        var recheckScheduled = false
        var closed = false
    }

    /// Creates the writer of `channel`.
    ///
    /// - Parameters:
    ///   - maxQueuedBytes: Bytes the channel may hold for its reader before it is closed.
    ///   - budget: The server-wide bound on queued bytes.
    ///   - onSlowReader: Called once when this writer closes its socket for not reading.
    init(
        channel: any Channel, maxQueuedBytes: Int = 4 * highWaterMark, budget: OutboundBudget = OutboundBudget(limit: .max),
        onSlowReader: @escaping @Sendable () -> Void = {}
    ) {
        self.channel = channel
        self.maxQueuedBytes = maxQueuedBytes
        self.budget = budget
        self.onSlowReader = onSlowReader
    }

    /// Sends a text frame (the payload must be UTF-8 JSON).
    func send(text: ByteBuffer) {
        enqueue(WebSocketFrame(fin: true, opcode: .text, data: text))
    }

    /// Sends a text frame.
    func send(text: [UInt8]) {
        send(text: channel.allocator.buffer(bytes: text))
    }

    /// Sends a binary frame.
    func send(binary: ByteBuffer) {
        enqueue(WebSocketFrame(fin: true, opcode: .binary, data: binary))
    }

    /// Sends a close frame with `code` and `reason` after what was sent before, then
    /// closes the socket. Later frames are dropped.
    func close(code: UInt16, reason: String) {
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.writeInteger(code)
        data.writeString(reason)
        enqueue(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), closing: true)
    }

    private func enqueue(_ frame: WebSocketFrame, closing: Bool = false) {
        let schedule = outbox.withLock { outbox -> Bool in
            guard !outbox.closeAfter else { return false }
            outbox.frames.append(frame)
            outboxBytes.wrappingAdd(frame.data.readableBytes, ordering: .relaxed)
            outbox.closeAfter = closing
            if closing { closeSent.store(true, ordering: .relaxed) }
            defer { outbox.drainScheduled = true }
            return !outbox.drainScheduled
        }
        guard schedule else { return }
        channel.eventLoop.execute { self.drain() }
    }

    /// On the event loop: writes everything queued, one flush.
    private func drain() {
        let (frames, close) = outbox.withLock { outbox -> ([WebSocketFrame], Bool) in
            outbox.drainScheduled = false
            outboxBytes.store(0, ordering: .relaxed)
            var frames: [WebSocketFrame] = []
            swap(&frames, &outbox.frames)
            return (frames, outbox.closeAfter)
        }
        guard close, let last = frames.last else {
            for frame in frames { channel.write(frame, promise: nil) }
            channel.flush()
            account()
            // A sender that paused while these frames waited here goes on if the reader
            // takes them (otherwise it waits for the channel's writability to change).
            releaseWaiters()
            return
        }
        for frame in frames.dropLast() { channel.write(frame, promise: nil) }
        let channel = self.channel
        channel.writeAndFlush(last).whenComplete { _ in channel.close(promise: nil) }
        account()
    }

    // MARK: - Accounting

    /// On the event loop: reports the channel's queued bytes to the budget, closes the
    /// socket when it holds too much, and looks again later while it holds any.
    private func account() {
        let buffered = channel.isActive ? ((try? channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0) : 0
        let (delta, recheck) = accounting.withLock { accounting -> (Int, Bool) in
            if accounting.closed { return (0, false) }
            let delta = buffered - accounting.reported
            accounting.reported = buffered
            let recheck = buffered > 0 && !accounting.recheckScheduled
            if recheck { accounting.recheckScheduled = true }
            return (delta, recheck)
        }
        let total = budget.adjust(by: delta)
        if buffered > maxQueuedBytes || (total > budget.limit && !channel.isWritable) {
            return closeSlowReader()
        }
        if recheck {
            channel.eventLoop.scheduleTask(in: Self.recheckInterval) {
                self.accounting.withLock { $0.recheckScheduled = false }
                self.account()
            }
        }
    }

    /// Closes the socket of a reader that cannot keep up: a close frame with 1008 is
    /// queued (it reaches a reader that catches up; one that never reads never sees it),
    /// then the channel closes at once, dropping what it held. On the event loop.
    func closeSlowReader() {
        outbox.withLock { outbox in
            outbox.closeAfter = true
            outbox.frames.removeAll()
        }
        closeSent.store(true, ordering: .relaxed)
        guard !slowReaderClosed.exchange(true, ordering: .relaxed), channel.isActive else { return }
        onSlowReader()
        var data = channel.allocator.buffer(capacity: 24)
        data.writeInteger(UInt16(1008))
        data.writeString("reader too slow")
        channel.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        channel.close(promise: nil)
    }

    /// Whether a close was sent: nothing more goes out, and the socket's messages need no handling.
    var isClosing: Bool { closeSent.load(ordering: .relaxed) }

    /// Whether the reader keeps up (fewer than ``highWaterMark`` bytes queued).
    ///
    /// Frames still in the outbox count too: a sender relaying faster than this socket's
    /// event loop drains would otherwise see it writable until the drain and overshoot the
    /// high-water mark by whatever it relayed meanwhile.
    var isWritable: Bool { channel.isWritable && outboxBytes.load(ordering: .relaxed) < Self.highWaterMark }

    /// Calls `callback` once the channel is writable again or closed (at once if it already is).
    func whenWritable(_ callback: @escaping @Sendable () -> Void) {
        let now = waiters.withLock { waiters -> Bool in
            if waiters.closed || isWritable { return true }
            waiters.callbacks.append(callback)
            return false
        }
        if now { callback() }
    }

    /// Called by the socket's handler when writability changes or the socket closes.
    func writabilityChanged(closed: Bool = false) {
        if closed {
            let reported = accounting.withLock { accounting -> Int in
                defer { accounting.reported = 0; accounting.closed = true }
                return accounting.closed ? 0 : accounting.reported
            }
            _ = budget.adjust(by: -reported)
        } else {
            account()
        }
        releaseWaiters(closed: closed)
    }

    /// Calls the waiting senders' callbacks when the socket is writable again or closed.
    private func releaseWaiters(closed: Bool = false) {
        let ready = waiters.withLock { waiters -> [@Sendable () -> Void] in
            if closed { waiters.closed = true }
            guard !waiters.callbacks.isEmpty, waiters.closed || isWritable else { return [] }
            defer { waiters.callbacks = [] }
            return waiters.callbacks
        }
        for callback in ready { callback() }
    }
}
