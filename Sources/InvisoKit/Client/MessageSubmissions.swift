/// Messages that ``ChatClient/send(contentsOf:)`` accepted from any thread and the session
/// machine has not taken yet, with what such a caller needs to be answered at once instead
/// of waiting for the client's event loop: the ids the machine will give the messages,
/// whether its outbox has room, and whether the session is open.
///
/// A value type kept under the client's lock. The client keeps it in step with the machine
/// (``sync(nextMessageID:outboxRoom:isClosed:)`` after every step of the machine), and the machine takes every message
/// through it, in order, before any other step that could give out an id — so the ids
/// promised here are the ones the machine gives:
///
/// ```
///   send(contentsOf:) ── submit ──▶ pending ──┐ (one drain job per burst)
///      any thread       (ids now)             ▼
///                              client loop: take ─▶ machine.send(contentsOf:) ─▶ sync
/// ```
struct MessageSubmissions: Sendable {
    enum Phase: Sendable {
        /// No machine yet: ``ChatError/wrongState``.
        case notStarted
        case open
        /// The session ended: ``ChatError/closed``.
        case closed
    }

    private(set) var phase = Phase.notStarted
    /// The id the next accepted message gets.
    private(set) var nextID: UInt64 = 1
    /// How many more messages the machine's outbox takes, pending ones counted.
    private(set) var room = 0
    /// Accepted, not yet taken by the machine, in order.
    private(set) var pending: [ChatPayload] = []
    /// A drain job was asked for and has not taken the pending messages yet.
    private(set) var drainScheduled = false

    /// Accepts messages — all of them, or none — and returns their ids, and whether the
    /// caller must schedule a drain (the first submission since the last one taken).
    ///
    /// - Throws: ``ChatError/wrongState`` before the session started,
    ///   ``ChatError/closed`` after it ended, ``ChatError/outboxFull`` without room for all.
    mutating func submit(_ payloads: [ChatPayload]) throws(ChatError) -> (ids: Range<UInt64>, scheduleDrain: Bool) {
        switch phase {
        case .notStarted: throw .wrongState
        case .closed: throw .closed
        case .open: break
        }
        guard payloads.count <= room else { throw .outboxFull }
        let ids = nextID..<nextID + UInt64(payloads.count)
        nextID = ids.upperBound
        room -= payloads.count
        pending.append(contentsOf: payloads)
        let schedule = !payloads.isEmpty && !drainScheduled
        if schedule { drainScheduled = true }
        return (ids, schedule)
    }

    /// Hands the pending messages over (to the machine, next) and empties the queue.
    mutating func take() -> [ChatPayload] {
        drainScheduled = false
        defer { pending.removeAll() }
        return pending
    }

    /// Takes the machine's view after a step: its next id and outbox room, or its end.
    mutating func sync(nextMessageID: UInt64, outboxRoom: Int, isClosed: Bool) {
        guard !isClosed else {
            phase = .closed
            pending.removeAll()
            return
        }
        phase = .open
        nextID = nextMessageID + UInt64(pending.count)
        room = max(0, outboxRoom - pending.count)
    }
}
