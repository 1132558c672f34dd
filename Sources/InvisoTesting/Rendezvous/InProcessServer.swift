import Foundation
public import InvisoKit
public import InvisoTime
import InvisoWire
import Synchronization

/// The Inviso server's rendezvous in memory: its REST API as an ``HTTPTransport`` and its
/// signaling as a ``SignalingConnector``, so `ChatClient`s and `SignalingClient`s run
/// against it with no socket, no port and — on a `ManualClock` — no real time.
///
/// It keeps the server's rules that clients depend on (`docs/server.md`): codes published,
/// accepted once, checked and watched (`room_accepted` pushed, at once when already
/// accepted); only a room's two devices take its seats; the creator is the initiator;
/// `room_ready` when both are present; relayed messages get `from` and `roomId`; binary
/// frames go to the other member; `leave_room` answers `left_room` and tells the peer
/// `peer_left`; a closed connection tells the peer `peer_disconnected`; a deleted room
/// answers `left_room` to its members; control-frame pings get pongs and a close is echoed.
/// Rate limits, quotas and persistence are the real server's business, not this one's.
///
/// A test can also break the network: ``dropConnections()`` ends every connection (as a
/// lost Wi-Fi), ``isReachable`` refuses new connections and REST calls, and
/// ``answersPings`` stops answering control-frame pings (a half-open connection).
public final class InProcessServer: Sendable {
    private let state: Mutex<State>
    private let clock: any InvisoClock

    /// A server whose codes expire on `clock`'s wall clock.
    public init(clock: any InvisoClock = SystemClock()) {
        self.clock = clock
        self.state = Mutex(State())
    }

    // MARK: - Controls

    /// Whether connections and REST calls succeed (`true`).
    public var isReachable: Bool {
        get { state.withLock { $0.isReachable } }
        set { state.withLock { $0.isReachable = newValue } }
    }

    /// Whether control-frame pings are answered (`true`).
    public var answersPings: Bool {
        get { state.withLock { $0.answersPings } }
        set { state.withLock { $0.answersPings = newValue } }
    }

    /// Connections open now.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Connections opened since the server was made.
    public var connectionsOpened: Int { state.withLock { Int($0.nextConnection) } }

    /// Binary frames relayed since the server was made.
    public var binaryFramesRelayed: Int { state.withLock { $0.binaryFramesRelayed } }

    /// What the server received and did, one line each (message types, frame sizes and
    /// connection numbers only), for a failing test to print.
    public var trace: [String] { state.withLock { $0.trace } }

    /// Ends every open connection, as a network loss would: no close frame, and each
    /// room's other member hears `peer_disconnected` if it is still connected.
    public func dropConnections() {
        let ids = state.withLock { Array($0.connections.keys).sorted() }
        for id in ids { disconnect(id) }
    }

    // MARK: - State

    struct Room {
        var joinID: String
        var client1: String
        var client2: String?
        var expires: Date
        /// The connection in each seat: 0 the creator's, 1 the joiner's.
        var seats: [UInt64?] = [nil, nil]

        func seat(of deviceID: String) -> Int? {
            if deviceID == client1 { return 0 }
            if deviceID == client2 { return 1 }
            return nil
        }
    }

    struct Connection {
        var connection: InProcessSignalingConnection
        var seat: (roomID: String, seat: Int)?
    }

    struct State {
        var isReachable = true
        var answersPings = true
        var rooms: [String: Room] = [:]
        var codes: [String: String] = [:]
        var watchers: [String: Set<UInt64>] = [:]
        var connections: [UInt64: Connection] = [:]
        var nextConnection: UInt64 = 0
        var nextRoom: UInt64 = 0
        var binaryFramesRelayed = 0
        var trace: [String] = []

        /// Where a connection's messages to its room's other member go.
        func peer(of id: UInt64) -> InProcessSignalingConnection? {
            guard let seat = connections[id]?.seat, let room = rooms[seat.roomID],
                let other = room.seats[1 - seat.seat]
            else { return nil }
            return connections[other]?.connection
        }
    }

    /// Frames to deliver once the lock is released.
    typealias Deliveries = [(InProcessSignalingConnection, SignalingMachine.Frame)]

    static func text(_ message: ServerMessage) -> SignalingMachine.Frame {
        SignalingMachine.Frame(opcode: .text, payload: message.object.serialized())
    }

    private func deliver(_ deliveries: Deliveries) {
        for (connection, frame) in deliveries { connection.push(frame) }
    }
}

// MARK: - Signaling

