import InvisoKit
import InvisoTesting
import Testing

@Suite("ReconnectPolicy", .timeLimit(.minutes(6)))
struct ReconnectPolicyTests {
    @Test func ceilingsGrowExponentiallyUpToTheCap() {
        let policy = ReconnectPolicy(base: .milliseconds(500), factor: 2, cap: .seconds(30))
        let ceilings = (1...9).map { policy.ceiling(forAttempt: $0) }
        #expect(
            ceilings == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30),
                .seconds(30), .seconds(30),
            ])
        #expect(policy.ceiling(forAttempt: 10_000) == .seconds(30))
    }

    @Test func fullJitterScalesTheCeiling() {
        let policy = ReconnectPolicy(base: .seconds(1), factor: 3, cap: .seconds(20))
        #expect(policy.delay(forAttempt: 1, unitRandom: 0) == .zero)
        #expect(policy.delay(forAttempt: 2, unitRandom: 0.5) == .milliseconds(1_500))
        #expect(policy.delay(forAttempt: 3, unitRandom: 0.25) == .milliseconds(2_250))
        #expect(policy.delay(forAttempt: 4, unitRandom: 0.5) == .seconds(10))
        #expect(policy.delay(forAttempt: 4, unitRandom: 7) == .seconds(20))  // clamped
        #expect(policy.delay(forAttempt: 4, unitRandom: -1) == .zero)
    }

    @Test func seededSequenceIsReproducibleAndBounded() {
        let policy = ReconnectPolicy(base: .milliseconds(100), factor: 2, cap: .seconds(1))
        func sequence() -> [Duration] {
            var generator = SeededGenerator(seed: 7)
            return (1...12).map { policy.delay(forAttempt: $0, using: &generator) }
        }
        let first = sequence()
        #expect(first == sequence())
        for (index, delay) in first.enumerated() {
            #expect(delay >= .zero && delay < policy.ceiling(forAttempt: index + 1))
        }
        #expect(Set(first).count == first.count)  // jittered, not constant
    }

    @Test func maxAttempts() {
        let policy = ReconnectPolicy(maxAttempts: 3)
        #expect(policy.allows(attempt: 3))
        #expect(!policy.allows(attempt: 4))
        #expect(ReconnectPolicy().allows(attempt: 1_000_000))
    }
}
