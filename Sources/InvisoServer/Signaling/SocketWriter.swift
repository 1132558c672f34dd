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
final class SocketWriter: Sendable {
    /// Queued bytes above which the channel reports itself unwritable (set on each
    /// signaling channel by `SignalingChannel`).
    static let highWaterMark = 1 << 20
    /// Queued bytes below which it is writable again.
    static let lowWaterMark = 256 << 10

    private let channel: any Channel
    private let outbox = Mutex<Outbox>(Outbox())
    private let waiters = Mutex<Waiters>(Waiters())
    /// Mirrors `Outbox.closeAfter` for ``isClosing``, read on every message without the lock.
    private let closeSent = Atomic<Bool>(false)

    private struct Outbox: ~Copyable {
        var frames: [WebSocketFrame] = []
        var drainScheduled = false
        var closeAfter = false
    }

    private struct Waiters: ~Copyable {
        var callbacks: [@Sendable () -> Void] = []
        var closed = false
    }

    init(channel: any Channel) {
        self.channel = channel
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
            var frames: [WebSocketFrame] = []
            swap(&frames, &outbox.frames)
            return (frames, outbox.closeAfter)
        }
        guard close, let last = frames.last else {
            for frame in frames { channel.write(frame, promise: nil) }
            channel.flush()
            return
        }
        for frame in frames.dropLast() { channel.write(frame, promise: nil) }
        let channel = self.channel
        channel.writeAndFlush(last).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Whether a close was sent: nothing more goes out, and the socket's messages need no handling.
    var isClosing: Bool { closeSent.load(ordering: .relaxed) }

    /// Whether the reader keeps up (fewer than ``highWaterMark`` bytes queued).
    var isWritable: Bool { channel.isWritable }

    /// Calls `callback` once the channel is writable again or closed (at once if it already is).
    func whenWritable(_ callback: @escaping @Sendable () -> Void) {
        let now = waiters.withLock { waiters -> Bool in
            if waiters.closed || channel.isWritable { return true }
            waiters.callbacks.append(callback)
            return false
        }
        if now { callback() }
    }

    /// Called by the socket's handler when writability changes or the socket closes.
    func writabilityChanged(closed: Bool = false) {
        let ready = waiters.withLock { waiters -> [@Sendable () -> Void] in
            if closed { waiters.closed = true }
            guard waiters.closed || channel.isWritable else { return [] }
            defer { waiters.callbacks = [] }
            return waiters.callbacks
        }
        for callback in ready { callback() }
    }
}