extension InProcessServer: SignalingConnector {
    public func connect(_ attempt: SignalingConnectAttempt) async throws -> any SignalingConnection {
        let connection = try state.withLock { state throws(InProcessServerError) -> InProcessSignalingConnection in
            guard state.isReachable else { throw .unreachable }
            state.nextConnection += 1
            let connection = InProcessSignalingConnection(id: state.nextConnection, server: self)
            state.connections[connection.id] = Connection(connection: connection)
            return connection
        }
        connection.push(Self.text(.connected(clientID: "in-process-\(connection.id)", server: "inviso-in-process")))
        return connection
    }

    /// A frame from connection `id`.
    func received(_ frame: SignalingMachine.Frame, from id: UInt64) {
        switch frame.opcode {
        case .ping:
            let connection = state.withLock { $0.answersPings ? $0.connections[id]?.connection : nil }
            connection?.push(.init(opcode: .pong, payload: frame.payload))
        case .close:
            // Echo the close, then end the connection.
            state.withLock { $0.connections[id]?.connection }?.push(frame)
            disconnect(id)
        case .binary:
            let peer = state.withLock { state in
                let peer = state.peer(of: id)
                if peer != nil { state.binaryFramesRelayed += 1 }
                state.trace.append("#\(id) binary \(frame.payload.count) → \(peer.map { "#\($0.id)" } ?? "dropped")")
                return peer
            }
            peer?.push(frame)
        case .text where frame.fin:
            let deliveries: Deliveries
            do {
                let message = try ClientMessage.parse(frame.payload)
                deliveries = handle(message, from: id)
                let sent = deliveries.map { "#\($0.0.id)" }.joined(separator: ",")
                state.withLock { $0.trace.append("#\(id) \(message.object["type"]?.stringValue ?? "?") → [\(sent)]") }
            } catch {
                deliveries = reply(.error(error.message), to: id)
            }
            deliver(deliveries)
        case .text, .continuation, .pong, .other:
            // The clients send neither fragments nor unsolicited pongs.
            break
        }
    }

    private func reply(_ message: ServerMessage, to id: UInt64) -> Deliveries {
        state.withLock { $0.connections[id].map { [($0.connection, Self.text(message))] } ?? [] }
    }

    private func handle(_ message: ClientMessage, from id: UInt64) -> Deliveries {
        let now = clock.wallClock
        return state.withLock { state -> Deliveries in
            guard let me = state.connections[id]?.connection else { return [] }
            switch message {
            case .joinRoom(let roomID, let deviceID):
                guard var room = state.rooms[roomID] else { return [(me, Self.text(.error(ServerMessage.roomNotFoundText)))] }
                guard let seat = room.seat(of: deviceID) else {
                    return [(me, Self.text(.error(ServerMessage.notMemberText)))]
                }
                var deliveries: Deliveries = []
                if let old = room.seats[seat], old != id, let replaced = state.connections[old] {
                    // A device that joins again replaces its old socket.
                    state.connections[old]?.seat = nil
                    deliveries.append((replaced.connection, Self.text(.error("Replaced by a newer connection"))))
                    deliveries.append((replaced.connection, SignalingMachine.Frame(opcode: .close, payload: [0x0F, 0xA0])))
                }
                room.seats[seat] = id
                state.rooms[roomID] = room
                state.connections[id]?.seat = (roomID, seat)
                let present = room.seats.compactMap { $0 }
                deliveries.append(
                    (me, Self.text(.roomJoined(roomID: roomID, userCount: present.count, isInitiator: seat == 0,
                        ready: present.count == 2))))
                if present.count == 2 {
                    // The joining member's room_ready first, as the real server sends it:
                    // these are pushed after the lock is released, and the other member,
                    // once told, may relay a frame at once; that frame must not reach
                    // this member before its own room_ready.
                    deliveries.append((me, Self.text(.roomReady(roomID: roomID, isInitiator: seat == 0))))
                    if let other = room.seats[1 - seat], let connection = state.connections[other]?.connection {
                        deliveries.append((connection, Self.text(.roomReady(roomID: roomID, isInitiator: seat == 1))))
                    }
                }
                return deliveries
            case .leaveRoom:
                guard let seat = state.connections[id]?.seat else { return [(me, Self.text(.leftRoom(roomID: nil)))] }
                let peer = state.peer(of: id)
                state.rooms[seat.roomID]?.seats[seat.seat] = nil
                state.connections[id]?.seat = nil
                return [(me, Self.text(.leftRoom(roomID: seat.roomID)))] + (peer.map { [($0, Self.text(.peerLeft))] } ?? [])
            case .relay(_, let object):
                guard let seat = state.connections[id]?.seat else {
                    return [(me, Self.text(.error("Not in a valid room for WebRTC signaling")))]
                }
                guard let peer = state.peer(of: id) else {
                    return [(me, Self.text(.error("Room must have exactly 2 users for WebRTC")))]
                }
                var forwarded = object
                forwarded["from"] = .string("in-process-\(id)")
                forwarded["roomId"] = .string(seat.roomID)
                return [(peer, Self.text(.relayed(forwarded)))]
            case .ping:
                return [(me, Self.text(.pong))]
            case .pingPeer:
                guard state.peer(of: id) != nil else {
                    return [(me, Self.text(.error("Peer is not connected")))]
                }
                return [(me, Self.text(.pingSent))]
            case .watchCode(let joinID, let client1):
                guard let roomID = state.codes[joinID], let room = state.rooms[roomID], room.client1 == client1,
                    room.expires > now || room.client2 != nil
                else { return [(me, Self.text(.error("Code not found")))] }
                if room.client2 != nil { return [(me, Self.text(.roomAccepted(joinID: joinID, roomID: roomID)))] }
                state.watchers[joinID, default: []].insert(id)
                return []
            }
        }
    }

    /// Ends connection `id`: its stream finishes and its room's other member hears
    /// `peer_disconnected`.
    func disconnect(_ id: UInt64) {
        let (connection, peer) = state.withLock { state -> (InProcessSignalingConnection?, InProcessSignalingConnection?) in
            let peer = state.peer(of: id)
            guard let removed = state.connections.removeValue(forKey: id) else { return (nil, nil) }
            if let seat = removed.seat { state.rooms[seat.roomID]?.seats[seat.seat] = nil }
            for code in state.watchers.keys { state.watchers[code]?.remove(id) }
            return (removed.connection, peer)
        }
        connection?.finish()
        peer?.push(Self.text(.peerDisconnected))
    }
}

// MARK: - REST

extension InProcessServer: HTTPTransport {
    public func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        guard isReachable else { throw InProcessServerError.unreachable }
        let (status, body, deliveries) = respond(request)
        deliver(deliveries)
        return HTTPTransportResponse(status: status, body: body?.serialized() ?? [])
    }

