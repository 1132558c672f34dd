import InvisoTime

/// A driver's bookkeeping for the timers its machine arms: each arm or cancel starts a new
/// generation of that timer, and a wake-up counts only if it belongs to the current one.
/// A timer that fires after being re-armed or cancelled is thereby never reported, as the
/// machines require.
struct TimerGenerations<Timer: Hashable & Sendable>: Sendable {
    private var current: [Timer: UInt64] = [:]
    /// The timers armed and not yet fired or cancelled (diagnostics).
    private(set) var armed: Set<Timer> = []

    /// Arms (or re-arms) `timer`; the wake-up must bring back the returned generation.
    mutating func arm(_ timer: Timer) -> UInt64 {
        armed.insert(timer)
        return next(timer)
    }

    /// Forgets `timer`: a wake-up already on its way is stale.
    mutating func cancel(_ timer: Timer) {
        armed.remove(timer)
        _ = next(timer)
    }

    /// Whether a wake-up of `generation` is current; it then counts once.
    mutating func fire(_ timer: Timer, generation: UInt64) -> Bool {
        guard current[timer] == generation else { return false }
        cancel(timer)
        return true
    }

    private mutating func next(_ timer: Timer) -> UInt64 {
        let generation = (current[timer] ?? 0) &+ 1
        current[timer] = generation
        return generation
    }
}

/// An actor that runs a machine's timers: `arm` sleeps on the clock in a child task and
/// reports the wake-up through ``timerFired(_:generation:)`` (which checks the generation).
protocol TimerDriving: Actor {
    associatedtype MachineTimer: Hashable & Sendable
    var timers: TimerGenerations<MachineTimer> { get set }
    var clock: any InvisoClock { get }
    /// Runs a job as a child of the driver's task group.
    func spawn(_ job: @escaping @Sendable () async -> Void)
    /// A wake-up of `generation` arrived.
    func timerFired(_ timer: MachineTimer, generation: UInt64) async
}

extension TimerDriving {
    /// Arms `timer` for `deadline` (replacing an armed one of the same kind).
    func arm(_ timer: MachineTimer, at deadline: ClockInstant) {
        let generation = timers.arm(timer)
        let clock = clock
        spawn { [weak self] in
            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
            await self?.timerFired(timer, generation: generation)
        }
    }
}
