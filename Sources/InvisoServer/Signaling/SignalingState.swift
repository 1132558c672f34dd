import Foundation
import InvisoWire

/// One WebSocket connection, as the signaling state machine names it.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// A number unique within one hub.
    public let raw: UInt64

    /// Creates an id.
    public init(_ raw: UInt64) { self.raw = raw }

    public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.raw < rhs.raw }

    /// `#<raw>`.
    public var description: String { "#\(raw)" }
}

/// What the signaling state machine asks its owner to do.
enum SignalingAction: Sendable, Equatable {
    /// Send a message to a local connection.
    case send(ConnectionID, ServerMessage)
    /// Close a local connection with a WebSocket close code.
    case close(ConnectionID, code: UInt16, reason: String)
    /// Tell the other instances.
    case publish(BusEvent)
}

/// Where a relayed frame goes.
enum RelayRoute: Sendable, Equatable {
    /// To this local connection; `from` is the sender's client id.
    case local(ConnectionID, roomID: String, from: String)
    /// To the member in seat `role` on another instance.
    case remote(roomID: String, role: RoomRole, from: String)
    /// Refused: these actions say why.
    case refused([SignalingAction])
}

/// The limits the state machine enforces.
struct SignalingLimits: Sendable, Equatable {
    /// Messages per second each socket may send (text and binary together).
    var messagesPerSecond: Double = 50
    /// Burst of messages a socket may send at once.
    var messageBurst: Double = 200
    /// Refused messages in a row after which the socket is closed (1008).
    var closeAfterRefused = 1_000
    /// Binary bytes per second each room may relay.
    var roomBytesPerSecond: Double = 1_048_576
    /// Burst of binary bytes a room may relay at once.
    var roomByteBurst: Double = 8_388_608
    /// Join codes one socket may watch at once.
    var watchesPerConnection = 8
    /// The largest WebSocket message (announced; the socket layer enforces it).
    var maxMessageBytes = 64 * 1024

    /// What `connected` announces (``RelayLimits``).
    var announced: RelayLimits {
        RelayLimits(
            messagesPerSecond: messagesPerSecond, messageBurst: messageBurst, roomBytesPerSecond: roomBytesPerSecond,
            roomByteBurst: roomByteBurst, maxMessageBytes: maxMessageBytes)
    }
}

/// The signaling server's room logic as a value-type state machine: inputs are socket
/// events, already-verified store facts and bus events; outputs are ``SignalingAction``s.
/// It does no I/O and reads no clock (times are passed in), so it is tested directly.
///
/// Rules (the Node server's behaviour with the errata fixed): a seat belongs to a device
/// the store names (`client1` → creator, `client2` → joiner); the creator is always the
/// initiator; a device that rejoins replaces its old socket; messages are relayed only to
/// the other member and only when both are present.
struct SignalingState: Sendable {
    struct Seat: Sendable, Equatable {
        var roomID: String
        var role: RoomRole
        var deviceID: String
    }

    struct Connection: Sendable {
        var clientID: String
        var seat: Seat?
        var bucket: TokenBucket
        var refusedInARow = 0
        var lastWarning: Date?
        var watching: [String] = []
    }

    struct Presence: Sendable, Equatable {
        var local: [RoomRole: ConnectionID] = [:]
        var remote: [RoomRole: String] = [:]
        var quota: TokenBucket

        func isPresent(_ role: RoomRole) -> Bool { local[role] != nil || remote[role] != nil }
    }

    let limits: SignalingLimits
    /// Whether another instance may hold the other seat (publish bus events).
    let clustered: Bool
    private(set) var connections: [ConnectionID: Connection] = [:]
    private(set) var rooms: [String: Presence] = [:]
    private var watchers: [String: [ConnectionID]] = [:]
    private(set) var isShuttingDown = false

    init(limits: SignalingLimits, clustered: Bool) {
        self.limits = limits
        self.clustered = clustered
    }

    // MARK: - Connections

