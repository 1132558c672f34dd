public import InvisoTime
public import InvisoWire

/// The signaling socket's logic as a value-type state machine: connecting with a timeout,
/// the server's greeting and the resubscription that follows it, control-frame pings and
/// the pong deadline, message reassembly from fragments, the close handshake, and the
/// reconnect backoff. No I/O, no clock, no randomness but the generator it was given;
/// ``SignalingClient`` drives it over a NIO WebSocket (`docs/client.md`, "Signaling").
///
/// ```
///          start                 opened             `connected` greeting
///   idle ────────▶ connecting ───────────▶ open ─────────────────────▶ greeted ◀─┐
///                   │ ▲  connect timer          │                         │ ping   │ pong
///                   │ │  fires / fails          │                         ▼        │
///                   │ │                         │                   awaiting pong ─┘
///                   ▼ │ backoff timer           │ ended · close frame  │ pong timer
///                backing off ◀──────────────────┴──────────────────────┘ fires
///                   │ attempts exhausted: gaveUp
///                   ▼
///   close()/leave() from anywhere ───────────────────────────────▶ closed (finished)
/// ```
///
/// Each connection has a number (``Action/connect(_:)``); inputs about an older connection
/// are ignored. Pings carry an 8-byte counter and go out every ping interval; only the pong
/// that echoes the latest one counts, and it must come within the pong timeout (which may
/// be longer than the interval: no new ping is sent while one is unanswered). A server close frame is answered with a 1000 close frame (RFC 6455 §5.5.1).
public struct SignalingMachine: Sendable {
    /// Timing, limits and the reconnect schedule.
    public struct Configuration: Sendable {
        /// Time between control-frame pings (25 s).
        public var pingInterval: Duration = .seconds(25)
        /// How long a ping's pong may take (10 s; may be longer than the interval).
        public var pongTimeout: Duration = .seconds(10)
        /// How long opening a connection may take (10 s).
        public var connectTimeout: Duration = .seconds(10)
        /// When to reconnect after a loss.
        public var reconnect = ReconnectPolicy()
        /// The largest message received, assembled from fragments (64 KiB).
        public var maxMessageBytes = 64 * 1024
        /// How long ``SignalingMachine/leave(at:)`` waits for the server's `left_room`
        /// before closing anyway (5 s).
        public var leaveTimeout: Duration = .seconds(5)

        /// The defaults.
        public init() {}
    }

    /// A WebSocket frame as the machine sees it (the driver converts NIO's).
    public struct Frame: Sendable, Equatable {
        /// The frame kinds the machine tells apart (`other`: reserved opcodes, ignored).
        public enum Opcode: Sendable, Equatable {
            case text, binary, continuation, ping, pong, close, other
        }

        /// The kind.
        public var opcode: Opcode
        /// Whether this is a message's last fragment.
        public var fin: Bool
        /// The payload, unmasked.
        public var payload: [UInt8]

        /// A frame.
        public init(opcode: Opcode, fin: Bool = true, payload: [UInt8]) {
            self.opcode = opcode
            self.fin = fin
            self.payload = payload
        }
    }

    /// The machine's timers.
    public enum Timer: Hashable, Sendable, CaseIterable {
        /// The connection must be open by then.
        case connect
        /// Time to send the next ping.
        case ping
        /// The pong to the last ping must have come by then.
        case pong
        /// Time to try again after a loss.
        case backoff
        /// Leaving: the server's `left_room` must have come by then.
        case leave
    }

    /// What the driver must do, in order.
    public enum Action: Sendable, Equatable {
        /// Open a WebSocket; report ``opened(_:)`` or ``ended(_:)`` with this number.
        case connect(UInt64)
        /// Abandon the connect in progress or close the open connection.
        case closeConnection
        /// Send a text message on the open connection.
        case send(ClientMessage)
        /// Send a ping with this payload.
        case sendPing([UInt8])
        /// Answer a ping with its payload.
        case sendPong([UInt8])
        /// Send a close frame with this code.
        case sendClose(code: UInt16)
        /// Report an event.
        case emit(SignalingEvent)
        /// Wake the machine at an instant (replacing an armed timer of the same kind).
        case arm(Timer, at: ClockInstant)
        /// Forget an armed timer.
        case cancel(Timer)
        /// The client is done: finish the events.
        case finish
    }

    /// Where the connection is.
    public enum Phase: Sendable, Equatable {
        /// Not started.
        case idle
        /// A connection is being opened.
        case connecting
        /// The WebSocket is open; `greeted` once the server said `connected`.
        case open(greeted: Bool)
        /// `leave_room` is sent; waiting for the server's `left_room`, which says that it
        /// handled everything sent before (a REST call made after the leave cannot overtake
        /// the socket's last messages then).
        case leaving
        /// Waiting to reconnect.
        case backingOff
        /// Closed for good (``close()``, ``leave(at:)`` or gave up).
        case closed
    }

