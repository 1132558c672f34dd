@testable import InvisoKit
import InvisoTime
import Testing

@Suite("TimerSchedule: one sleeper per timer")
struct TimerScheduleTests {
    let origin = ClockInstant.origin
    func at(_ seconds: Int) -> ClockInstant { origin.advanced(by: .seconds(seconds)) }

    @Test("Re-arming later keeps the sleeper, which sleeps on and fires once at the new deadline")
    func reArmLater() {
        var schedule = TimerSchedule<String>()
        let r1 = schedule.arm("retransmit", at: at(2))
        #expect(r1)
        let r2 = schedule.arm("retransmit", at: at(3))
        #expect(!r2)
        let r3 = schedule.arm("retransmit", at: at(5))
        #expect(!r3)
        let r4 = schedule.woke("retransmit", sleptUntil: at(2), now: at(2)) == .sleep(until: at(5))
        #expect(r4)
        let r5 = schedule.woke("retransmit", sleptUntil: at(5), now: at(5))
        #expect(r5 == .fire)
        // Fired: a late wake-up finds nothing.
        let r6 = schedule.woke("retransmit", sleptUntil: at(5), now: at(6))
        #expect(r6 == .stop)
    }

    @Test("An earlier deadline starts a new sleeper; the old one stops when it wakes")
    func reArmEarlier() {
        var schedule = TimerSchedule<String>()
        let r7 = schedule.arm("ack", at: at(10))
        #expect(r7)
        let r8 = schedule.arm("ack", at: at(1))
        #expect(r8)
        let r9 = schedule.woke("ack", sleptUntil: at(1), now: at(1))
        #expect(r9 == .fire)
        let r10 = schedule.woke("ack", sleptUntil: at(10), now: at(10))
        #expect(r10 == .stop)
    }

    @Test("A cancelled timer never fires; arming it again needs a sleeper only when none sleeps early enough")
    func cancel() {
        var schedule = TimerSchedule<String>()
        let r11 = schedule.arm("pong", at: at(10))
        #expect(r11)
        schedule.cancel("pong")
        let r12 = schedule.arm("pong", at: at(20))
        #expect(!r12)
        schedule.cancel("pong")
        let r13 = schedule.woke("pong", sleptUntil: at(10), now: at(10))
        #expect(r13 == .stop)
        let r14 = schedule.arm("pong", at: at(30))
        #expect(r14)
        let r15 = schedule.woke("pong", sleptUntil: at(30), now: at(30))
        #expect(r15 == .fire)
    }

    @Test("Timers of different kinds are independent")
    func kinds() {
        var schedule = TimerSchedule<String>()
        let r16 = schedule.arm("a", at: at(1))
        #expect(r16)
        let r17 = schedule.arm("b", at: at(1))
        #expect(r17)
        let r18 = schedule.woke("b", sleptUntil: at(1), now: at(1))
        #expect(r18 == .fire)
        let r19 = schedule.woke("a", sleptUntil: at(1), now: at(1))
        #expect(r19 == .fire)
    }

    @Test("A sleeper that could not start (the driver was not running) is not counted on")
    func sleeperFailed() {
        var schedule = TimerSchedule<String>()
        let first = schedule.arm("ping", at: at(25))
        #expect(first)
        schedule.sleeperFailed("ping", until: at(25))
        let again = schedule.arm("ping", at: at(50))
        #expect(again)
        let woke = schedule.woke("ping", sleptUntil: at(50), now: at(50))
        #expect(woke == .fire)
    }
}
