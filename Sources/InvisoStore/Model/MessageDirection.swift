/// Whether a stored message was sent or received by this device (sealed, not queryable).
public enum MessageDirection: String, Sendable, Hashable, Codable {
    /// Written here and sent to the peer.
    case sent
    /// Received from the peer.
    case received
}
