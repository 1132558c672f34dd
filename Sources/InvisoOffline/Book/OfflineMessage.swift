/// One message in the history: sent or received, with a contact.
public struct OfflineMessage: Sendable, Hashable {
    /// Sent or received.
    public enum Direction: String, Sendable, Hashable, Codable {
        /// We sealed it.
        case sent
        /// We opened it.
        case received
    }

    /// Derived from the ciphertext (its MAC, or a hash of a pre-key message), in hex: the
    /// storage key, the same on the sender's and the receiver's side.
    public let id: String
    /// The contact's local id.
    public let contactID: String
    /// Sent or received.
    public let direction: Direction
    /// A message, or one that came with the sender's rotated keys.
    public let kind: OfflineEnvelope.Kind
    /// The text.
    public let text: String
    /// When the sender sealed it (the envelope's timestamp), milliseconds since 1970.
    public let sentAt: Int64
    /// When it was stored here, milliseconds since 1970.
    public let storedAt: Int64
    /// When it is deleted (the contact's lifetime after ``storedAt``), or `nil` for never.
    public let expiresAt: Int64?

    /// A message from its parts.
    public init(
        id: String, contactID: String, direction: Direction, kind: OfflineEnvelope.Kind, text: String, sentAt: Int64,
        storedAt: Int64, expiresAt: Int64?
    ) {
        self.id = id
        self.contactID = contactID
        self.direction = direction
        self.kind = kind
        self.text = text
        self.sentAt = sentAt
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }
}

// MARK: - CustomStringConvertible

extension OfflineMessage: CustomStringConvertible {
    /// Id, direction and time; never the text.
    public var description: String { "OfflineMessage(\(id), \(direction), \(sentAt))" }
}
