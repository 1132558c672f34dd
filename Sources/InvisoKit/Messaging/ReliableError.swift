/// Why the message layer refused an input. Nothing changed when one is thrown; none
/// carries payload bytes.
public struct ReliableError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case malformedRecord
        case sequenceTooFarAhead
        case acknowledgesUnsent
        case outboxFull
    }

    package let code: Code

    package init(_ code: Code) { self.code = code }

    /// A record that does not parse (unknown kind, wrong length, sequence number 0).
    public static let malformedRecord = ReliableError(.malformedRecord)
    /// A message whose sequence number is further ahead of the next one expected than
    /// the reorder buffer holds.
    public static let sequenceTooFarAhead = ReliableError(.sequenceTooFarAhead)
    /// An ack for a sequence number this side never sent.
    public static let acknowledgesUnsent = ReliableError(.acknowledgesUnsent)
    /// The outbox holds as many unacknowledged messages as it may.
    public static let outboxFull = ReliableError(.outboxFull)

    /// What went wrong.
    public var description: String {
        switch code {
        case .malformedRecord: "malformed message record"
        case .sequenceTooFarAhead: "message sequence number too far ahead"
        case .acknowledgesUnsent: "acknowledgement of a message never sent"
        case .outboxFull: "too many unacknowledged messages"
        }
    }
}
