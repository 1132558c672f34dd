/// Runs `operation`, throwing `error` when `sleep(duration)` finishes first; the loser is
/// cancelled.
func withTimeout<Output: Sendable>(
    _ duration: Duration,
    sleep: @escaping @Sendable (Duration) async throws -> Void,
    error: some Error & Sendable,
    _ operation: @escaping @Sendable () async throws -> Output
) async throws -> Output {
    try await withThrowingTaskGroup(of: Output.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await sleep(duration)
            throw error
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw error }
        return first
    }
}
