public import Foundation

/// A chat message as the store keeps it.
///
/// Plaintext columns: ``id``, ``sessionID``, ``createdAt``, ``expiresAt`` and
/// ``isDelivered``. The direction, kind and body are sealed in one value bound to the row.
/// `description` and reflection leave the sealed fields out.
public struct StoredMessage: Sendable, Hashable {
    /// The message's ID, unique within its session (plaintext).
    public var id: String
    /// The session it belongs to (plaintext).
    public var sessionID: String
    /// Whether it was sent or received.
    public var direction: MessageDirection
    /// The payload kind, as the protocol names it (`"text"`, `"location"`, `"voice"`, …).
    public var kind: String
    /// The payload: UTF-8 text for `"text"`, the protocol's bytes otherwise.
    public var body: Data
    /// When it was stored (plaintext).
    public var createdAt: Date
    /// When the store deletes it: `createdAt` plus the session's lifetime, or sooner if the
    /// lifetime was shortened later (plaintext).
    public var expiresAt: Date
    /// Whether the peer acknowledged it (plaintext).
    public var isDelivered: Bool

    /// Creates a message value (the store makes them in
    /// ``InvisoStore/appendMessage(id:sessionID:direction:kind:body:at:)``; this is for
    /// previews and tests).
    ///
    /// - Parameters:
    ///   - id: The message's ID within its session.
    ///   - sessionID: Its session.
    ///   - direction: Sent or received.
    ///   - kind: The payload kind.
    ///   - body: The payload.
    ///   - createdAt: When it was stored.
    ///   - expiresAt: When it expires.
    ///   - isDelivered: Whether the peer acknowledged it.
    public init(
        id: String, sessionID: String, direction: MessageDirection, kind: String, body: Data,
        createdAt: Date, expiresAt: Date, isDelivered: Bool
    ) {
        self.id = id
        self.sessionID = sessionID
        self.direction = direction
        self.kind = kind
        self.body = body
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.isDelivered = isDelivered
    }

    /// The body as text, when ``kind`` is `"text"` and the body is valid UTF-8.
    public var text: String? {
        kind == "text" ? String(bytes: body, encoding: .utf8) : nil
    }
}

// MARK: - Sealed fields

extension StoredMessage {
    /// The fields sealed in `messages.sealed`.
    struct Sealed: Codable {
        var direction: MessageDirection
        var kind: String
        var body: Data
    }
}

// MARK: - Redacted descriptions

extension StoredMessage: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `StoredMessage(id in session)`: never the body.
    public var description: String { "StoredMessage(\(id) in \(sessionID))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror of the plaintext columns only.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["id": id, "sessionID": sessionID, "createdAt": createdAt, "expiresAt": expiresAt, "isDelivered": isDelivered],
            displayStyle: .struct
        )
    }
}
