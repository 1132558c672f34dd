import Foundation
@testable import InvisoServer
import Testing

@Suite("Limiters and formats")
struct LimiterTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("token bucket: burst, refill, refusal takes nothing")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 2, burst: 3)
        func take(_ amount: Double = 1, after seconds: Double) -> Bool {
            bucket.take(amount, now: start.addingTimeInterval(seconds))
        }
        for _ in 0..<3 { #expect(take(after: 0)) }
        #expect(!take(after: 0))
        #expect(!take(after: 0.4))
        #expect(take(after: 0.5))
        #expect(!take(5, after: 100))
        #expect(take(3, after: 100))
    }

    @Test("attempt limiter: sliding window per key, bounded memory")
    func attemptLimiter() {
        let limiter = AttemptLimiter(limit: 3, window: 60, maxKeys: 2)
        for second in 0..<3 { limiter.recordFailure("a", now: start.addingTimeInterval(Double(second))) }
        #expect(limiter.isBlocked("a", now: start.addingTimeInterval(10)))
        #expect(!limiter.isBlocked("b", now: start))
        #expect(!limiter.isBlocked("a", now: start.addingTimeInterval(60.5)))
        limiter.recordFailure("b", now: start)
        limiter.recordFailure("c", now: start.addingTimeInterval(1))
        #expect(limiter.trackedKeys <= 2)
        limiter.prune(now: start.addingTimeInterval(1_000))
        #expect(limiter.trackedKeys == 0)
    }

    @Test("expiry timestamps match JavaScript's toISOString()", arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"), (1_800_000_300.5, "2027-01-15T08:05:00.500Z"),
        (951_782_400.999, "2000-02-29T00:00:00.999Z"), (4_102_444_799.0, "2099-12-31T23:59:59.000Z"),
    ])
    func isoTimestamps(seconds: Double, expected: String) {
        #expect(RoomAPI.isoTimestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }
}
