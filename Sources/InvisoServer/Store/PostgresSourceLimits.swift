import Crypto
import Foundation
import InvisoCrypto
import PostgresNIO

/// ``SourceLimits`` in the PostgreSQL database the instances share, so a client that
/// spreads its requests over several instances has one budget, not one per instance.
///
/// Tables (migration 3): `inviso_source_attempts` (one row per attempt, counted in a
/// sliding window), `inviso_source_buckets` (one token bucket per kind and source) and
/// `inviso_source_codes` (the live codes each source created). A source is stored as a
/// digest (`sha256` of `inviso-source:` and the ``SourceKey``), never as an address; rows
/// last at most a window, a full bucket's idle time or a code's life, and are pruned.
///
/// Checking and counting are one step: an attempt or a code reservation runs in a
/// transaction holding a per-source advisory lock; a bucket is one `INSERT … ON CONFLICT
/// DO UPDATE … WHERE` (the row lock serializes instances).
struct PostgresSourceLimits: SourceLimits {
    let store: PostgresRoomStore
    let limits: ServerLimits

    /// What a source is stored as.
    static func digest(_ source: String) -> String {
        Hex.encode(Array(SHA256.hash(data: Array("inviso-source:\(source)".utf8))).prefix(16))
    }

    func beginAttempt(_ source: String, now: Date) async throws -> SourceAttempt? {
        let key = Self.digest(source)
        let since = now.millisecondsSince1970 - 60_000
        let token = try await countThenInsert(
            lock: "attempt:" + key, limit: limits.failedAttemptsPerMinute, "counting an attempt",
            count: "SELECT count(*) FROM inviso_source_attempts WHERE source = \(key) AND at > \(since)",
            insert: "INSERT INTO inviso_source_attempts (source, at) VALUES (\(key), \(now.millisecondsSince1970)) RETURNING token")
        guard let token else { return nil }
        return SourceAttempt {
            _ = try? await store.rows("DELETE FROM inviso_source_attempts WHERE token = \(token)", "taking back an attempt")
        }
    }

    /// In one transaction under the advisory lock `lock`: runs `count`, and when it is
    /// below `limit` runs `insert` and returns the token it returns; `nil` otherwise.
    private func countThenInsert(
        lock: String, limit: Int, _ operation: String, count: PostgresQuery, insert: PostgresQuery
    ) async throws -> Int64? {
        try await store.transaction(operation) { connection, logger in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lock), 0))", logger: logger)
            var counted: Int64 = 0
            for try await value in try await connection.query(count, logger: logger).decode(Int64.self) { counted = value }
            guard counted < limit else { return nil }
            var token: Int64?
            for try await value in try await connection.query(insert, logger: logger).decode(Int64.self) { token = value }
            return token
        }
    }

    func takeCreate(_ source: String, now: Date) async throws -> Bool {
        try await take("create", source, rate: limits.createsPerMinute / 60, burst: limits.createBurst, now: now)
    }

    func takeCheck(_ source: String, now: Date) async throws -> Bool {
        try await take("check", source, rate: limits.checksPerMinute / 60, burst: limits.checkBurst, now: now)
    }

    /// One token from bucket `kind` of `source`, refilled at `rate` per second up to `burst`.
    private func take(_ kind: String, _ source: String, rate: Double, burst: Double, now: Date) async throws -> Bool {
        let key = Self.digest(source)
        let millis = now.millisecondsSince1970
        let rows = try await store.rows(
            """
            INSERT INTO inviso_source_buckets AS b (kind, source, tokens, updated)
            VALUES (\(kind), \(key), \(burst - 1), \(millis))
            ON CONFLICT (kind, source) DO UPDATE
            SET tokens = LEAST(\(burst), b.tokens + GREATEST(0, \(millis) - b.updated) / 1000.0 * \(rate)) - 1,
                updated = GREATEST(b.updated, \(millis))
            WHERE LEAST(\(burst), b.tokens + GREATEST(0, \(millis) - b.updated) / 1000.0 * \(rate)) >= 1
            RETURNING 1
            """,
            "taking from a rate limit")
        return !rows.isEmpty
    }

    func reserveCode(_ source: String, now: Date) async throws -> CodeReservation? {
        let key = Self.digest(source)
        let millis = now.millisecondsSince1970
        let token = try await countThenInsert(
            lock: "code:" + key, limit: limits.liveCodesPerSource, "reserving a live code",
            count: "SELECT count(*) FROM inviso_source_codes WHERE source = \(key) AND expires_at > \(millis)",
            insert: "INSERT INTO inviso_source_codes (source, expires_at) VALUES (\(key), \(millis + 60_000)) RETURNING token")
        guard let token else { return nil }
        let store = self.store
        return CodeReservation(
            commit: { code, expiresAt in
                _ = try? await store.rows(
                    "UPDATE inviso_source_codes SET code = \(code), expires_at = \(expiresAt.millisecondsSince1970) WHERE token = \(token)",
                    "recording a live code")
            },
            cancel: {
                _ = try? await store.rows("DELETE FROM inviso_source_codes WHERE token = \(token)", "freeing a live code")
            })
    }

    func releaseCode(_ code: String) async {
        _ = try? await store.rows("DELETE FROM inviso_source_codes WHERE code = \(code)", "releasing a live code")
    }

    func prune(now: Date) async {
        let millis = now.millisecondsSince1970
        _ = try? await store.rows("DELETE FROM inviso_source_attempts WHERE at <= \(millis - 60_000)", "pruning attempts")
        _ = try? await store.rows("DELETE FROM inviso_source_codes WHERE expires_at <= \(millis)", "pruning live codes")
        for (kind, rate, burst) in [
            ("create", limits.createsPerMinute / 60, limits.createBurst), ("check", limits.checksPerMinute / 60, limits.checkBurst),
        ] {
            _ = try? await store.rows(
                """
                DELETE FROM inviso_source_buckets
                WHERE kind = \(kind) AND tokens + GREATEST(0, \(millis) - updated) / 1000.0 * \(rate) >= \(burst)
                """,
                "pruning rate limits")
        }
    }
}

extension PostgresRoomStore {
    /// Per-source limits in this database, shared by every instance (``PostgresSourceLimits``).
    public func sharedSourceLimits(_ limits: ServerLimits) -> (any SourceLimits)? {
        PostgresSourceLimits(store: self, limits: limits)
    }
}
