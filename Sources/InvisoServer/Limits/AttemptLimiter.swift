public import Foundation
import Synchronization

/// Counts failures per key (a client's IP address) in a sliding window and refuses a key
/// that reached the limit until its oldest failure in the window ages out.
///
/// Memory is bounded: at most ``maxKeys`` keys are tracked; when full, keys whose failures
/// all aged out are dropped first, then the key with the oldest last failure.
public final class AttemptLimiter: Sendable {
    /// Failures allowed per key within ``window``.
    public let limit: Int
    /// The window length.
    public let window: TimeInterval
    /// The most keys tracked at once.
    public let maxKeys: Int
    private let failures: Mutex<[String: [Date]]>

    /// Creates a limiter: `limit` failures per `window` seconds per key.
    public init(limit: Int, window: TimeInterval, maxKeys: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.maxKeys = maxKeys
        failures = Mutex([:])
    }

    /// Whether `key` has used up its failures at `now`.
    public func isBlocked(_ key: String, now: Date) -> Bool {
        failures.withLock { table in
            guard let times = table[key] else { return false }
            let live = times.filter { now.timeIntervalSince($0) < window }
            table[key] = live.isEmpty ? nil : live
            return live.count >= limit
        }
    }

    /// Records one failure for `key` at `now`.
    public func recordFailure(_ key: String, now: Date) {
        failures.withLock { table in
            var times = (table[key] ?? []).filter { now.timeIntervalSince($0) < window }
            times.append(now)
            if times.count > limit { times.removeFirst(times.count - limit) }
            if table[key] == nil && table.count >= maxKeys {
                table = table.filter { _, times in times.contains { now.timeIntervalSince($0) < window } }
                if table.count >= maxKeys, let stalest = table.min(by: { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) })?.key {
                    table[stalest] = nil
                }
            }
            table[key] = times
        }
    }

    /// Drops keys whose failures all aged out (called periodically).
    public func prune(now: Date) {
        failures.withLock { table in
            table = table.filter { _, times in times.contains { now.timeIntervalSince($0) < window } }
        }
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { failures.withLock { $0.count } }
}
