public import Foundation

/// A point on a monotonic clock: the time since the clock's own origin. Only differences
/// mean anything; two clocks' instants do not compare.
public struct ClockInstant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The time since the clock's origin.
    public var sinceOrigin: Duration

    /// The instant `sinceOrigin` after the origin.
    public init(sinceOrigin: Duration) {
        self.sinceOrigin = sinceOrigin
    }

    /// The clock's origin.
    public static let origin = ClockInstant(sinceOrigin: .zero)

    public func advanced(by duration: Duration) -> ClockInstant {
        ClockInstant(sinceOrigin: sinceOrigin + duration)
    }

    public func duration(to other: ClockInstant) -> Duration {
        other.sinceOrigin - sinceOrigin
    }

    public static func < (lhs: ClockInstant, rhs: ClockInstant) -> Bool {
        lhs.sinceOrigin < rhs.sinceOrigin
    }

    public var description: String { "t+\(sinceOrigin)" }
}

/// The package's one clock: a monotonic Swift `Clock` (timeouts, pacing, timers) that also
/// tells the wall-clock time (stored message times, protocol timestamps).
///
/// Protocol logic never reads a clock: state machines take the instant as an input and
/// return the instants at which they want to be woken; their drivers read the injected
/// clock and sleep on it. Production code uses ``SystemClock``; tests use InvisoTesting's
/// `ManualClock`, advanced by hand, so no test waits for real time to pass.
public protocol InvisoClock: Clock, Sendable where Instant == ClockInstant, Duration == Swift.Duration {
    /// The wall-clock time now.
    var wallClock: Date { get }
}

extension InvisoClock {
    /// Waits for `duration` on this clock.
    ///
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now.advanced(by: duration), tolerance: nil)
    }
}

/// The system's continuous clock (it keeps counting while the machine sleeps) and `Date()`.
public struct SystemClock: InvisoClock {
    /// The continuous-clock instant that is this clock's origin (the first use in the process).
    private static let start = ContinuousClock.now

    /// The system clock.
    public init() {}

    public var now: ClockInstant {
        ClockInstant(sinceOrigin: ContinuousClock.now - Self.start)
    }

    public var minimumResolution: Duration {
        ContinuousClock().minimumResolution
    }

    public var wallClock: Date { Date() }

    public func sleep(until deadline: ClockInstant, tolerance: Duration?) async throws {
        try await ContinuousClock().sleep(until: Self.start.advanced(by: deadline.sinceOrigin), tolerance: tolerance)
    }
}

extension InvisoClock where Self == SystemClock {
    /// The system clock.
    public static var system: SystemClock { SystemClock() }
}
