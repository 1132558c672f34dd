/// When to try again after a lost signaling connection: exponential backoff with full
/// jitter.
///
/// Attempt `n` (1-based) waits a uniformly random time in `[0, min(cap, base · factorⁿ⁻¹))`
/// ("full jitter", which spreads out clients that lost the server at the same moment).
/// A value type with no clock or randomness of its own: the caller passes a random
/// number, so the schedule is testable and reproducible.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The ceiling of the first attempt's delay.
    public var base: Duration
    /// How much the ceiling grows per attempt (≥ 1).
    public var factor: Double
    /// The largest ceiling.
    public var cap: Duration
    /// Give up after this many attempts in a row without a connection; `nil` never gives up.
    public var maxAttempts: Int?

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - base: The first attempt's ceiling; 0.5 s by default.
    ///   - factor: The growth per attempt; 2 by default (values below 1 count as 1).
    ///   - cap: The largest ceiling; 30 s by default.
    ///   - maxAttempts: Attempts before giving up; `nil` (never) by default.
    public init(base: Duration = .milliseconds(500), factor: Double = 2, cap: Duration = .seconds(30), maxAttempts: Int? = nil) {
        self.base = base
        self.factor = max(factor, 1)
        self.cap = cap
        self.maxAttempts = maxAttempts
    }

    /// The ceiling of attempt `attempt` (1-based): `min(cap, base · factor^(attempt-1))`.
    public func ceiling(forAttempt attempt: Int) -> Duration {
        let exponent = Double(max(attempt, 1) - 1)
        let seconds = Self.seconds(base) * pow(factor, exponent)
        let capSeconds = Self.seconds(cap)
        return seconds.isFinite && seconds < capSeconds ? Self.duration(seconds) : cap
    }

    /// The delay before attempt `attempt`, given a uniform random number in `[0, 1)`.
    ///
    /// - Parameters:
    ///   - attempt: 1 for the first retry after a loss.
    ///   - unitRandom: A number in `[0, 1)`; values outside are clamped.
    public func delay(forAttempt attempt: Int, unitRandom: Double) -> Duration {
        let unit = unitRandom.isFinite ? min(max(unitRandom, 0), 1) : 0
        return Self.duration(Self.seconds(ceiling(forAttempt: attempt)) * unit)
    }

    /// The delay before attempt `attempt`, drawing the jitter from `generator`.
    public func delay(forAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        delay(forAttempt: attempt, unitRandom: Double.random(in: 0..<1, using: &generator))
    }

    /// Whether attempt `attempt` should still be made.
    public func allows(attempt: Int) -> Bool {
        maxAttempts.map { attempt <= $0 } ?? true
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func duration(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded(.down)))
    }

    /// Integer power without Foundation.
    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(min(exponent, 2_048))
        while remaining > 0 && result.isFinite {
            result *= base
            remaining -= 1
        }
        return result
    }
}
