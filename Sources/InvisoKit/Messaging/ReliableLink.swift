/// The reliable message layer as a value-type state machine, with no I/O and no clock:
/// sequence numbers, cumulative acks, an outbox, retransmission, de-duplication and
/// in-order delivery (`docs/protocol.md`, "Reliable messages").
///
/// - Sending: ``enqueue(_:)`` gives each message the next sequence number (1, 2, …),
///   which is also its id shown to users, and keeps it in the outbox until the peer acks
///   it, whether or not any path is up. ``takeTransmissions()`` hands out the messages
///   not yet sent on the current path, at most ``Configuration/sendWindow`` beyond the
///   peer's ack. After a reconnect or a path change, ``retransmitAll()`` makes every
///   unacknowledged message go out again.
/// - Receiving: ``receive(seq:payload:)`` returns the messages that are now deliverable in
///   order; a duplicate returns nothing (and owes an ack again, since the peer resent it
///   because it missed ours); a message ahead of a gap waits in a reorder buffer of
///   ``Configuration/reorderWindow`` messages; one beyond that is refused.
/// - Acks: ``takeAck()`` returns the cumulative ack owed to the peer (every seq ≤ it was
///   delivered); ``acknowledge(_:)`` drops what the peer acked and returns those ids.
///
/// Every refusal is a thrown ``ReliableError`` that leaves the state unchanged.
public struct ReliableLink: Sendable {
    /// Limits.
    public struct Configuration: Sendable, Hashable {
        /// Messages held out of order while an earlier one is missing (1,024).
        public var reorderWindow: UInt64 = 1_024
        /// Messages in flight beyond the peer's ack (512); keep it at most the peer's
        /// reorder window so that a loss never makes it refuse messages.
        public var sendWindow: UInt64 = 512
        /// Unacknowledged messages the outbox holds before ``enqueue(_:)`` refuses (100,000).
        public var outboxLimit = 100_000
        /// Delivered messages after which an ack is due at once rather than after a short
        /// delay (16).
        public var ackEvery = 16

        /// The defaults.
        public init() {}
    }

    /// A message in the outbox.
    public struct Outgoing: Sendable, Hashable {
        /// Its sequence number, the id the sender shows.
        public var seq: UInt64
        /// The payload bytes.
        public var payload: [UInt8]
    }

    /// A message to hand to the app, in order.
    public struct Delivery: Sendable, Hashable {
        /// The sender's sequence number: the message id.
        public var seq: UInt64
        /// The payload bytes.
        public var payload: [UInt8]
    }

    /// The limits.
    public let configuration: Configuration
    /// The next sequence number ``enqueue(_:)`` gives.
    public private(set) var nextSeq: UInt64 = 1
    /// The highest seq the peer acknowledged (every seq ≤ it).
    public private(set) var peerAck: UInt64 = 0
    /// The highest seq delivered in order (every seq ≤ it was delivered).
    public private(set) var delivered: UInt64 = 0

    /// Unacknowledged messages, oldest first; `outbox[i].seq == peerAck + 1 + i`.
    private var outbox: [Outgoing] = []
    private var outboxStart = 0
    /// Every seq ≤ this was handed out for sending on the current path.
    private var transmitted: UInt64 = 0
    /// Messages received ahead of a gap.
    private var reorderBuffer: [UInt64: [UInt8]] = [:]
    /// The peer is owed an ack; ``deliveredSinceAck`` counts deliveries since the last one.
    private var ackOwed = false
    private var deliveredSinceAck = 0

    /// An empty link.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: - Storage

    /// What a resumed session needs of a link (``ChatSessionSnapshot``).
    public struct Snapshot: Sendable, Hashable {
        /// ``ReliableLink/nextSeq``.
        public var nextSeq: UInt64
        /// ``ReliableLink/peerAck``.
        public var peerAck: UInt64
        /// ``ReliableLink/delivered``.
        public var delivered: UInt64
        /// The unacknowledged payloads, oldest first: seq `peerAck + 1`, `peerAck + 2`, …
        public var unacknowledged: [[UInt8]]
        /// Messages received ahead of a gap, by seq.
        public var reordered: [UInt64: [UInt8]]

