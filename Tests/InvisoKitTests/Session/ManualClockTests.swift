import Foundation
import InvisoTesting
import InvisoTime
import Synchronization
import Testing

final class WakeLog: Sendable {
    private let list = Mutex<[Int]>([])
    func append(_ index: Int) { list.withLock { $0.append(index) } }
    var all: [Int] { list.withLock { $0 } }
}

@Suite("ManualClock")
struct ManualClockTests {
    /// Waits (real time, briefly) until `count` tasks sleep on the clock.
    static func sleepers(_ clock: ManualClock, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while clock.sleeperCount < count {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test func sleepersWakeInDeadlineOrderOnlyWhenTheClockGetsThere() async throws {
        let clock = ManualClock()
        let woken = WakeLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, seconds) in [(0, 30), (1, 10), (2, 20), (3, 10)] {
                group.addTask {
                    try await clock.sleep(for: .seconds(seconds))
                    woken.append(index)
                }
                // One at a time, so that the two 10 s sleepers went to sleep in index order.
                try await Self.sleepers(clock, index + 1)
            }
            #expect(clock.nextDeadline == ClockInstant.origin.advanced(by: .seconds(10)))
            clock.advance(by: .seconds(9))
            try await Task.sleep(for: .milliseconds(20))
            #expect(woken.all.isEmpty)
            clock.advance(by: .seconds(11))
            while woken.all.count < 3 { try await Task.sleep(for: .milliseconds(1)) }
            #expect(woken.all == [1, 3, 2])
            #expect(clock.sleeperCount == 1)
            clock.advance(to: ClockInstant.origin.advanced(by: .seconds(30)))
            try await group.waitForAll()
        }
        #expect(woken.all == [1, 3, 2, 0])
        #expect(clock.now == ClockInstant.origin.advanced(by: .seconds(30)))
    }

    @Test func aPastDeadlineReturnsAtOnceAndCancellationThrows() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: ClockInstant.origin.advanced(by: .seconds(1)), tolerance: nil)
        let sleeper = Task { try await clock.sleep(for: .seconds(100)) }
        try await Self.sleepers(clock, 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
        // Cancelled before it slept: throws without registering.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func theWallClockMovesWithTheMonotonicTime() {
        let clock = ManualClock()
        let start = clock.wallClock
        clock.advance(by: .milliseconds(1_500))
        #expect(clock.wallClock.timeIntervalSince(start) == 1.5)
    }
}
