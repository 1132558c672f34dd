public import Foundation

/// The per-source limits of the REST API — failed attempts, creation and check rates,
/// live codes — wherever they are kept: in this process (``MemorySourceLimits``, one
/// instance) or in the database every instance shares (a ``PostgresRoomStore``'s, so a
/// client spreading its requests over several instances still has one budget).
///
/// A *source* is a ``SourceKey``. Each step that checks a limit also counts toward it, in
/// one atomic step, so concurrent requests cannot overshoot.
public protocol SourceLimits: Sendable {
    /// Starts a guess-like attempt (an `accept`, a `check`, a `create` with a proposed
    /// code): `nil` when the source has used up its failures in the window; otherwise the
    /// attempt, counted as a failure until ``SourceAttempt/succeeded()``.
    func beginAttempt(_ source: String, now: Date) async throws -> SourceAttempt?

    /// Takes one creation from the source's budget; `false` when it is spent.
    func takeCreate(_ source: String, now: Date) async throws -> Bool

    /// Takes one `check` from the source's budget; `false` when it is spent.
    func takeCheck(_ source: String, now: Date) async throws -> Bool

    /// Reserves a place for a new live code of the source; `nil` when it holds as many as
    /// it may.
    func reserveCode(_ source: String, now: Date) async throws -> CodeReservation?

    /// `code` was accepted: it no longer counts against its source.
    func releaseCode(_ code: String) async

    /// Forgets what has aged out (called periodically).
    func prune(now: Date) async
}

/// One attempt counted against a source until it is known to have succeeded.
public struct SourceAttempt: Sendable {
    let onSuccess: @Sendable () async -> Void

    /// Wraps what taking the attempt back does.
    public init(onSuccess: @escaping @Sendable () async -> Void) {
        self.onSuccess = onSuccess
    }

    /// The attempt succeeded: it no longer counts.
    public func succeeded() async { await onSuccess() }
}

/// A place reserved for one live code.
public struct CodeReservation: Sendable {
    let onCommit: @Sendable (String, Date) async -> Void
    let onCancel: @Sendable () async -> Void

    /// Wraps what committing and cancelling do.
    public init(commit: @escaping @Sendable (String, Date) async -> Void, cancel: @escaping @Sendable () async -> Void) {
        onCommit = commit
        onCancel = cancel
    }

    /// The code was created: it counts until `expiresAt` or until it is accepted.
    public func commit(code: String, expiresAt: Date) async { await onCommit(code, expiresAt) }

    /// The creation failed: the place is free again.
    public func cancel() async { await onCancel() }
}

/// ``SourceLimits`` in this process's memory (the default; with several instances each
/// keeps its own).
public struct MemorySourceLimits: SourceLimits {
    let attempts: AttemptLimiter
    let creates: KeyedRateLimiter
    let checks: KeyedRateLimiter
    let codes: LiveCodeLedger

    /// Limits as `limits` says.
    public init(limits: ServerLimits) {
        attempts = AttemptLimiter(limit: limits.failedAttemptsPerMinute, window: 60)
        creates = KeyedRateLimiter(rate: limits.createsPerMinute / 60, burst: limits.createBurst)
        checks = KeyedRateLimiter(rate: limits.checksPerMinute / 60, burst: limits.checkBurst)
        codes = LiveCodeLedger(limit: limits.liveCodesPerSource)
    }

    public func beginAttempt(_ source: String, now: Date) async throws -> SourceAttempt? {
        attempts.begin(source, now: now).map { attempt in SourceAttempt { attempt.succeeded() } }
    }

    public func takeCreate(_ source: String, now: Date) async throws -> Bool { creates.take(source, now: now) }

    public func takeCheck(_ source: String, now: Date) async throws -> Bool { checks.take(source, now: now) }

    public func reserveCode(_ source: String, now: Date) async throws -> CodeReservation? {
        codes.reserve(source, now: now).map { place in
            CodeReservation(commit: { place.commit(code: $0, expiresAt: $1) }, cancel: { place.cancel() })
        }
    }

    public func releaseCode(_ code: String) async { codes.release(code: code) }

    public func prune(now: Date) async {
        attempts.prune(now: now)
        creates.prune(now: now)
        checks.prune(now: now)
        codes.prune(now: now)
    }
}