        /// A snapshot with these fields.
        public init(
            nextSeq: UInt64, peerAck: UInt64, delivered: UInt64, unacknowledged: [[UInt8]], reordered: [UInt64: [UInt8]]
        ) {
            self.nextSeq = nextSeq
            self.peerAck = peerAck
            self.delivered = delivered
            self.unacknowledged = unacknowledged
            self.reordered = reordered
        }
    }

    /// The link's state for storage.
    public var snapshot: Snapshot {
        Snapshot(
            nextSeq: nextSeq, peerAck: peerAck, delivered: delivered, unacknowledged: unacknowledged.map(\.payload),
            reordered: reorderBuffer)
    }

    /// Restores a link from a ``snapshot``: every unacknowledged message counts as unsent
    /// (the next ``takeTransmissions()`` returns them), and an ack is owed (the peer may
    /// have missed the last one).
    ///
    /// - Throws: ``ReliableError/malformedRecord`` for an inconsistent snapshot (`nextSeq`
    ///   0, `peerAck` not below `nextSeq`, an outbox whose size does not match, more than
    ///   ``Configuration/outboxLimit`` messages, a reordered seq not beyond `delivered + 1`
    ///   or outside the reorder window).
    public init(configuration: Configuration = Configuration(), restoring snapshot: Snapshot) throws(ReliableError) {
        guard snapshot.nextSeq > 0, snapshot.peerAck < snapshot.nextSeq,
            UInt64(snapshot.unacknowledged.count) == snapshot.nextSeq - 1 - snapshot.peerAck,
            snapshot.unacknowledged.count <= configuration.outboxLimit,
            snapshot.reordered.keys.allSatisfy({
                $0 > snapshot.delivered &+ 1 && $0 > snapshot.delivered && $0 - snapshot.delivered <= configuration.reorderWindow
            })
        else { throw .malformedRecord }
        self.configuration = configuration
        nextSeq = snapshot.nextSeq
        peerAck = snapshot.peerAck
        delivered = snapshot.delivered
        outbox = snapshot.unacknowledged.enumerated().map { Outgoing(seq: snapshot.peerAck + 1 + UInt64($0), payload: $1) }
        transmitted = snapshot.peerAck
        reorderBuffer = snapshot.reordered
        ackOwed = snapshot.delivered > 0
    }

    // MARK: - Sending

    /// Puts a message in the outbox and returns its sequence number (its id).
    ///
    /// - Throws: ``ReliableError/outboxFull`` when ``Configuration/outboxLimit`` messages
    ///   are unacknowledged.
    public mutating func enqueue(_ payload: [UInt8]) throws(ReliableError) -> UInt64 {
        try enqueue(contentsOf: CollectionOfOne(payload)).lowerBound
    }

    /// Queues messages in order: all of them, or none (the outbox keeps its limit).
    ///
    /// - Returns: Their sequence numbers; empty for no messages.
    /// - Throws: ``ReliableError/outboxFull`` when the outbox cannot take them all.
    public mutating func enqueue(contentsOf payloads: some Collection<[UInt8]>) throws(ReliableError) -> Range<UInt64> {
        guard payloads.count <= room else { throw .outboxFull }
        let first = nextSeq
        for payload in payloads {
            outbox.append(Outgoing(seq: nextSeq, payload: payload))
            nextSeq += 1
        }
        return first..<nextSeq
    }

    /// How many messages wait for the peer's ack.
    public var unacknowledgedCount: Int { outbox.count - outboxStart }

    /// The payload of unacknowledged message `seq`, or `nil` when it is not in the outbox.
    public func unacknowledgedPayload(_ seq: UInt64) -> [UInt8]? {
        guard seq > peerAck, seq < nextSeq else { return nil }
        let index = outboxStart + Int(seq - peerAck - 1)
        return index < outbox.count ? outbox[index].payload : nil
    }

    /// How many more messages ``enqueue(contentsOf:)`` takes before it refuses.
    public var room: Int { max(0, configuration.outboxLimit - unacknowledgedCount) }

