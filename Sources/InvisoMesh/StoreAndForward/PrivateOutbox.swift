/// Private messages waiting for their recipient, per peer: the sender's side of
/// store-and-forward.
///
/// A message stays until the recipient acknowledges it end to end (a `delivered` receipt
/// inside the Noise session), or until it is given up: after ``Limits-swift.struct/lifetime``
/// (24 h) or ``Limits-swift.struct/maxAttempts`` (8) sends. Each peer holds at most
/// ``Limits-swift.struct/perPeer`` (100) messages; a new message beyond that pushes out
/// the oldest, which is reported as undeliverable. Resends back off exponentially, and
/// start again at once when the peer reappears.
///
/// The entries hold the Noise plaintext (the payload sealed when a session exists); the
/// owner keeps the outbox encrypted at rest when it persists it.
public struct PrivateOutbox: Sendable {
    /// The outbox's bounds.
    public struct Limits: Sendable, Hashable {
        /// Messages kept per peer.
        public var perPeer = 100
        /// How long a message is kept, in milliseconds.
        public var lifetime: UInt64 = 24 * 3_600_000
        /// Sends before a message is given up.
        public var maxAttempts = 8
        /// The first resend delay, in milliseconds; doubled after each send.
        public var firstRetry: UInt64 = 2_000
        /// The longest resend delay, in milliseconds.
        public var maxRetry: UInt64 = 600_000

        /// The defaults above.
        public init() {}
    }

    /// One waiting message.
    public struct Entry: Sendable, Hashable, Codable {
        /// The message ID the recipient acknowledges.
        public var id: String
        /// The recipient.
        public var peer: PeerID
        /// The Noise plaintext to send.
        public var payload: [UInt8]
        /// When it was queued (ms since the epoch).
        public var created: UInt64
        /// How many times it was sent.
        public var attempts: Int
        /// When it may be sent next (ms).
        public var nextAttempt: UInt64

        /// Creates an entry.
        public init(id: String, peer: PeerID, payload: [UInt8], created: UInt64, attempts: Int = 0, nextAttempt: UInt64) {
            self.id = id
            self.peer = peer
            self.payload = payload
            self.created = created
            self.attempts = attempts
            self.nextAttempt = nextAttempt
        }
    }

    /// The bounds in force.
    public let limits: Limits
    private var queues: [PeerID: [Entry]] = [:]

    /// An empty outbox.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Every waiting message, per peer in the order queued.
    public var entries: [Entry] { queues.keys.sorted().flatMap { queues[$0]! } }

    /// The number of waiting messages.
    public var count: Int { queues.values.reduce(0) { $0 + $1.count } }

    /// Restores entries (from the owner's sealed file); bounds are applied.
    public init(limits: Limits = Limits(), restoring entries: [Entry]) {
        self.limits = limits
        for entry in entries {
            _ = enqueue(entry)
        }
    }

    /// Queues a message for `peer`, to be sent at once. Returns the entry pushed out when
    /// the peer's queue was full, if any. A message whose ID is already queued is ignored.
    @discardableResult
    public mutating func enqueue(id: String, payload: [UInt8], for peer: PeerID, now: UInt64) -> Entry? {
        enqueue(Entry(id: id, peer: peer, payload: payload, created: now, nextAttempt: now))
    }

    private mutating func enqueue(_ entry: Entry) -> Entry? {
        var queue = queues[entry.peer, default: []]
        guard !queue.contains(where: { $0.id == entry.id }) else { return nil }
        queue.append(entry)
        let dropped = queue.count > limits.perPeer ? queue.removeFirst() : nil
        queues[entry.peer] = queue
        return dropped
    }

    /// The messages due for `peer` (all of them when `peer` is nil) that may be sent now;
    /// each is counted as one attempt and its next attempt scheduled.
    public mutating func due(now: UInt64, for peer: PeerID? = nil) -> [Entry] {
        var due: [Entry] = []
        for key in peer.map({ [$0] }) ?? queues.keys.sorted() {
            guard var queue = queues[key] else { continue }
            for index in queue.indices where queue[index].nextAttempt <= now && queue[index].attempts < limits.maxAttempts {
                queue[index].attempts += 1
                let shift = min(queue[index].attempts - 1, 30)
                queue[index].nextAttempt = now &+ min(limits.firstRetry << UInt64(shift), limits.maxRetry)
                due.append(queue[index])
            }
            queues[key] = queue
        }
        return due
    }

    /// `peer` was seen again: its messages become due at once (attempts are kept).
    public mutating func peerAppeared(_ peer: PeerID, now: UInt64) {
        guard var queue = queues[peer] else { return }
        for index in queue.indices { queue[index].nextAttempt = min(queue[index].nextAttempt, now) }
        queues[peer] = queue
    }

    /// The recipient acknowledged message `id`: it leaves the outbox. Returns whether it was waiting.
    @discardableResult
    public mutating func acknowledged(_ id: String, by peer: PeerID) -> Bool {
        guard var queue = queues[peer], let index = queue.firstIndex(where: { $0.id == id }) else { return false }
        queue.remove(at: index)
        queues[peer] = queue.isEmpty ? nil : queue
        return true
    }

    /// Removes and returns the messages given up: older than the lifetime, or sent
    /// ``Limits-swift.struct/maxAttempts`` times with the last resend delay passed.
    public mutating func expire(now: UInt64) -> [Entry] {
        var expired: [Entry] = []
        for key in queues.keys.sorted() {
            let (gone, kept) = queues[key]!.partitioned { entry in
                now >= entry.created &+ limits.lifetime || (entry.attempts >= limits.maxAttempts && now >= entry.nextAttempt)
            }
            expired += gone
            queues[key] = kept.isEmpty ? nil : kept
        }
        return expired
    }

    /// The earliest time something is due or expires, for the owner's timer.
    public var nextDeadline: UInt64? { nextDeadline(sendableTo: { _ in true }) }

    /// The earliest time something is due or expires, counting resends only to the peers
    /// `sendableTo` accepts (for instance those with a session): messages for the others
    /// wait for an event, not a timer, and only their expiry is due.
    public func nextDeadline(sendableTo: (PeerID) -> Bool) -> UInt64? {
        queues.flatMap { peer, entries in
            let sendable = sendableTo(peer)
            return entries.map { sendable ? Swift.min($0.nextAttempt, $0.created &+ limits.lifetime) : $0.created &+ limits.lifetime }
        }.min()
    }
}

extension Array {
    /// Splits into the elements matching `predicate` and the rest, each in order.
    fileprivate func partitioned(_ predicate: (Element) -> Bool) -> (matching: [Element], rest: [Element]) {
        var matching: [Element] = []
        var rest: [Element] = []
        for element in self {
            if predicate(element) { matching.append(element) } else { rest.append(element) }
        }
        return (matching, rest)
    }
}
