public import InvisoWire

/// What a ``SignalingClient`` reports, in order, on ``SignalingClient/events``.
public enum SignalingEvent: Sendable, Equatable {
    /// The WebSocket is open and the server greeted it (`connected`); after a reconnect
    /// the active room is rejoined and watched codes are watched again automatically.
    /// `limits` are the server's relay limits, when it announces them.
    case connected(clientID: String, limits: RelayLimits? = nil)
    /// The server seated this device (`room_joined`).
    case joined(roomID: String, userCount: Int, isInitiator: Bool)
    /// Both members are present (`room_ready`); the creator is the initiator.
    case roomReady(roomID: String, isInitiator: Bool)
    /// A watched join code was accepted (`room_accepted`).
    case roomAccepted(joinID: String, roomID: String)
    /// A signaling message the other member sent (`key_exchange`, `webrtc_offer`, …), with
    /// the server's `from` and `roomId` added; unknown message types also arrive here.
    case message(JSONObject)
    /// A binary frame from the other member (the relay path), unchanged.
    case binary([UInt8])
    /// The other member sent `leave_room`.
    case peerLeft
    /// The server took this device out of its room without being asked (`left_room` for
    /// the active room), or refused to seat it again after a reconnect (`Room not found`,
    /// `Not a member of this room`): the room was deleted or its other member purged.
    /// Not rejoined.
    case roomClosed(roomID: String)
    /// The other member's socket closed.
    case peerDisconnected
    /// The server refused something (`error {error}`); the text is one of the server's
    /// fixed messages (`docs/server.md`).
    case serverError(String)
    /// The connection was lost; attempt `attempt` starts after `delay`.
    case reconnecting(attempt: Int, delay: Duration)
    /// The connection ended. After ``SignalingDisconnectReason/closedByUser`` and
    /// ``SignalingDisconnectReason/gaveUp`` the stream finishes; otherwise a
    /// ``reconnecting(attempt:delay:)`` follows.
    case disconnected(SignalingDisconnectReason)
}

/// Why a signaling connection ended.
public enum SignalingDisconnectReason: Sendable, Hashable {
    /// ``SignalingClient/close()`` or ``SignalingClient/leave()`` was called.
    case closedByUser
    /// No pong arrived within the pong timeout after a control-frame ping.
    case pongTimeout
    /// The server sent a close frame with this code (4000: this device joined again
    /// on another socket; 1001: the server is shutting down).
    case serverClosed(code: UInt16)
    /// The connection dropped without a close frame.
    case connectionLost
    /// Connecting (TCP, TLS or the WebSocket upgrade) failed or timed out.
    case connectFailed
    /// ``ReconnectPolicy/maxAttempts`` attempts failed in a row.
    case gaveUp
}

/// Why a ``SignalingClient`` call failed.
public struct SignalingClientError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case notConnected, closed, connectFailed, messageTooLarge
    }

    package let code: Code

    package init(_ code: Code) { self.code = code }

    /// No connection is open right now (it may be reconnecting); nothing was sent.
    public static let notConnected = SignalingClientError(.notConnected)
    /// The client was closed; it cannot be used again.
    public static let closed = SignalingClientError(.closed)
    /// The WebSocket could not be opened (internal: reported as an event).
    static let connectFailed = SignalingClientError(.connectFailed)
    /// The message is larger than the server accepts.
    public static let messageTooLarge = SignalingClientError(.messageTooLarge)

    /// What went wrong.
    public var description: String {
        switch code {
        case .notConnected: "signaling not connected"
        case .closed: "signaling client closed"
        case .connectFailed: "signaling connection failed"
        case .messageTooLarge: "signaling message too large"
        }
    }
}

extension SignalingEvent {
    /// The event's name without its values (diagnostics).
    var kind: String {
        switch self {
        case .connected: "connected"
        case .joined: "joined"
        case .roomReady: "roomReady"
        case .roomAccepted: "roomAccepted"
        case .message: "message"
        case .binary: "binary"
        case .peerLeft: "peerLeft"
        case .roomClosed: "roomClosed"
        case .peerDisconnected: "peerDisconnected"
        case .serverError: "serverError"
        case .reconnecting: "reconnecting"
        case .disconnected: "disconnected"
        }
    }
}