    private func respond(_ request: HTTPTransportRequest) -> (Int, JSONObject?, Deliveries) {
        guard case .object(let json)? = try? JSONValue.parse(request.body) else {
            return (400, RESTError.invalidJSON.body, [])
        }
        do throws(RESTError) {
            switch (request.method, request.path) {
            case ("POST", "/api/rooms"): return try create(CreateRoomRequest(json: json))
            case ("POST", "/api/rooms/accept"): return try accept(AcceptRoomRequest(json: json))
            case ("POST", "/api/rooms/check"): return try check(CheckRoomRequest(json: json))
            case ("DELETE", "/api/rooms"): return try delete(DeleteRoomRequest(json: json))
            case ("POST", "/api/user/purge"): return try purge(PurgeRequest(json: json))
            default: return (404, RESTError.notFound.body, [])
            }
        } catch {
            return (error.status, error.body, [])
        }
    }

    private func create(_ request: CreateRoomRequest) throws(RESTError) -> (Int, JSONObject?, Deliveries) {
        let now = clock.wallClock
        let expires = now.addingTimeInterval(TimeInterval(request.expiresInSeconds))
        let joinID = try state.withLock { state throws(RESTError) -> String in
            state.nextRoom += 1
            let joinID = request.joinid ?? String(100_000 + Int(state.nextRoom % 900_000))
            if let roomID = state.codes[joinID], let room = state.rooms[roomID], room.expires > now || room.client2 != nil {
                throw .codeTaken
            }
            let roomID = String(format: "in-process-room-%012llu", state.nextRoom)
            state.codes[joinID] = roomID
            state.rooms[roomID] = Room(joinID: joinID, client1: request.client1, expires: expires)
            return joinID
        }
        let exp = expires.ISO8601Format()
        return (201, CreateRoomResponse(exp: exp, joinid: joinID).json, [])
    }

    private func accept(_ request: AcceptRoomRequest) throws(RESTError) -> (Int, JSONObject?, Deliveries) {
        let now = clock.wallClock
        return try state.withLock { state throws(RESTError) -> (Int, JSONObject?, Deliveries) in
            guard let roomID = state.codes[request.joinid], var room = state.rooms[roomID] else { throw .notFoundOrExpired }
            guard room.client2 == nil else { throw .alreadyAccepted }
            guard room.expires > now else { throw .notFoundOrExpired }
            room.client2 = request.client2
            state.rooms[roomID] = room
            let watchers = state.watchers.removeValue(forKey: request.joinid) ?? []
            let pushed = watchers.sorted().compactMap { state.connections[$0]?.connection }.map {
                ($0, Self.text(.roomAccepted(joinID: request.joinid, roomID: roomID)))
            }
            return (200, RoomIDResponse(roomid: roomID).json, pushed)
        }
    }

