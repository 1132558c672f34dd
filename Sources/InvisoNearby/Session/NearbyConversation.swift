public import InvisoKit

/// One person's conversation, across connections, as a value-type machine: the session
/// engine's ``ReliableLink`` (numbering, acks, order, de-duplication, the outbox that
/// waits while the peer is away and goes out again when it is back) carrying
/// ``NearbyPayload``s, and the lifetime both sides agreed on.
///
/// ```
///   away ──connected()──▶ here: outbox (unacknowledged) resent, then new messages
///    ▲                        │
///    └────disconnected()──────┘        enqueue() works in both states
/// ```
///
/// Lifetimes: ``proposeLifetime(_:)`` sends a proposal; the peer's user answers with
/// ``answerLifetime(accept:)`` (or proposes the same value, which counts as yes). The
/// lifetime changes on both sides only when the answer is yes.
public struct NearbyConversation: Sendable {
    /// What receiving produced.
    public struct Received: Sendable, Equatable {
        /// Payloads now deliverable, in order, with their sequence numbers.
        public var deliveries: [(seq: UInt64, payload: NearbyPayload)] = []
        /// Our messages the peer has now acknowledged.
        public var delivered: ClosedRange<UInt64>?
        /// The lifetime changed (agreed).
        public var lifetimeAgreed: NearbyLifetime?

        public static func == (lhs: Received, rhs: Received) -> Bool {
            lhs.deliveries.map(\.seq) == rhs.deliveries.map(\.seq) && lhs.deliveries.map(\.payload) == rhs.deliveries.map(\.payload)
                && lhs.delivered == rhs.delivered && lhs.lifetimeAgreed == rhs.lifetimeAgreed
        }
    }

    private var link: ReliableLink
    /// The agreed lifetime of new messages.
    public private(set) var lifetime: NearbyLifetime
    /// Our proposal awaiting the peer's answer.
    public private(set) var ourProposal: NearbyLifetime?
    /// The peer's proposal awaiting our answer.
    public private(set) var theirProposal: NearbyLifetime?
    /// Whether a connection is open.
    public private(set) var isConnected = false

    /// A new conversation (or one restored from a snapshot).
    public init(lifetime: NearbyLifetime = .never, link: ReliableLink = ReliableLink()) {
        self.lifetime = lifetime
        self.link = link
    }

    /// The link's state, to store.
    public var linkSnapshot: ReliableLink.Snapshot { link.snapshot }
    /// Messages the peer has not acknowledged yet.
    public var unacknowledgedCount: Int { link.unacknowledgedCount }

    /// A connection opened: every unacknowledged message goes out again, and the ack we owe.
    public mutating func connected() -> [NearbyRecord] {
        isConnected = true
        link.retransmitAll()
        return ackRecord() + transmissions()
    }

    /// The connection ended; new messages wait in the outbox.
    public mutating func disconnected() {
        isConnected = false
    }

    /// Queues a payload; returns its sequence number and the records to send now (none
    /// while the peer is away).
    ///
    /// - Throws: ``ReliableError`` when the outbox is full.
    public mutating func enqueue(_ payload: NearbyPayload) throws(ReliableError) -> (seq: UInt64, records: [NearbyRecord]) {
        let seq = try link.enqueue(payload.encoded())
        return (seq, isConnected ? transmissions() : [])
    }

    /// Proposes a lifetime for new messages.
    public mutating func proposeLifetime(_ proposed: NearbyLifetime) throws(ReliableError) -> [NearbyRecord] {
        if theirProposal == proposed { return try answerLifetime(accept: true) }
        ourProposal = proposed
        return try enqueue(.lifetimeProposal(proposed)).records
    }

    /// Answers the peer's pending proposal.
    public mutating func answerLifetime(accept: Bool) throws(ReliableError) -> [NearbyRecord] {
        guard let proposal = theirProposal else { return [] }
        let records = try enqueue(.lifetimeAnswer(proposal, accepted: accept)).records
        theirProposal = nil
        if accept { lifetime = proposal }
        return records
    }

    /// A record from the open connection.
    ///
    /// - Throws: ``ReliableError`` or ``NearbyError`` for a record the link refuses or a
    ///   payload that does not parse; nothing changes then (the caller closes the
    ///   connection).
    public mutating func receive(_ record: NearbyRecord) throws -> (Received, replies: [NearbyRecord]) {
        var received = Received()
        switch record {
        case .ack(let ack):
            received.delivered = try link.acknowledge(ack)
            return (received, transmissions())
        case .data(let seq, let bytes):
            var copy = link
            let deliveries = try copy.receive(seq: seq, payload: bytes)
            var parsed: [(UInt64, NearbyPayload)] = []
            for delivery in deliveries { parsed.append((delivery.seq, try NearbyPayload(decoding: delivery.payload))) }
            link = copy
            for (seq, payload) in parsed {
                switch payload {
                case .lifetimeProposal(let proposed):
                    if ourProposal == proposed {
                        // Both asked for the same: agreed.
                        ourProposal = nil
                        lifetime = proposed
                        received.lifetimeAgreed = proposed
                    } else {
                        theirProposal = proposed
                    }
                case .lifetimeAnswer(let answered, let accepted):
                    if ourProposal == answered {
                        ourProposal = nil
                        if accepted {
                            lifetime = answered
                            received.lifetimeAgreed = answered
                        }
                    }
                default: break
                }
                received.deliveries.append((seq, payload))
            }
            return (received, [])
        default:
            return (received, [])
        }
    }

    /// The ack owed to the peer, as a record (empty when none is owed).
    public mutating func ackRecord() -> [NearbyRecord] {
        link.takeAck().map { [.ack($0)] } ?? []
    }

    /// Whether enough was delivered that the ack should go at once.
    public var isAckDue: Bool { link.isAckDue }
    /// Whether an ack is owed.
    public var isAckOwed: Bool { link.isAckOwed }

    private mutating func transmissions() -> [NearbyRecord] {
        link.takeTransmissions().map { .data(seq: $0.seq, payload: $0.payload) }
    }
}
