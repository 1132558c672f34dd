package import InvisoKit
package import InvisoTime
import Synchronization

/// Two ``FrameTransport``s wired to each other in memory: a stand-in for a direct path in
/// tests, with injectable loss, duplication, delay and reordering.
///
/// With ``Conditions/perfect`` a frame reaches the peer's ``incoming`` before ``send(_:)``
/// returns. Otherwise each copy of a frame is delivered when the injected clock reaches
/// its delivery time (a `ManualClock` makes that fully deterministic): frames with
/// different delays overtake each other. The random choices come from a seeded generator.
package final class InMemoryFrameTransport: FrameTransport {
    /// How the link treats frames.
    package struct Conditions: Sendable {
        /// The chance that a frame is lost (0…1).
        package var loss = 0.0
        /// The chance that a frame arrives twice (0…1).
        package var duplication = 0.0
        /// The fixed delay.
        package var delay: Duration = .zero
        /// Up to this much extra delay per copy, uniformly.
        package var jitter: Duration = .zero

        /// A link that loses, duplicates and delays nothing.
        package static let perfect = Conditions()

        package init(loss: Double = 0, duplication: Double = 0, delay: Duration = .zero, jitter: Duration = .zero) {
            self.loss = loss
            self.duplication = duplication
            self.delay = delay
            self.jitter = jitter
        }
    }

    package let path: ChatPath
    package let incoming: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let clock: any InvisoClock
    private let state: Mutex<State>

    private struct State {
        var peer: InMemoryFrameTransport?
        var closed = false
        var conditions: Conditions
        var random: SeededGenerator
        var sent = 0
    }

    private init(path: ChatPath, conditions: Conditions, seed: UInt64, clock: any InvisoClock) {
        self.path = path
        self.clock = clock
        state = Mutex(State(conditions: conditions, random: SeededGenerator(seed: seed)))
        (incoming, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Two connected ends.
    package static func pair(
        path: ChatPath = .direct, conditions: Conditions = .perfect, seed: UInt64 = 1,
        clock: any InvisoClock = SystemClock()
    ) -> (InMemoryFrameTransport, InMemoryFrameTransport) {
        let a = InMemoryFrameTransport(path: path, conditions: conditions, seed: seed, clock: clock)
        let b = InMemoryFrameTransport(path: path, conditions: conditions, seed: seed &+ 1, clock: clock)
        a.state.withLock { $0.peer = b }
        b.state.withLock { $0.peer = a }
        return (a, b)
    }

    /// Changes how frames sent from now on are treated.
    package func setConditions(_ conditions: Conditions) {
        state.withLock { $0.conditions = conditions }
    }

    /// How many frames ``send(_:)`` accepted.
    package var sentCount: Int { state.withLock { $0.sent } }

    package func send(_ frame: [UInt8]) async throws(TransportError) {
        let plan: (peer: InMemoryFrameTransport, delays: [Duration])? = try state.withLock { state throws(TransportError) in
            guard !state.closed else { throw .closed }
            guard let peer = state.peer else { throw .notConnected }
            state.sent += 1
            let conditions = state.conditions
            if state.random.chance(conditions.loss) { return nil }
            let copies = state.random.chance(conditions.duplication) ? 2 : 1
            let delays = (0..<copies).map { _ in conditions.delay + state.random.jitter(upTo: conditions.jitter) }
            return (peer, delays)
        }
        guard let plan else { return }
        for delay in plan.delays {
            guard delay > .zero else {
                plan.peer.continuation.yield(frame)
                continue
            }
            let deadline = clock.now.advanced(by: delay)
            let clock = clock
            let peer = plan.peer
            // A test helper: the delivery waits on the (manual) clock like a packet in flight.
            Task {
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                peer.continuation.yield(frame)
            }
        }
    }

    package func close() async {
        let peer = state.withLock { state in
            state.closed = true
            defer { state.peer = nil }
            return state.peer
        }
        continuation.finish()
        // The other end sees the link end, as a TCP peer sees a close.
        peer?.continuation.finish()
        peer?.state.withLock { $0.peer = nil }
    }
}
