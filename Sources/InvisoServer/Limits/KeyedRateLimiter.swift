public import Foundation
import Synchronization

/// A ``TokenBucket`` per key (a client's source): `rate` requests per second sustained,
/// `burst` at once. Memory is bounded: at most `maxKeys` buckets are kept; when full,
/// buckets that have refilled completely (their key is idle) are dropped first, then the
/// fullest.
public final class KeyedRateLimiter: Sendable {
    /// Tokens added per second.
    public let rate: Double
    /// The most tokens a bucket holds.
    public let burst: Double
    /// The most keys tracked at once.
    public let maxKeys: Int
    private let buckets = Mutex<[String: TokenBucket]>([:])

    /// Creates a limiter.
    public init(rate: Double, burst: Double, maxKeys: Int = 100_000) {
        self.rate = rate
        self.burst = burst
        self.maxKeys = maxKeys
    }

    /// Takes one token for `key` at `now`; returns whether it could.
    public func take(_ key: String, now: Date) -> Bool {
        buckets.withLock { buckets in
            if buckets[key] == nil && buckets.count >= maxKeys {
                buckets = buckets.filter { !$0.value.isFull(at: now) }
                if buckets.count >= maxKeys, let fullest = buckets.max(by: { $0.value.tokens(at: now) < $1.value.tokens(at: now) })?.key {
                    buckets[fullest] = nil
                }
            }
            return buckets[key, default: TokenBucket(rate: rate, burst: burst)].take(now: now)
        }
    }

    /// Drops buckets that refilled completely (called periodically).
    public func prune(now: Date) {
        buckets.withLock { buckets in buckets = buckets.filter { !$0.value.isFull(at: now) } }
    }

    /// The number of keys tracked.
    public var trackedKeys: Int { buckets.withLock { $0.count } }
}