    private func check(_ request: CheckRoomRequest) throws(RESTError) -> (Int, JSONObject?, Deliveries) {
        let now = clock.wallClock
        return try state.withLock { state throws(RESTError) -> (Int, JSONObject?, Deliveries) in
            guard let roomID = state.codes[request.joinid], let room = state.rooms[roomID], room.client1 == request.client1
            else { throw .notFoundOrExpired }
            if room.client2 != nil { return (200, RoomIDResponse(roomid: roomID).json, []) }
            guard room.expires > now else { throw .notFoundOrExpired }
            return (204, nil, [])
        }
    }

    private func delete(_ request: DeleteRoomRequest) throws(RESTError) -> (Int, JSONObject?, Deliveries) {
        try state.withLock { state throws(RESTError) -> (Int, JSONObject?, Deliveries) in
            guard let room = state.rooms[request.roomid] else { return (204, nil, []) }
            guard room.seat(of: request.deviceId) != nil else { throw .notMember }
            return (204, nil, Self.remove(request.roomid, from: &state))
        }
    }

    private func purge(_ request: PurgeRequest) throws(RESTError) -> (Int, JSONObject?, Deliveries) {
        state.withLock { state in
            let devices = Set(request.deviceIds)
            let gone = state.rooms.filter { devices.contains($0.value.client1) || $0.value.client2.map(devices.contains) == true }
            let pending = gone.values.count { $0.client2 == nil }
            let deliveries = gone.keys.sorted().flatMap { Self.remove($0, from: &state) }
            let response = PurgeResponse(
                deviceIdCount: devices.count, roomsDeleted: gone.count - pending, pendingsDeleted: pending)
            return (200, response.json, deliveries)
        }
    }

    /// Deletes a room: its members get `left_room` and lose their seats.
    private static func remove(_ roomID: String, from state: inout State) -> Deliveries {
        guard let room = state.rooms.removeValue(forKey: roomID) else { return [] }
        state.codes[room.joinID] = nil
        state.watchers[room.joinID] = nil
        return room.seats.compactMap { $0 }.compactMap { id in
            state.connections[id]?.seat = nil
            return state.connections[id].map { ($0.connection, text(.leftRoom(roomID: roomID))) }
        }
    }
}

/// One connection to an ``InProcessServer``.
final class InProcessSignalingConnection: SignalingConnection {
    let id: UInt64
    private let server: InProcessServer
    private let inbound: AsyncStream<SignalingMachine.Frame>
    private let continuation: AsyncStream<SignalingMachine.Frame>.Continuation
    private let pong = Atomic<UInt64>(0)
    private let isClosed = Atomic<Bool>(false)

    init(id: UInt64, server: InProcessServer) {
        self.id = id
        self.server = server
        (inbound, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    var latestPong: UInt64 { pong.load(ordering: .relaxed) }

    /// A frame from the server.
    func push(_ frame: SignalingMachine.Frame) {
        if frame.opcode == .pong, frame.payload.count == 8 {
            pong.store(frame.payload.reduce(0) { $0 << 8 | UInt64($1) }, ordering: .relaxed)
        }
        continuation.yield(frame)
    }

    /// The server ended the connection.
    func finish() {
        isClosed.store(true, ordering: .relaxed)
        continuation.finish()
    }

    func serve(opened: @Sendable () async -> Bool, received: @Sendable (SignalingMachine.Frame) async -> Void) async {
        guard await opened() else {
            close()
            return
        }
        for await frame in inbound { await received(frame) }
    }

    func write(_ frame: SignalingMachine.Frame) async throws {
        guard !isClosed.load(ordering: .relaxed) else { throw InProcessServerError.closed }
        server.received(frame, from: id)
    }

    func close() {
        guard !isClosed.exchange(true, ordering: .relaxed) else { return }
        server.disconnect(id)
    }
}

/// Why an ``InProcessServer`` refused: it was made unreachable, or the connection is closed.
public struct InProcessServerError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable { case unreachable, closed }
    private let code: Code

    /// ``InProcessServer/isReachable`` is `false`.
    public static let unreachable = InProcessServerError(code: .unreachable)
    /// The connection was closed.
    public static let closed = InProcessServerError(code: .closed)

    public var description: String {
        switch code {
        case .unreachable: "the in-process server is unreachable"
        case .closed: "the connection is closed"
        }
    }
}
