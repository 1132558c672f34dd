public import Foundation
import Synchronization

/// Counts failures per key (a client's source) in a sliding window and refuses a key that
/// reached the limit until its oldest failure in the window ages out.
///
/// Checking and counting are one step: ``begin(_:now:)`` counts the attempt as a failure
/// *before* it runs, under the same lock as the check, and ``Attempt/succeeded()`` takes
/// it back. So a burst of concurrent attempts cannot all pass the check before any of them
/// is recorded: with a limit of 10, at most 10 may be in flight or failed in the window.
///
/// Memory is bounded: at most ``maxKeys`` keys are tracked; when full, keys whose failures
/// all aged out are dropped first, then the key with the oldest last failure.
public final class AttemptLimiter: Sendable {
    /// One attempt counted against a key until it is known to have succeeded.
    public struct Attempt: Sendable {
        let limiter: AttemptLimiter
        let key: String
        let token: UInt64

        /// The attempt succeeded: it no longer counts.
        public func succeeded() {
            limiter.failures.withLock { state in
                state.table[key]?.removeAll { $0.token == token }
                if state.table[key]?.isEmpty == true { state.table[key] = nil }
            }
        }
    }

    /// Failures allowed per key within ``window``.
    public let limit: Int
    /// The window length.
    public let window: TimeInterval
    /// The most keys tracked at once.
    public let maxKeys: Int

    private struct State: ~Copyable {
        var table: [String: [(time: Date, token: UInt64)]] = [:]
        var nextToken: UInt64 = 1
    }

    private let failures: Mutex<State>

    /// Creates a limiter: `limit` failures per `window` seconds per key.
    public init(limit: Int, window: TimeInterval, maxKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
        failures = Mutex(State())
    }

    /// Starts an attempt for `key` at `now`: `nil` when the key has used up its failures;
    /// otherwise the attempt, counted as a failure until ``Attempt/succeeded()``.
    public func begin(_ key: String, now: Date) -> Attempt? {
        failures.withLock { state -> Attempt? in
            let live = live(state.table[key] ?? [], now: now)
            guard live.count < limit else {
                state.table[key] = live
                return nil
            }
            let token = state.nextToken
            state.nextToken += 1
            insert(key, live + [(now, token)], into: &state, now: now)
            return Attempt(limiter: self, key: key, token: token)
        }
    }

    /// Whether `key` has used up its failures at `now`.
    public func isBlocked(_ key: String, now: Date) -> Bool {
        failures.withLock { state in
            guard let times = state.table[key] else { return false }
            let live = live(times, now: now)
            state.table[key] = live.isEmpty ? nil : live
            return live.count >= limit
        }
    }

    /// Records one failure for `key` at `now`.
    public func recordFailure(_ key: String, now: Date) {
        failures.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            insert(key, live(state.table[key] ?? [], now: now) + [(now, token)], into: &state, now: now)
        }
    }

    /// Drops keys whose failures all aged out (called periodically).
    public func prune(now: Date) {
        failures.withLock { state in
            state.table = state.table.filter { _, times in times.contains { now.timeIntervalSince($0.time) < window } }
        }
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { failures.withLock { $0.table.count } }

    private func live(_ times: [(time: Date, token: UInt64)], now: Date) -> [(time: Date, token: UInt64)] {
        times.filter { now.timeIntervalSince($0.time) < window }
    }

    private func insert(_ key: String, _ times: [(time: Date, token: UInt64)], into state: inout State, now: Date) {
        var times = times
        if times.count > limit { times.removeFirst(times.count - limit) }
        if state.table[key] == nil && state.table.count >= maxKeys {
            state.table = state.table.filter { _, times in times.contains { now.timeIntervalSince($0.time) < window } }
            if state.table.count >= maxKeys,
                let stalest = state.table.min(by: { ($0.value.last?.time ?? .distantPast) < ($1.value.last?.time ?? .distantPast) })?.key
            {
                state.table[stalest] = nil
            }
        }
        state.table[key] = times
    }
}
