import InvisoTime

/// Runs `operation`, throwing `error` when `duration` passes on `clock` first; the loser is
/// cancelled.
func withTimeout<Output: Sendable>(
    _ duration: Duration,
    clock: any InvisoClock,
    error: some Error & Sendable,
    _ operation: @escaping @Sendable () async throws -> Output
) async throws -> Output {
    try await withThrowingTaskGroup(of: Output.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await clock.sleep(for: duration)
            throw error
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw error }
        return first
    }
}
