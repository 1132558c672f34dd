public import Foundation

/// A token bucket: `rate` tokens per second refill up to `burst`; a request takes tokens
/// or is refused. Time comes from the caller, so tests drive it with a manual clock.
public struct TokenBucket: Sendable, Equatable {
    /// Tokens added per second.
    public let rate: Double
    /// The most tokens the bucket holds (and starts with).
    public let burst: Double
    private var tokens: Double
    private var updated: Date?

    /// Creates a full bucket.
    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Takes `amount` tokens if the bucket holds them at `now`; returns whether it did.
    /// A refused request takes nothing.
    public mutating func take(_ amount: Double = 1, now: Date) -> Bool {
        if let updated {
            let elapsed = now.timeIntervalSince(updated)
            if elapsed > 0 { tokens = min(burst, tokens + elapsed * rate) }
        }
        updated = now
        guard tokens >= amount else { return false }
        tokens -= amount
        return true
    }

    /// The tokens the bucket would hold at `now`.
    public func tokens(at now: Date) -> Double {
        guard let updated else { return tokens }
        return min(burst, tokens + max(0, now.timeIntervalSince(updated)) * rate)
    }

    /// Whether the bucket is full at `now` (its key has been idle long enough to forget).
    public func isFull(at now: Date) -> Bool { tokens(at: now) >= burst }
}
