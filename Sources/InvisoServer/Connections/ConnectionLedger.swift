/// Which connections are open, from which source, and which of them are *pending* — not
/// yet a WebSocket and not waiting for a response: connecting, sending a request, or idle
/// between requests. A value-type state machine with no I/O; ``ConnectionGuardian`` keeps
/// it under a lock and closes what it says.
///
/// Admission rules, in order:
/// 1. a source with `perSource` connections open gets no more;
/// 2. a source with `pendingPerSource` pending connections gets no more;
/// 3. when `total` connections are open, the connection that has been pending longest
///    (any source) is evicted to make room; with none pending, the new one is refused.
///
/// So connections that never finish a request cannot shut out new clients: they are the
/// first to go, and one source can hold only a few of them. Eviction finds the oldest
/// pending connection in amortized O(1) (a queue of pending transitions, stale entries
/// skipped).
package struct ConnectionLedger: Sendable {
    /// The caps.
    package struct Limits: Sendable, Equatable {
        package var total: Int?
        package var perSource: Int
        package var pendingPerSource: Int

        /// Creates limits.
        package init(total: Int?, perSource: Int, pendingPerSource: Int) {
            self.total = total
            self.perSource = perSource
            self.pendingPerSource = pendingPerSource
        }
    }

    /// The answer to ``admit(source:)``.
    package enum Admission: Sendable, Equatable {
        /// Admitted as `id`; close `evict` first to make room, if set.
        case admitted(id: UInt64, evict: UInt64?)
        /// Refused: close the new connection.
        case refused
    }

    private struct Entry: Sendable {
        var source: String
        /// The sequence number of the transition to pending, or `nil` when settled.
        var pendingSince: UInt64?
    }

    private struct SourceCount: Sendable {
        var open = 0
        var pending = 0
    }

    package let limits: Limits
    private var entries: [UInt64: Entry] = [:]
    private var sources: [String: SourceCount] = [:]
    /// (sequence, id) of pending transitions, oldest first; stale ones are skipped.
    private var pendingQueue: [(sequence: UInt64, id: UInt64)] = []
    private var pendingQueueStart = 0
    private var pendingCount = 0
    private var nextID: UInt64 = 1
    private var nextSequence: UInt64 = 1

    package init(limits: Limits) {
        self.limits = limits
    }

    /// Open connections.
    package var openCount: Int { entries.count }
    /// Pending connections.
    package var pendingTotal: Int { pendingCount }

    /// Open and pending connections of `source`.
    package func count(source: String) -> (open: Int, pending: Int) {
        let count = sources[source] ?? SourceCount()
        return (count.open, count.pending)
    }

    /// A new connection from `source`; it starts pending.
    package mutating func admit(source: String) -> Admission {
        let count = sources[source] ?? SourceCount()
        guard count.open < limits.perSource, count.pending < limits.pendingPerSource else { return .refused }
        var evict: UInt64?
        if let total = limits.total, entries.count >= total {
            guard let oldest = oldestPending() else { return .refused }
            remove(oldest)
            evict = oldest
        }
        let id = nextID
        nextID += 1
        entries[id] = Entry(source: source, pendingSince: nil)
        sources[source, default: SourceCount()].open += 1
        markPending(id)
        return .admitted(id: id, evict: evict)
    }

    /// The connection became a WebSocket or is waiting for its response.
    package mutating func settle(_ id: UInt64) {
        guard var entry = entries[id], entry.pendingSince != nil else { return }
        entry.pendingSince = nil
        entries[id] = entry
        sources[entry.source]?.pending -= 1
        pendingCount -= 1
    }

    /// The connection is pending again (its response was sent; it may send another request).
    package mutating func markPending(_ id: UInt64) {
        guard var entry = entries[id], entry.pendingSince == nil else { return }
        entry.pendingSince = nextSequence
        entries[id] = entry
        sources[entry.source]?.pending += 1
        pendingCount += 1
        pendingQueue.append((nextSequence, id))
        nextSequence += 1
        compactIfNeeded()
    }

    /// The connection closed (or was evicted).
    package mutating func remove(_ id: UInt64) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.pendingSince != nil {
            pendingCount -= 1
            sources[entry.source]?.pending -= 1
        }
        sources[entry.source]?.open -= 1
        if sources[entry.source]?.open == 0 { sources[entry.source] = nil }
    }

    /// The connection pending longest, if any.
    private mutating func oldestPending() -> UInt64? {
        while pendingQueueStart < pendingQueue.count {
            let (sequence, id) = pendingQueue[pendingQueueStart]
            if entries[id]?.pendingSince == sequence { return id }
            pendingQueueStart += 1
        }
        return nil
    }

    /// Drops stale queue entries once they outnumber live ones.
    private mutating func compactIfNeeded() {
        guard pendingQueue.count - pendingQueueStart > 2 * pendingCount + 64 || pendingQueueStart > 1024 else { return }
        pendingQueue = pendingQueue[pendingQueueStart...].filter { entries[$0.id]?.pendingSince == $0.sequence }
        pendingQueueStart = 0
    }
}
