public import Foundation

/// A chat session as the store keeps it.
///
/// Plaintext columns: ``id``, ``createdAt``, ``state`` and ``lifetime``. Everything else
/// (name, server, invite, room, device, protocol version, peer's name) is sealed in one
/// value bound to the session's row. Session IDs are stored in plaintext, so make them
/// random (a UUID), never a name or the room ID.
///
/// `description` and reflection show only the plaintext columns: the invite code holds the
/// pairing secret and must not reach a log.
public struct StoredSession: Sendable, Hashable {
    /// The session's local ID (plaintext; random).
    public var id: String
    /// When the session was created (plaintext).
    public var createdAt: Date
    /// Where the session is in its life (plaintext).
    public var state: SessionState
    /// How long its messages are kept (plaintext).
    public var lifetime: MessageLifetime
    /// The name the user gave the session.
    public var name: String
    /// The rendezvous server's URL.
    public var serverURL: String
    /// The invite or join code (holds the pairing secret for protocol v2).
    public var joinCode: String?
    /// The server's room ID once paired.
    public var roomID: String?
    /// This device's ID for the session on the server.
    public var deviceID: String?
    /// The channel's protocol version (1 or 2).
    public var protocolVersion: Int
    /// The peer's display name, if it sent one.
    public var peerDisplayName: String?

    /// Whether the session keeps no messages (its lifetime is ``MessageLifetime/ephemeral``).
    public var isEphemeral: Bool { lifetime == .ephemeral }

    /// Creates a session record.
    ///
    /// - Parameters:
    ///   - id: A random local ID (stored in plaintext).
    ///   - createdAt: The creation time (whole milliseconds are kept).
    ///   - state: The session's state.
    ///   - lifetime: How long messages are kept.
    ///   - name: The user's name for the session.
    ///   - serverURL: The rendezvous server.
    ///   - joinCode: The invite or join code.
    ///   - roomID: The server's room ID.
    ///   - deviceID: This device's ID on the server.
    ///   - protocolVersion: The channel's protocol version.
    ///   - peerDisplayName: The peer's display name.
    public init(
        id: String, createdAt: Date, state: SessionState = .pending, lifetime: MessageLifetime,
        name: String, serverURL: String, joinCode: String? = nil, roomID: String? = nil,
        deviceID: String? = nil, protocolVersion: Int = 2, peerDisplayName: String? = nil
    ) {
        self.id = id
        self.createdAt = createdAt
        self.state = state
        self.lifetime = lifetime
        self.name = name
        self.serverURL = serverURL
        self.joinCode = joinCode
        self.roomID = roomID
        self.deviceID = deviceID
        self.protocolVersion = protocolVersion
        self.peerDisplayName = peerDisplayName
    }
}

// MARK: - Sealed fields

extension StoredSession {
    /// The fields sealed in `sessions.sealed`.
    struct Sealed: Codable {
        var name: String
        var serverURL: String
        var joinCode: String?
        var roomID: String?
        var deviceID: String?
        var protocolVersion: Int
        var peerDisplayName: String?
    }

    var sealedFields: Sealed {
        Sealed(
            name: name, serverURL: serverURL, joinCode: joinCode, roomID: roomID, deviceID: deviceID,
            protocolVersion: protocolVersion, peerDisplayName: peerDisplayName
        )
    }

    init(id: String, createdAt: Date, state: SessionState, lifetime: MessageLifetime, sealed: Sealed) {
        self.init(
            id: id, createdAt: createdAt, state: state, lifetime: lifetime, name: sealed.name,
            serverURL: sealed.serverURL, joinCode: sealed.joinCode, roomID: sealed.roomID,
            deviceID: sealed.deviceID, protocolVersion: sealed.protocolVersion,
            peerDisplayName: sealed.peerDisplayName
        )
    }
}

// MARK: - Redacted descriptions

extension StoredSession: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `StoredSession(id, state, lifetime)`: the plaintext columns only.
    public var description: String { "StoredSession(\(id), \(state.rawValue), \(lifetime.rawValue))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror of the plaintext columns only.
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "createdAt": createdAt, "state": state, "lifetime": lifetime], displayStyle: .struct)
    }
}
