extension ChatClient {
    /// How many of our messages have not left for good yet: (v2) those the peer has not
    /// acknowledged, (v1) those sealed but not yet handed to a path. Zero means a `leave()`
    /// now loses nothing we could still deliver.
    public var undeliveredCount: Int { link.unacknowledgedCount + v1Unsent.count }
}
