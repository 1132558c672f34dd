public import Foundation
public import InvisoTime
import Synchronization

/// A clock for tests that moves only when told to (``advance(by:)``): a test of a timeout
/// advances the clock past it instead of waiting, so a busy machine cannot make it flaky.
///
/// Sleepers whose deadline has come wake in deadline order (ties in the order they went to
/// sleep) each time the clock moves; a sleep whose deadline has already passed returns at
/// once; a cancelled sleeper throws `CancellationError` and is forgotten. The wall clock
/// moves with the monotonic time from ``init(wallClockStart:)``.
public final class ManualClock: InvisoClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: ClockInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = ClockInstant.origin
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        /// Sleepers cancelled before they were registered.
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = Mutex(State())
    private let wallClockStart: Date

    /// A clock at its origin whose wall clock starts at `wallClockStart` (2027-01-15 by default).
    public init(wallClockStart: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.wallClockStart = wallClockStart
    }

    public var now: ClockInstant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .nanoseconds(1) }

    public var wallClock: Date {
        let elapsed = now.sinceOrigin.components
        return wallClockStart.addingTimeInterval(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }

    /// How many tasks sleep on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines tasks sleep until, earliest first.
    public var deadlines: [ClockInstant] { state.withLock { $0.sleepers.map(\.deadline).sorted() } }

    /// The earliest deadline a task sleeps until, if any.
    public var nextDeadline: ClockInstant? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: ClockInstant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper: Sleeper? = state.withLock { state in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        // A sleeper that finished normally but was marked "cancelled early" never registered.
        _ = state.withLock { $0.cancelledEarly.remove(id) }
    }

    /// Moves the clock forward by `duration` and wakes every sleeper whose deadline came,
    /// earliest first.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock only moves forward")
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (not backwards) and wakes the sleepers whose deadline came.
    public func advance(to instant: ClockInstant) {
        let due: [Sleeper] = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            let due = state.sleepers.enumerated()
                .filter { $0.element.deadline <= now }
                .sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
                .map(\.element)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