    /// Timing and limits.
    public let configuration: Configuration
    /// Where the connection is.
    public private(set) var phase = Phase.idle
    /// The current connection's number.
    public private(set) var connection: UInt64 = 0
    private var attempt = 0
    private var random: AnyGenerator
    /// The room to sit in (rejoined after every greeting) until ``leave(at:)``.
    public private(set) var activeRoom: (roomID: String, deviceID: String)?
    /// Join codes watched: code → creator's device ID.
    public private(set) var watched: [String: String] = [:]
    private var pingCounter: UInt64 = 0
    private var awaitingPong: UInt64?
    private var fragments: [UInt8] = []
    private var fragmentOpcode: Frame.Opcode?

    /// A machine that has not connected yet; `random` draws the reconnect jitter.
    public init(configuration: Configuration, random: some RandomNumberGenerator & Sendable) {
        self.configuration = configuration
        self.random = AnyGenerator(generator: random)
    }

    /// Whether a connection is open and greeted (messages can be sent).
    public var isConnected: Bool { phase == .open(greeted: true) }

    // MARK: Inputs

    /// Starts the first connection.
    public mutating func start(at now: ClockInstant) -> [Action] {
        guard phase == .idle else { return [] }
        return connect(at: now)
    }

    /// The WebSocket of connection `id` is open.
    public mutating func opened(_ id: UInt64, at now: ClockInstant) -> [Action] {
        guard id == connection, phase == .connecting else { return [] }
        phase = .open(greeted: false)
        awaitingPong = nil
        fragments = []
        fragmentOpcode = nil
        return [.cancel(.connect), .arm(.ping, at: now.advanced(by: configuration.pingInterval))]
    }

    /// Connection `id` failed to open, or ended without a close frame.
    public mutating func ended(_ id: UInt64, at now: ClockInstant) -> [Action] {
        guard id == connection else { return [] }
        switch phase {
        case .connecting: return lost(.connectFailed, at: now)
        case .open: return lost(.connectionLost, at: now)
        case .leaving: return finishClosing()
        default: return []
        }
    }

    /// A frame on connection `id`.
    public mutating func received(_ frame: Frame, on id: UInt64, at now: ClockInstant) -> [Action] {
        guard id == connection, phase == .leaving || phase == .open(greeted: true) || phase == .open(greeted: false)
        else { return [] }
        switch frame.opcode {
        case .ping:
            return [.sendPong(frame.payload)]
        case .pong:
            if frame.payload.count == 8, Self.integer(frame.payload) == awaitingPong { awaitingPong = nil }
            return []
        case .close:
            let code = frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : 1005
            return [.sendClose(code: 1000), .closeConnection] + lost(.serverClosed(code: code), at: now)
        case .text, .binary:
            guard frame.payload.count <= configuration.maxMessageBytes else {
                return [.closeConnection] + lost(.connectionLost, at: now)
            }
            fragments = frame.payload
            fragmentOpcode = frame.opcode
            return frame.fin ? deliver() : []
        case .continuation:
            guard fragmentOpcode != nil, fragments.count + frame.payload.count <= configuration.maxMessageBytes else {
                return [.closeConnection] + lost(.connectionLost, at: now)
            }
            fragments += frame.payload
            return frame.fin ? deliver() : []
        case .other:
            return []
        }
    }

    /// A timer fired.
    public mutating func timerFired(_ timer: Timer, at now: ClockInstant) -> [Action] {
        switch (timer, phase) {
        case (.connect, .connecting):
            return [.closeConnection] + lost(.connectFailed, at: now)
        case (.ping, .open):
            // Pings go out every interval; while one is unanswered no other is sent, and its
            // pong deadline stands on its own (it may be longer than the interval).
            var actions: [Action] = []
            if awaitingPong == nil {
                pingCounter &+= 1
                awaitingPong = pingCounter
                actions += [.sendPing(Self.bytes(pingCounter)), .arm(.pong, at: now.advanced(by: configuration.pongTimeout))]
            }
            return actions + [.arm(.ping, at: now.advanced(by: configuration.pingInterval))]
        case (.pong, .open):
            guard awaitingPong == nil else {
                return [.closeConnection] + lost(.pongTimeout, at: now)
            }
            return []
        case (.backoff, .backingOff):
            return connect(at: now)
        case (.leave, .leaving):
            return close()
        default:
            return []
        }
    }

    // MARK: Requests

    /// Sits in `roomID` now (when greeted) and after every reconnect until ``leave(at:)``.
    public mutating func join(roomID: String, deviceID: String) -> [Action] {
        guard phase != .closed else { return [] }
        activeRoom = (roomID, deviceID)
        return isConnected ? [.send(.joinRoom(roomID: roomID, deviceID: deviceID))] : []
    }

    /// Watches a join code now (when greeted) and after every reconnect until it is accepted.
    public mutating func watch(joinID: String, deviceID: String) -> [Action] {
        guard phase != .closed else { return [] }
        watched[joinID] = deviceID
        return isConnected ? [.send(.watchCode(joinID: joinID, client1: deviceID))] : []
    }