    /// A socket opened: greet it (or close it while shutting down).
    mutating func open(_ id: ConnectionID, clientID: String) -> [SignalingAction] {
        if isShuttingDown { return [.close(id, code: 1001, reason: "server shutting down")] }
        connections[id] = Connection(
            clientID: clientID, bucket: TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst))
        return [.send(id, .connected(clientID: clientID, server: ServerMessage.serverName, limits: limits.announced))]
    }

    /// A socket closed: free its seat and tell the other member `peer_disconnected`.
    mutating func close(_ id: ConnectionID) -> [SignalingAction] {
        guard let connection = connections.removeValue(forKey: id) else { return [] }
        for code in connection.watching { removeWatcher(id, code: code) }
        guard let seat = connection.seat else { return [] }
        return vacate(seat, of: id, peerMessage: .peerDisconnected, disconnected: true)
    }

    /// Counts one incoming message against the socket's rate limit. Returns `nil` when
    /// admitted, or the actions for a refusal (an `error` at most once a second; closing
    /// with 1008 after ``SignalingLimits/closeAfterRefused`` refusals in a row).
    mutating func admit(_ id: ConnectionID, now: Date) -> [SignalingAction]? {
        guard var connection = connections[id] else { return [] }
        defer { connections[id] = connection }
        if connection.bucket.take(now: now) {
            connection.refusedInARow = 0
            return nil
        }
        connection.refusedInARow += 1
        if connection.refusedInARow >= limits.closeAfterRefused {
            return [.close(id, code: 1008, reason: "rate limit exceeded")]
        }
        if let last = connection.lastWarning, now.timeIntervalSince(last) < 1 { return [] }
        connection.lastWarning = now
        return [.send(id, .error(Self.rateLimitedText))]
    }

    // MARK: - Rooms

    /// `join_room` for a device the store names in this room with `role`.
    mutating func join(_ id: ConnectionID, roomID: String, deviceID: String, role: RoomRole) -> [SignalingAction] {
        guard var connection = connections[id] else { return [] }
        var actions: [SignalingAction] = []
        if let seat = connection.seat, seat.roomID != roomID || seat.role != role {
            actions += vacate(seat, of: id, peerMessage: .peerLeft, disconnected: false)
            connection.seat = nil
        }
        var presence = rooms[roomID] ?? Presence(quota: newQuota())
        if let old = presence.local[role], old != id {
            actions += evict(old, reason: "replaced by a newer connection")
        }
        presence.local[role] = id
        presence.remote[role] = nil
        connection.seat = Seat(roomID: roomID, role: role, deviceID: deviceID)
        connections[id] = connection
        rooms[roomID] = presence

        let other = role.other
        let ready = presence.isPresent(other)
        actions.append(
            .send(id, .roomJoined(roomID: roomID, userCount: ready ? 2 : 1, isInitiator: role == .creator, ready: ready)))
        if ready {
            actions.append(.send(id, .roomReady(roomID: roomID, isInitiator: role == .creator)))
            if let peer = presence.local[other] {
                actions.append(.send(peer, .roomReady(roomID: roomID, isInitiator: other == .creator)))
            }
        }
        // Published last: the answer (`present`) can trigger our `room_ready` to this
        // socket, which must not overtake its `room_joined`.
        if clustered { actions.append(.publish(.seated(roomID: roomID, role: role))) }
        return actions
    }

    /// `leave_room`: free the seat, `peer_left` to the other member, `left_room` back.
    mutating func leave(_ id: ConnectionID) -> [SignalingAction] {
        guard var connection = connections[id] else { return [] }
        guard let seat = connection.seat else { return [.send(id, .leftRoom(roomID: nil))] }
        connection.seat = nil
        connections[id] = connection
        return vacate(seat, of: id, peerMessage: .peerLeft, disconnected: false) + [
            .send(id, .leftRoom(roomID: seat.roomID))
        ]
    }

    /// Where a relayed message from `id` goes. Binary frames (`bytes` given) also count
    /// against the room's relay quota.
    mutating func route(from id: ConnectionID, binaryBytes: Int? = nil, now: Date) -> RelayRoute {
        guard let connection = connections[id], let seat = connection.seat, var presence = rooms[seat.roomID] else {
            return .refused([.send(id, .error(Self.notInRoomText))])
        }
        let other = seat.role.other
        guard presence.isPresent(other) else { return .refused([.send(id, .error(Self.peerAbsentText))]) }
        if let binaryBytes {
            guard presence.quota.take(Double(binaryBytes), now: now) else {
                rooms[seat.roomID] = presence
                return .refused([.send(id, .error(Self.quotaText))])
            }
            rooms[seat.roomID] = presence
        }
        if let peer = presence.local[other] {
            return .local(peer, roomID: seat.roomID, from: connection.clientID)
        }
        return .remote(roomID: seat.roomID, role: other, from: connection.clientID)
    }

    /// `ping_peer`: without a push provider the server can only confirm a connected peer.
    func pingPeer(_ id: ConnectionID) -> [SignalingAction] {
        guard let seat = connections[id]?.seat, let presence = rooms[seat.roomID] else {
            return [.send(id, .error("Not in a room"))]
        }
        guard presence.isPresent(seat.role.other) else { return [.send(id, .error(Self.pushUnavailableText))] }
        return [.send(id, .pingSent)]
    }

    // MARK: - Join codes

    /// `watch_code` for a code the store says is still pending for this creator.
    mutating func watch(_ id: ConnectionID, joinID: String) -> [SignalingAction] {
        guard var connection = connections[id] else { return [] }
        if connection.watching.contains(joinID) { return [] }
        guard connection.watching.count < limits.watchesPerConnection else {
            return [.send(id, .error("Too many watched codes"))]
        }
        connection.watching.append(joinID)
        connections[id] = connection
        watchers[joinID, default: []].append(id)
        return []
    }

    /// A code was accepted (here or on another instance): push `room_accepted` to its
    /// watchers.
    mutating func codeAccepted(joinID: String, roomID: String) -> [SignalingAction] {
        guard let ids = watchers.removeValue(forKey: joinID) else { return [] }
        var actions: [SignalingAction] = []
        for id in ids {
            connections[id]?.watching.removeAll { $0 == joinID }
            actions.append(.send(id, .roomAccepted(joinID: joinID, roomID: roomID)))
        }
        return actions
    }

    private mutating func removeWatcher(_ id: ConnectionID, code: String) {
        watchers[code]?.removeAll { $0 == id }
        if watchers[code]?.isEmpty == true { watchers[code] = nil }
    }

    // MARK: - Deletion

    /// A room was deleted: its local members get `left_room` and lose their seats.
    mutating func roomDeleted(_ roomID: String) -> [SignalingAction] {
        guard let presence = rooms.removeValue(forKey: roomID) else { return [] }
        var actions: [SignalingAction] = []
        for id in presence.local.values.sorted() {
            connections[id]?.seat = nil
            actions.append(.send(id, .leftRoom(roomID: roomID)))
        }
        return actions
    }

    /// Device IDs were purged: every room a local member of which is one of them is gone.
    mutating func devicesPurged(_ deviceIDs: Set<String>) -> [SignalingAction] {
        let gone = Set(connections.values.compactMap { $0.seat }.filter { deviceIDs.contains($0.deviceID) }.map(\.roomID))
        return gone.sorted().flatMap { roomDeleted($0) }
    }

    /// Graceful shutdown: close every socket with 1001 (going away).
    mutating func shutdown() -> [SignalingAction] {
        isShuttingDown = true
        return connections.keys.sorted().map { .close($0, code: 1001, reason: "server shutting down") }
    }

    // MARK: - Other instances

    /// An event another instance published.
    mutating func received(_ event: BusEvent, from origin: String) -> [SignalingAction] {
        switch event {
        case .seated(let roomID, let role):
            guard var presence = rooms[roomID] else { return [] }
            var actions: [SignalingAction] = []
            if let old = presence.local[role] {
                actions += evict(old, reason: "replaced by a newer connection")
                presence = rooms[roomID] ?? Presence(quota: newQuota())
            }
            guard let peer = presence.local[role.other] else {
                if presence.local.isEmpty { rooms[roomID] = nil } else { rooms[roomID] = presence }
                return actions
            }
            presence.remote[role] = origin
            rooms[roomID] = presence
            actions.append(.send(peer, .roomReady(roomID: roomID, isInitiator: role.other == .creator)))
            actions.append(.publish(.present(roomID: roomID, role: role.other)))
            return actions
        case .present(let roomID, let role):
            guard var presence = rooms[roomID], let peer = presence.local[role.other], presence.remote[role] == nil else {
                return []
            }
            presence.remote[role] = origin
            rooms[roomID] = presence
            return [.send(peer, .roomReady(roomID: roomID, isInitiator: role.other == .creator))]
        case .left(let roomID, let role, let disconnected):
            guard var presence = rooms[roomID], presence.remote[role] == origin else { return [] }
            presence.remote[role] = nil
            rooms[roomID] = presence
            guard let peer = presence.local[role.other] else { return [] }
            return [.send(peer, disconnected ? .peerDisconnected : .peerLeft)]
        case .text, .binary:
            return []  // delivered by the hub through ``localMember(roomID:role:)``
        case .accepted(let joinID, let roomID):
            return codeAccepted(joinID: joinID, roomID: roomID)
        case .roomDeleted(let roomID):
            return roomDeleted(roomID)
        case .purged(let deviceIDs):
            return devicesPurged(Set(deviceIDs))
        }
    }

    /// The local connection in seat `role` of `roomID`, if any.
    func localMember(roomID: String, role: RoomRole) -> ConnectionID? {
        rooms[roomID]?.local[role]
    }

    /// The seat a connection holds.
    func seat(of id: ConnectionID) -> Seat? { connections[id]?.seat }

    // MARK: - Helpers

    /// Frees `seat` (held by `id`) and tells the other member.
    private mutating func vacate(
        _ seat: Seat, of id: ConnectionID, peerMessage: ServerMessage, disconnected: Bool
    ) -> [SignalingAction] {
        guard var presence = rooms[seat.roomID], presence.local[seat.role] == id else { return [] }
        presence.local[seat.role] = nil
        var actions: [SignalingAction] = []
        if let peer = presence.local[seat.role.other] {
            actions.append(.send(peer, peerMessage))
        }
        if clustered { actions.append(.publish(.left(roomID: seat.roomID, role: seat.role, disconnected: disconnected))) }
        rooms[seat.roomID] = presence.local.isEmpty ? nil : presence
        return actions
    }

    /// Takes the seat away from a socket replaced by a newer one and closes it.
    private mutating func evict(_ id: ConnectionID, reason: String) -> [SignalingAction] {
        if let seat = connections[id]?.seat {
            connections[id]?.seat = nil
            if var presence = rooms[seat.roomID], presence.local[seat.role] == id {
                presence.local[seat.role] = nil
                rooms[seat.roomID] = presence
            }
        }
        return [.send(id, .error("Replaced by a newer connection")), .close(id, code: 4000, reason: reason)]
    }

    private func newQuota() -> TokenBucket {
        TokenBucket(rate: limits.roomBytesPerSecond, burst: limits.roomByteBurst)
    }

    /// The Node server's texts for relays outside a ready room.
    static let notInRoomText = "Not in a valid room for WebRTC signaling"
    static let peerAbsentText = "Room must have exactly 2 users for WebRTC"
    static let rateLimitedText = "Rate limit exceeded"
    static let quotaText = "Relay quota exceeded"
    static let pushUnavailableText = "Peer is not connected and this server sends no push notifications"
}
