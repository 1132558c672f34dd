public import InvisoTime
public import InvisoWire
import Synchronization

/// The relay path: opaque frames carried as binary WebSocket messages through the
/// signaling server to the other member of the room (`docs/client.md`, "Relay path").
///
/// The transport does not read ``SignalingClient/events`` itself, because one reader (the
/// chat engine) also needs every other signaling event: that reader hands each
/// ``SignalingEvent/binary(_:)`` to ``deliver(_:)``, and the frames come out of
/// ``incoming`` in the same order.
///
/// ``send(_:)`` throws ``TransportError/notConnected`` while the socket is down (it
/// reconnects by itself; the caller keeps the frame and resends it after the room is
/// ready again). A frame the socket accepted may still be dropped by the server (the
/// peer is absent, or a rate limit): delivery is the message layer's job, not the
/// transport's. Sends are paced by a token bucket below the server's per-socket message
/// limit (`docs/server.md`: 50 messages/s, burst 200), so a burst of messages waits
/// instead of being dropped. ``close()`` ends this transport but leaves the signaling
/// connection to its owner.
public final class RelayTransport: FrameTransport {
    /// How fast frames may leave: at most `burst` at once, then `messagesPerSecond`; and
    /// at most `byteBurst` bytes at once, then `bytesPerSecond`.
    public struct Pacing: Sendable, Hashable {
        /// The sustained rate.
        public var messagesPerSecond: Double
        /// The most frames sent without waiting.
        public var burst: Double
        /// The sustained byte rate.
        public var bytesPerSecond: Double
        /// The most bytes sent without waiting.
        public var byteBurst: Double

        /// A pacing; every value must be positive.
        public init(
            messagesPerSecond: Double, burst: Double, bytesPerSecond: Double = .infinity, byteBurst: Double = .infinity
        ) {
            precondition(
                messagesPerSecond > 0 && burst >= 1 && bytesPerSecond > 0 && byteBurst >= 1,
                "pacing needs positive rates and bursts of at least 1")
            self.messagesPerSecond = messagesPerSecond
            self.burst = burst
            self.bytesPerSecond = bytesPerSecond
            self.byteBurst = byteBurst
        }

        /// Below the server's default limits (50 messages/s, burst 200 per socket; 1 MiB/s,
        /// burst 8 MiB per room), leaving room for the signaling messages the same socket
        /// sends and for the peer's frames in the same room.
        public static let serverDefault = Pacing(
            messagesPerSecond: 40, burst: 150, bytesPerSecond: 896 * 1_024, byteBurst: 4 * 1_048_576)
    }

    /// Always ``ChatPath/relay``.
    public let path = ChatPath.relay
    /// Frames handed to ``deliver(_:)``, in order; finishes on ``close()``.
    public let incoming: AsyncStream<[UInt8]>

    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let signaling: SignalingClient
    private let pacing: Mutex<Pacing>
    private let clock: any InvisoClock
    private let state: Mutex<PacingState>

    private struct PacingState {
        var closed = false
        var tokens: Double
        var byteTokens: Double
        var refilledAt: ClockInstant?
    }

