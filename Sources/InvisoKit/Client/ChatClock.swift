public import Foundation

/// The time sources a ``ChatClient`` uses, injectable for tests: a monotonic clock for
/// timeouts and pacing, the wall clock for stored message times and v1 timestamps, and a
/// sleep.
public struct ChatClock: Sendable {
    /// A monotonic time; only differences are used.
    public var now: @Sendable () -> Duration
    /// The wall clock.
    public var date: @Sendable () -> Date
    /// Waits for a duration; throws when cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// A clock from its three parts.
    public init(
        now: @escaping @Sendable () -> Duration, date: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.now = now
        self.date = date
        self.sleep = sleep
    }

    /// The reference instant of ``system``'s monotonic time.
    static let processStart = ContinuousClock.now

    /// The system's continuous clock, `Date()` and `Task.sleep`.
    public static let system = ChatClock(
        now: { ContinuousClock.now - processStart }, date: { Date() },
        sleep: { try await Task.sleep(for: $0) })
}
