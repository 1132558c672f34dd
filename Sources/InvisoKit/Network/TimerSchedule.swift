import InvisoTime

/// A driver's bookkeeping for the timers its machine arms: the deadline each timer is
/// armed for, and the deadline the one task sleeping for it wakes at.
///
/// Machines re-arm some timers on nearly every input (the retransmit timer on each send,
/// the ack timer on each message), so a task per arm would mean thousands of sleeping
/// tasks a second. Instead a timer has at most one sleeper that counts: re-arming later
/// leaves it asleep (when it wakes it finds the new deadline and sleeps on); only a deadline
/// earlier than the sleeper's starts a new one (the old one then stops when it wakes). A
/// cancelled or re-armed timer is thereby never reported early or twice, as the machines
/// require.
struct TimerSchedule<Timer: Hashable & Sendable>: Sendable {
    /// What a sleeper does when it wakes.
    enum Wake: Sendable, Equatable {
        /// The timer is due: report it.
        case fire
        /// The timer was re-armed for later: sleep until then.
        case sleep(until: ClockInstant)
        /// Cancelled, or another sleeper took over: end.
        case stop
    }

    private var deadlines: [Timer: ClockInstant] = [:]
    private var sleepers: [Timer: ClockInstant] = [:]

    /// Arms (or re-arms) `timer` for `deadline`; `true` when a new sleeper must be started
    /// for it (none sleeps until `deadline` or earlier).
    mutating func arm(_ timer: Timer, at deadline: ClockInstant) -> Bool {
        deadlines[timer] = deadline
        if let sleeper = sleepers[timer], sleeper <= deadline { return false }
        sleepers[timer] = deadline
        return true
    }

    /// The sleeper started for `until` could not run (the driver is not running).
    mutating func sleeperFailed(_ timer: Timer, until: ClockInstant) {
        if sleepers[timer] == until { sleepers[timer] = nil }
    }

    /// Forgets `timer`: its sleeper stops when it wakes.
    mutating func cancel(_ timer: Timer) {
        deadlines[timer] = nil
    }

    /// A sleeper of `timer` that slept until `until` woke at `now`.
    mutating func woke(_ timer: Timer, sleptUntil until: ClockInstant, now: ClockInstant) -> Wake {
        guard sleepers[timer] == until else { return .stop }
        guard let deadline = deadlines[timer] else {
            sleepers[timer] = nil
            return .stop
        }
        guard deadline <= now else {
            sleepers[timer] = deadline
            return .sleep(until: deadline)
        }
        sleepers[timer] = nil
        deadlines[timer] = nil
        return .fire
    }
}

/// An actor that runs a machine's timers on its clock, one sleeping child task per timer
/// at most (``TimerSchedule``), reporting due timers through ``timerFired(_:)``.
protocol TimerDriving: Actor {
    associatedtype MachineTimer: Hashable & Sendable
    var timers: TimerSchedule<MachineTimer> { get set }
    var clock: any InvisoClock { get }
    /// Runs a job as a child of the driver's task group; `false` when it is not running.
    @discardableResult func spawn(_ job: @escaping @Sendable () async -> Void) -> Bool
    /// `timer` is due.
    func timerFired(_ timer: MachineTimer) async
}

extension TimerDriving {
    /// Arms `timer` for `deadline` (replacing an armed one of the same kind).
    func arm(_ timer: MachineTimer, at deadline: ClockInstant) {
        guard timers.arm(timer, at: deadline) else { return }
        let clock = clock
        let started = spawn { [weak self] in
            var until = deadline
            while true {
                do { try await clock.sleep(until: until, tolerance: nil) } catch { return }
                guard let self, case .sleep(let next) = await self.timerWoke(timer, sleptUntil: until) else { return }
                until = next
            }
        }
        if !started { timers.sleeperFailed(timer, until: deadline) }
    }

    /// A sleeper woke: fires the timer when it is due.
    func timerWoke(_ timer: MachineTimer, sleptUntil until: ClockInstant) async -> TimerSchedule<MachineTimer>.Wake {
        let wake = timers.woke(timer, sleptUntil: until, now: clock.now)
        if wake == .fire { await timerFired(timer) }
        return wake
    }
}