    /// A relay path over `signaling`.
    ///
    /// - Parameters:
    ///   - signaling: The room's signaling client (joined by its owner).
    ///   - pacing: The send rate limit.
    ///   - clock: Measures the refill and waits for it; a manual clock in tests.
    public init(signaling: SignalingClient, pacing: Pacing = .serverDefault, clock: any InvisoClock = SystemClock()) {
        self.signaling = signaling
        self.pacing = Mutex(pacing)
        self.clock = clock
        state = Mutex(PacingState(tokens: pacing.burst, byteTokens: pacing.byteBurst))
        (incoming, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Hands a frame that arrived as a binary signaling event to ``incoming``. Ignored
    /// after ``close()``.
    public func deliver(_ frame: [UInt8]) {
        guard !state.withLock({ $0.closed }) else { return }
        continuation.yield(frame)
    }

    /// Sends one frame as a binary WebSocket message, after waiting for the pacing.
    ///
    /// - Throws: ``TransportError/notConnected`` while the socket is down,
    ///   ``TransportError/closed`` after ``close()`` or once the signaling client is
    ///   closed, ``TransportError/frameTooLarge`` above the server's message limit.
    public func send(_ frame: [UInt8]) async throws(TransportError) {
        if let failure = await send(contentsOf: [frame]).failure { throw failure }
    }

    /// Sends frames in order, as many per WebSocket write (one flush) as the pacing
    /// allows at once, waiting for the pacing between writes. A failed write counts none
    /// of its frames as sent.
    public func send(contentsOf frames: [[UInt8]]) async -> FrameBatchResult {
        var sent = 0
        while sent < frames.count {
            guard await signaling.isConnected else {
                return FrameBatchResult(sent: sent, failure: state.withLock({ $0.closed }) ? .closed : .notConnected)
            }
            let remaining = frames.count - sent
            let pacing = self.pacing.withLock { $0 }
            let grant: Grant = state.withLock { state in
                guard !state.closed else { return .closed }
                refill(&state, pacing)
                guard state.tokens >= 1 else {
                    return .wait(.milliseconds(Int(((1 - state.tokens) / pacing.messagesPerSecond * 1_000).rounded(.up))))
                }
                // Whole frames within the byte budget; a frame larger than the burst goes
                // alone once the bucket is full.
                var count = 0
                var bytes = 0.0
                while count < min(remaining, Int(state.tokens.rounded(.down))) {
                    let size = Double(frames[sent + count].count)
                    guard bytes + size <= state.byteTokens || (count == 0 && state.byteTokens >= pacing.byteBurst) else { break }
                    bytes += size
                    count += 1
                }
                guard count > 0 else {
                    let missing = min(Double(frames[sent].count), pacing.byteBurst) - state.byteTokens
                    return .wait(.milliseconds(max(1, Int((missing / pacing.bytesPerSecond * 1_000).rounded(.up)))))
                }
                state.tokens -= Double(count)
                state.byteTokens -= bytes
                return .send(count)
            }
            switch grant {
            case .closed:
                return FrameBatchResult(sent: sent, failure: .closed)
            case .wait(let wait):
                do { try await clock.sleep(for: wait) } catch { return FrameBatchResult(sent: sent, failure: .closed) }
            case .send(let count):
                do {
                    try await signaling.send(binaries: Array(frames[sent..<(sent + count)]))
                } catch {
                    switch error {
                    case .closed: return FrameBatchResult(sent: sent, failure: .closed)
                    case .messageTooLarge: return FrameBatchResult(sent: sent, failure: .frameTooLarge)
                    default: return FrameBatchResult(sent: sent, failure: .notConnected)
                    }
                }
                sent += count
            }
        }
        return FrameBatchResult(sent: sent)
    }

    /// Adds the tokens earned since the last refill.
    private func refill(_ state: inout PacingState, _ pacing: Pacing) {
        let current = clock.now
        if let last = state.refilledAt {
            let elapsed = Double(last.duration(to: current) / .milliseconds(1)) / 1_000
            state.tokens = min(pacing.burst, state.tokens + elapsed * pacing.messagesPerSecond)
            state.byteTokens = min(pacing.byteBurst, state.byteTokens + elapsed * pacing.bytesPerSecond)
        }
        state.refilledAt = current
    }

    /// Paces below the limits the server announced (``RelayLimits``): 80 % of its message
    /// rate and burst (the same socket sends signaling messages too), and 45 % of the
    /// room's byte rate and burst (the peer's frames share the room's quota).
    public func adopt(_ limits: RelayLimits) {
        let adopted = Pacing(
            messagesPerSecond: max(1, limits.messagesPerSecond * 0.8), burst: max(1, limits.messageBurst * 0.8),
            bytesPerSecond: max(1, limits.roomBytesPerSecond * 0.45), byteBurst: max(1, limits.roomByteBurst * 0.45))
        pacing.withLock { $0 = adopted }
        state.withLock { state in
            state.tokens = min(state.tokens, adopted.burst)
            state.byteTokens = min(state.byteTokens, adopted.byteBurst)
        }
    }

    /// What the token bucket allows now.
    private enum Grant {
        /// Send this many frames.
        case send(Int)
        /// Wait this long for one token.
        case wait(Duration)
        /// The transport is closed.
        case closed
    }

    /// Ends this path: ``incoming`` finishes and sends throw ``TransportError/closed``.
    /// The signaling connection stays open (its owner closes it). Idempotent.
    public func close() async {
        state.withLock { $0.closed = true }
        continuation.finish()
    }
}
