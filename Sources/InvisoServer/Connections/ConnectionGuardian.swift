import NIOCore
import Synchronization

/// The server-wide side of connection limits: a ``ConnectionLedger`` under a lock, and
/// the channels it may have to close (an evicted connection is closed on its own loop).
final class ConnectionGuardian: Sendable {
    private struct Shared: ~Copyable {
        var ledger: ConnectionLedger
        var channels: [UInt64: any Channel] = [:]
    }

    private let shared: Mutex<Shared>
    let metrics: ServerMetrics

    init(limits: ConnectionLedger.Limits, metrics: ServerMetrics) {
        shared = Mutex(Shared(ledger: ConnectionLedger(limits: limits)))
        self.metrics = metrics
    }

    /// Admits `channel` from `source`, closing the connection evicted for it; `nil` when
    /// refused (the caller closes `channel`).
    func admit(_ channel: any Channel, source: String) -> UInt64? {
        let (id, evicted) = shared.withLock { shared -> (UInt64?, (any Channel)?) in
            switch shared.ledger.admit(source: source) {
            case .refused:
                return (nil, nil)
            case .admitted(let id, let evict):
                shared.channels[id] = channel
                return (id, evict.flatMap { shared.channels.removeValue(forKey: $0) })
            }
        }
        if let evicted {
            metrics.closed(.connectionCap)
            evicted.close(promise: nil)
        }
        if id == nil { metrics.closed(.connectionCap) }
        return id
    }

    /// The connection is a WebSocket now, or waits for its response.
    func settle(_ id: UInt64) {
        shared.withLock { $0.ledger.settle(id) }
    }

    /// The connection is idle between requests again.
    func markPending(_ id: UInt64) {
        shared.withLock { $0.ledger.markPending(id) }
    }

    /// The connection closed.
    func remove(_ id: UInt64) {
        shared.withLock { shared in
            shared.ledger.remove(id)
            shared.channels[id] = nil
        }
    }

    /// Open connections, and those pending.
    var counts: (open: Int, pending: Int) {
        shared.withLock { ($0.ledger.openCount, $0.ledger.pendingTotal) }
    }
}