    /// Leaves the room (`leave_room` when connected), forgets the watched codes, and closes.
    ///
    /// With a room and an open connection the machine sends `leave_room` and waits for the
    /// server's `left_room` (at most ``Configuration/leaveTimeout``) before it closes, so
    /// that whatever was sent before — a pairing's abort frame — is handled first.
    public mutating func leave(at now: ClockInstant) -> [Action] {
        guard phase != .closed, phase != .leaving else { return [] }
        let inRoom = activeRoom != nil
        activeRoom = nil
        watched.removeAll()
        guard inRoom, case .open = phase else { return close() }
        phase = .leaving
        return [
            .send(.leaveRoom), .cancel(.ping), .cancel(.pong),
            .arm(.leave, at: now.advanced(by: configuration.leaveTimeout)),
        ]
    }

    /// Closes for good: a 1000 close frame when open; no reconnect follows.
    public mutating func close() -> [Action] {
        guard phase != .closed else { return [] }
        var actions: [Action] = Timer.allCases.map { .cancel($0) }
        switch phase {
        case .open, .leaving: actions += [.sendClose(code: 1000), .closeConnection]
        case .connecting: actions.append(.closeConnection)
        default: break
        }
        return actions + finishClosing()
    }

    private mutating func finishClosing() -> [Action] {
        phase = .closed
        return [.emit(.disconnected(.closedByUser)), .finish]
    }

    // MARK: Internals

    private mutating func connect(at now: ClockInstant) -> [Action] {
        connection &+= 1
        phase = .connecting
        return [.connect(connection), .arm(.connect, at: now.advanced(by: configuration.connectTimeout))]
    }

    /// The connection is gone: report it, then back off or give up.
    private mutating func lost(_ reason: SignalingDisconnectReason, at now: ClockInstant) -> [Action] {
        // Leaving: the connection ending is the end; no reconnect.
        if phase == .leaving { return [.cancel(.leave)] + finishClosing() }
        let wasGreeted = phase == .open(greeted: true)
        if wasGreeted { attempt = 0 }
        var actions: [Action] = [.cancel(.connect), .cancel(.ping), .cancel(.pong), .emit(.disconnected(reason))]
        attempt += 1
        guard configuration.reconnect.allows(attempt: attempt) else {
            phase = .closed
            return actions + [.emit(.disconnected(.gaveUp)), .finish]
        }
        let delay = configuration.reconnect.delay(forAttempt: attempt, using: &random.generator)
        phase = .backingOff
        actions += [.emit(.reconnecting(attempt: attempt, delay: delay)), .arm(.backoff, at: now.advanced(by: delay))]
        return actions
    }

    /// The collected message: a binary frame, or a server message (which may change what
    /// is resubscribed).
    private mutating func deliver() -> [Action] {
        let opcode = fragmentOpcode
        let bytes = fragments
        fragments = []
        fragmentOpcode = nil
        if opcode == .binary { return [.emit(.binary(bytes))] }
        guard let message = try? ServerMessage.parse(bytes) else { return [] }
        switch message {
        case .connected(let clientID, _, let limits):
            phase = .open(greeted: true)
            attempt = 0
            var actions: [Action] = [.emit(.connected(clientID: clientID, limits: limits))]
            if let room = activeRoom { actions.append(.send(.joinRoom(roomID: room.roomID, deviceID: room.deviceID))) }
            for (code, device) in watched.sorted(by: { $0.key < $1.key }) {
                actions.append(.send(.watchCode(joinID: code, client1: device)))
            }
            return actions
        case .roomJoined(let roomID, let userCount, let isInitiator, _):
            return [.emit(.joined(roomID: roomID, userCount: userCount, isInitiator: isInitiator))]
        case .roomReady(let roomID, let isInitiator):
            return [.emit(.roomReady(roomID: roomID, isInitiator: isInitiator))]
        case .roomAccepted(let joinID, let roomID):
            watched[joinID] = nil
            return [.emit(.roomAccepted(joinID: joinID, roomID: roomID))]
        case .relayed(let object):
            return [.emit(.message(object))]
        case .peerLeft:
            return [.emit(.peerLeft)]
        case .peerDisconnected:
            return [.emit(.peerDisconnected)]
        case .error(let text)
        where text == ServerMessage.roomNotFoundText || text == ServerMessage.notMemberText:
            // The refusal of a (re)join: the room was deleted or purged while this device
            // was away (its `left_room` went nowhere). Not rejoined again.
            guard let room = activeRoom else { return [.emit(.serverError(text))] }
            activeRoom = nil
            return [.emit(.serverError(text)), .emit(.roomClosed(roomID: room.roomID))]
        case .error(let text):
            return [.emit(.serverError(text))]
        case .roomFull:
            return [.emit(.serverError(ServerMessage.roomFullText))]
        case .leftRoom where phase == .leaving:
            return close()
        case .leftRoom(let roomID?) where roomID == activeRoom?.roomID:
            activeRoom = nil
            return [.emit(.roomClosed(roomID: roomID))]
        case .leftRoom, .pong, .pingSent:
            return []
        }
    }

    private static func bytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    private static func integer(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
