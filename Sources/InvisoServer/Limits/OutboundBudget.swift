import Synchronization

/// The bytes all signaling sockets together may hold queued for their readers.
///
/// Each ``SocketWriter`` reports how many bytes its channel holds (NIO's
/// `bufferedWritableBytes`) after every batch it writes, when its writability changes,
/// while bytes stay queued, and when it closes; the budget keeps the sum. Once the sum
/// passes ``limit``, a socket that is behind (unwritable) is closed instead of being given
/// more — so however many readers stop reading, the server's memory for them stays near
/// `limit` plus what sockets that keep up hold for a moment.
final class OutboundBudget: Sendable {
    /// Queued bytes across all sockets above which sockets that are behind are closed.
    let limit: Int
    private let total = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Adds `delta` (negative when bytes left) and returns the new total.
    func adjust(by delta: Int) -> Int {
        guard delta != 0 else { return total.load(ordering: .relaxed) }
        return total.wrappingAdd(delta, ordering: .relaxed).newValue
    }

    /// Bytes queued across all sockets as last reported.
    var queuedBytes: Int { total.load(ordering: .relaxed) }
}