    /// The unacknowledged messages, oldest first.
    public var unacknowledged: ArraySlice<Outgoing> { outbox[outboxStart...] }

    /// The messages to send now: those not yet sent on the current path, within the send
    /// window. Marks them sent.
    public mutating func takeTransmissions() -> [Outgoing] {
        let limit = min(nextSeq - 1, peerAck + configuration.sendWindow)
        guard transmitted < limit else { return [] }
        let first = max(transmitted, peerAck) + 1
        let start = outboxStart + Int(first - peerAck - 1)
        let end = outboxStart + Int(limit - peerAck)
        transmitted = limit
        return Array(outbox[start..<end])
    }

    /// Whether messages wait to be sent (possibly held back by the send window).
    public var hasUntransmitted: Bool { transmitted < nextSeq - 1 }

    /// Marks every unacknowledged message unsent, after a reconnect, a path change or a
    /// retransmission timeout: the next ``takeTransmissions()`` returns them again.
    public mutating func retransmitAll() {
        transmitted = peerAck
    }

    /// Takes a cumulative ack from the peer.
    ///
    /// - Returns: The ids newly acknowledged (empty for an old or repeated ack).
    /// - Throws: ``ReliableError/acknowledgesUnsent`` when it acks a seq never enqueued.
    public mutating func acknowledge(_ ack: UInt64) throws(ReliableError) -> ClosedRange<UInt64>? {
        guard ack < nextSeq else { throw .acknowledgesUnsent }
        guard ack > peerAck else { return nil }
        let newly = (peerAck + 1)...ack
        outboxStart += Int(ack - peerAck)
        peerAck = ack
        transmitted = max(transmitted, ack)
        if outboxStart > 256, outboxStart * 2 > outbox.count {
            outbox.removeFirst(outboxStart)
            outboxStart = 0
        }
        return newly
    }

    // MARK: - Receiving

    /// Takes a message from the peer.
    ///
    /// - Returns: The messages now deliverable, in order: none for a duplicate or a
    ///   message ahead of a gap, possibly several when it fills one.
    /// - Throws: ``ReliableError/malformedRecord`` for seq 0,
    ///   ``ReliableError/sequenceTooFarAhead`` beyond the reorder window.
    public mutating func receive(seq: UInt64, payload: [UInt8]) throws(ReliableError) -> [Delivery] {
        guard seq > 0 else { throw .malformedRecord }
        guard seq <= delivered || seq - delivered <= configuration.reorderWindow else { throw .sequenceTooFarAhead }
        ackOwed = true
        guard seq > delivered, reorderBuffer[seq] == nil else { return [] }
        guard seq == delivered + 1 else {
            reorderBuffer[seq] = payload
            return []
        }
        var deliveries = [Delivery(seq: seq, payload: payload)]
        delivered = seq
        while let next = reorderBuffer.removeValue(forKey: delivered + 1) {
            delivered += 1
            deliveries.append(Delivery(seq: delivered, payload: next))
        }
        deliveredSinceAck += deliveries.count
        return deliveries
    }

    /// Whether the peer is owed an ack.
    public var isAckOwed: Bool { ackOwed }

    /// Whether enough was delivered since the last ack that one should go out now
    /// (``Configuration/ackEvery``); otherwise a driver sends an owed ack after a short
    /// delay, so that a burst is acked once.
    public var isAckDue: Bool { ackOwed && deliveredSinceAck >= configuration.ackEvery }

    /// The cumulative ack to send, if one is owed; clears the debt.
    public mutating func takeAck() -> UInt64? {
        guard ackOwed else { return nil }
        ackOwed = false
        deliveredSinceAck = 0
        return delivered
    }

    /// How many messages wait in the reorder buffer.
    public var bufferedCount: Int { reorderBuffer.count }

    /// The counters, for a diagnostic line (no payload): next seq, the peer's ack, what was
    /// handed out on the current path, what was delivered, the reorder buffer, an owed ack.
    public var diagnostics: String {
        "next=\(nextSeq) peerAck=\(peerAck) transmitted=\(transmitted) delivered=\(delivered) "
            + "buffered=\(reorderBuffer.count) ackOwed=\(ackOwed)"
    }
}
