import Crypto
public import Foundation
public import InvisoCrypto
public import InvisoNoise
public import InvisoStore
public import InvisoTime
public import InvisoWire

/// One chat session as a value-type state machine: lifecycle, the v1/v2 decision, the
/// secure channel, acks, resends and de-duplication (``ReliableLink``), path switching,
/// the direct-path attempt, lifetime negotiation and close reasons. No I/O, no clock, no
/// randomness but the generator it was given (`docs/client.md`, "The session engine").
///
/// ```
///            creator                                  joiner
///   start ─▶ pending ──codeAccepted──┐        start ─▶ accepted
///                                    ▼                    │
///                                 accepted ◀──────────────┘
///                                    │ roomReady: channel starts, pairing timer armed
///                                    ▼
///     ┌──── resume ─────────────▶ active ◀── channel established (v2 pairing, or v1
///     │  (stored snapshot)          │         key exchange; v1 fallback on the peer's
///     │                             │         key_exchange before any v2 frame)
///     │                             ▼
///     │     closed ◀── leave · suspend · peerLeft · roomClosed · pairingFailed/timeout
///     │                · inviteExpired · connectionLost       (from every state)
///
///   paths:   relay (always, id 0) ──pathUp(direct)──▶ direct ──pathDown──▶ relay
///   direct:  idle ─established─▶ binding ─listening─▶ listening ─peer candidates─▶
///            connecting ─pathUp─▶ connected        (any failure or timeout: finished)
/// ```
///
/// A driver feeds every ``Event`` (and the user's requests) with the current ``ChatTime``
/// and carries out the returned ``Action``s in order. The rules a driver relies on:
///
/// - Frames for a path are sent in the order of the ``Action/send(_:path:)`` actions. The
///   driver reports how each batch went: ``Event/sent(path:count:)``, or
///   ``Event/sendFailed(path:sent:)`` when the path refused a frame — the driver then
///   drops everything it still queued for that path, and the machine queues it again
///   (handshake frames and v1 frames unchanged; v2 messages sealed anew) for when the path
///   is back (`room_ready`, a path change, or the resend timer).
/// - ``Action/saveSnapshot`` comes before the sends of frames sealed with the state it
///   saves: a resumed session never seals with the same keys twice.
///   ``Action/snapshotChanged`` may be coalesced.
/// - ``Action/arm(_:at:)`` replaces an armed timer of the same kind; a timer that fires
///   after ``Action/cancel(_:)`` or a newer arm must not be reported.
/// - After ``Action/finish(_:)`` every input is ignored.
public struct ChatSessionMachine: Sendable {
    /// The machine's timing and policy.
    public struct Configuration: Sendable {
        /// Whether the creator falls back to v1 when the peer starts the app's v1 key
        /// exchange (``ChatClient/Configuration/allowsV1Fallback``).
        public var allowsV1Fallback = true
        /// How long the secure channel may take once both members are in the room.
        public var pairingTimeout: Duration = .seconds(30)
        /// How long an owed ack may wait for more messages to cover.
        public var ackDelay: Duration = .milliseconds(20)
        /// How often the resend check runs: unacknowledged messages go out again when the
        /// peer's ack did not move for a whole interval and nothing is being sent. Each
        /// resend that brings no progress doubles the interval (up to
        /// ``maxRetransmitInterval``); an ack that moves brings it back.
        public var retransmitInterval: Duration = .seconds(2)
        /// The longest the resend check waits after resends that brought no ack.
        public var maxRetransmitInterval: Duration = .seconds(60)
        /// Whether a direct path is tried once the channel is secured.
        public var triesDirectPath = true
        /// How long the direct listener waits for the peer's candidates.
        public var directCandidatesTimeout: Duration = .seconds(30)
        /// The message layer's windows and limits.
        public var reliable = ReliableLink.Configuration()
        /// The peer's Noise static key this session must end with (a call to a saved
        /// contact, ``ContactCall``); any other key fails the pairing. `nil`: any key (an
        /// invite's words authenticate the peer).
        public var expectedPeerIdentity: [UInt8]?
        /// Whether the session is kept in a store (otherwise no store or save action is
        /// returned, and received messages are emitted at once).
        public var persists = true

        /// The defaults.
        public init() {}
    }

    /// A path the machine sends on: the relay (always there) or one the driver added.
    public struct PathID: Hashable, Sendable, CustomStringConvertible {
        /// The driver's number for the path; 0 is the relay.
        public let rawValue: Int

        /// A path number (0 is the relay).
        public init(_ rawValue: Int) { self.rawValue = rawValue }

        /// The relay through the signaling server.
        public static let relay = PathID(0)

        public var description: String { "path \(rawValue)" }
    }

    /// The machine's timers.
    public enum Timer: Hashable, Sendable, CaseIterable {
        /// The secure channel must be up by then.
        case pairing
        /// An owed ack goes out.
        case ack
        /// The periodic resend check.
        case retransmit
        /// The direct listener stops waiting for the peer's candidates.
        case directCandidates
    }

    /// What goes out on a path.
    public enum Outgoing: Sendable, Equatable {
        /// A binary frame (already sealed, or a handshake frame).
        case frame([UInt8])
        /// A signaling message (relay only).
        case signal(ClientMessage)
    }

    /// A change to the stored session record.
    public enum SessionUpdate: Sendable, Equatable {
        /// The creator's code was accepted: the room and the state.
        case accepted(roomID: String)
        /// The secure channel is up.
        case active
        /// The session fell back to v1.
        case protocolVersion(Int)
    }

    /// How the session ends (``Action/finish(_:)``).
    public struct Closing: Sendable, Equatable {
        /// Why.
        public var reason: ChatCloseReason
        /// Send `leave_room`, delete the room and purge this device on the server.
        public var leavesRoom: Bool
        /// Keep the stored session and its snapshot (save it first); otherwise wipe it.
        public var keepsSession: Bool
        /// Let the relay's queued frames (a pairing abort, a leaving side's last ack) go
        /// out before closing.
        public var flushesRelay: Bool
    }

    /// What happened, as the driver saw it.
    public enum Event: Sendable {
        /// Creator: the join code was accepted (a `room_accepted` push or a `check`).
        case codeAccepted(roomID: String)
        /// Creator: nobody accepted the code before it expired.
        case inviteExpired
        /// Both members are in the room (`room_ready`), the first time or after a reconnect.
        case roomReady
        /// The peer left (`peer_left`), or the room was closed under us.
        case peerLeft
        /// The peer's socket closed (it may come back).
        case peerDisconnected
        /// Our signaling socket dropped (it reconnects by itself).
        case relayDisconnected
        /// Our signaling socket could not be restored.
        case connectionLost
        /// A relayed signaling message from the peer.
        case signal(JSONObject)
        /// A binary frame from the peer on a path.
        case frame([UInt8], path: PathID)
        /// A new path is up; sending moves to it.
        case pathUp(PathID, ChatPath)
        /// A path closed.
        case pathDown(PathID)
        /// The oldest `count` frames queued for `path` went out.
        case sent(path: PathID, count: Int)
        /// The path refused a frame after `sent` went out; the rest was dropped.
        case sendFailed(path: PathID, sent: Int)
        /// A timer fired.
        case timerFired(Timer)
        /// The direct listener is up at these addresses.
        case directListening([TransportCandidates.Candidate])
        /// The direct listener or connector failed.
        case directFailed
        /// The driver stored a received message (``Action/storeReceived(id:payload:)``);
        /// `isNew` is false when the store already held it.
        case receivedStored(id: UInt64, payload: ChatPayload, isNew: Bool)
    }

    /// What the driver must do, in order.
    public enum Action: Sendable {
        /// Send on a path (signals on the relay's socket).
        case send(Outgoing, path: PathID)
        /// Report to the app.
        case emit(ChatEvent)
        /// Wake the machine at an instant with ``Event/timerFired(_:)``.
        case arm(Timer, at: ClockInstant)
        /// Forget an armed timer.
        case cancel(Timer)
        /// Take this device's seat in the room over signaling.
        case joinRoom(roomID: String)
        /// Change the stored session record.
        case updateSession(SessionUpdate)
        /// Store ``ChatSessionMachine/resumeSnapshot()`` now.
        case saveSnapshot
        /// Store the snapshot soon (coalesce).
        case snapshotChanged
        /// Store a message we sent (``Configuration/persists`` only).
        case storeSent(id: UInt64, payload: ChatPayload)
        /// Store a received message, then report ``Event/receivedStored(id:payload:isNew:)``
        /// (``Configuration/persists`` only; otherwise the machine emits the message itself).
        case storeReceived(id: UInt64, payload: ChatPayload)
        /// Mark our messages delivered in the store (``Configuration/persists`` only).
        case markDelivered(ClosedRange<UInt64>)
        /// Pin the peer's identity for this session.
        case pinIdentity(peer: [UInt8], security: ChatSecurity?, isVerified: Bool)
        /// Store the agreed lifetime.
        case setLifetime(MessageLifetime)
        /// Bind a direct listener with this key; report ``Event/directListening(_:)`` or
        /// ``Event/directFailed``.
        case openDirectListener(key: SecretBytes, role: V2Pairing.Role)
        /// Connect to the peer's candidates; report ``Event/pathUp(_:_:)`` or ``Event/directFailed``.
        case connectDirect([TransportCandidates.Candidate])
        /// Close the direct listener (if any).
        case closeDirectListener
        /// End the session as described, then close every path and the signaling socket.
        case finish(Closing)
    }

    /// Where the direct-path attempt is (one attempt per session; it never changes the
    /// session's state: on any failure the session stays on the relay).
    public enum DirectPhase: Sendable, Equatable {
        /// Not started: the channel is not secured yet.
        case idle
        /// The listener is being bound.
        case binding
        /// Our candidates were sent; waiting for the peer's.
        case listening
        /// The connector is racing for a connection.
        case connecting
        /// The direct connection became a path (it may have dropped since).
        case connected
        /// Over without a direct path, or the direct path is off.
        case finished
    }

    /// One item sent on a path and not yet reported sent.
    enum InFlight: Sendable {
        /// A handshake frame or signaling message (queued again unchanged on failure).
        case control(Outgoing)
        /// A sealed v1 frame (queued again unchanged on failure).
        case v1Frame([UInt8])
        /// A sealed v2 frame (resent by sealing anew).
        case sealed
    }

    // MARK: State

    /// The configuration.
    public let configuration: Configuration
    /// The lifecycle state.
    public internal(set) var state: ChatState
    /// Our role.
    public let role: V2Pairing.Role
    /// The invite (v2), or `nil` for a v1 join.
    let invite: Invite?
    /// The room, once known.
    public internal(set) var roomID: String?
    /// This session's device id.
    public let deviceID: String
    /// Our Noise static key (v2 identity).
    let staticKey: NoiseKeyPair?
    /// Our v1 key, made when v1 is used.
    var v1Key: Curve25519.KeyAgreement.PrivateKey?
    /// The agreed message lifetime.
    public internal(set) var lifetime: MessageLifetime
    var proposedLifetime: MessageLifetime?
    var warnedV1 = false
    var random: AnyGenerator

    var channel: (any SecureChannel)?
    /// The reliable link.
    public internal(set) var link: ReliableLink
    /// Handshake frames and signaling messages waiting, in order.
    var control: [Outgoing] = []
    /// v1 frames sealed and not yet handed to a path.
    var v1Unsent: [[UInt8]] = []
    var ackForced = false
    var ackArmed = false
    var lastRetransmitAck: UInt64 = 0
    /// Resends in a row that brought no ack: the resend check waits
    /// `retransmitInterval × 2^retransmitBackoff` (capped), so that a peer slower than the
    /// interval is not buried in copies it would have to get through before our acks.
    var retransmitBackoff = 0
    /// Since the last resend check: whether a frame from the peer opened.
    var heardSinceCheck = false
    /// Since the peer's ack last moved (or our last resend): whether an ack came that did
    /// not move while messages wait for one — the peer got something that did not fill
    /// its gap (a loss, or copies).
    var staleAckSinceProgress = false

    /// The path messages are sent on, and its kind.
    public internal(set) var sendPath = PathID.relay
    var sendPathKind = ChatPath.relay
    /// Paths the driver added and that are still up.
    var paths: [PathID: ChatPath] = [.relay: .relay]
    /// Items sent per path and not yet reported, oldest first.
    var inFlight: [PathID: [InFlight]] = [:]
    /// Paths that refused a frame: nothing more goes there until it is back.
    var blocked: Set<PathID> = []
    /// Whether the peer is in the room (the relay delivers).
    var peerPresent = false
    /// The peer's connection dropped after the channel was up, and it has not come back
    /// (``ChatEvent/peer(online:)`` told the user).
    var peerAway = false
    /// Frames and records refused, by the refusal's description (diagnostics: no key, no
    /// payload).
    var refusedFrames: [String: Int] = [:]

    /// The direct attempt.
    public internal(set) var directPhase = DirectPhase.idle
    var ownCandidates: [TransportCandidates.Candidate]?
    var peerCandidates: [TransportCandidates.Candidate]?

    // MARK: Creating

    /// A new session: the creator's (state ``ChatState/pending`` until the code is
    /// accepted) or the joiner's (``ChatState/accepted``, `roomID` known). ``start(at:)``
    /// returns the first actions.
    ///
    /// - Parameters:
    ///   - role: Creator or joiner.
    ///   - invite: The v2 invite; `nil` for a joiner that has the 6 digits only (v1).
    ///   - roomID: The joiner's room (`nil` for the creator).
    ///   - deviceID: This session's device id.
    ///   - staticKey: This session's Noise static key.
    ///   - lifetime: The message lifetime to start with.
    ///   - configuration: Timing and policy.
    ///   - random: Channel keys and the v1 key.
    public init(
        role: V2Pairing.Role, invite: Invite?, roomID: String?, deviceID: String, staticKey: NoiseKeyPair,
        lifetime: MessageLifetime, configuration: Configuration, random: any RandomNumberGenerator & Sendable
    ) {
        self.configuration = configuration
        self.role = role
        self.invite = invite
        self.roomID = roomID
        self.deviceID = deviceID
        self.staticKey = staticKey
        self.lifetime = lifetime
        self.random = AnyGenerator(base: random)
        self.link = ReliableLink(configuration: configuration.reliable)
        self.state = role == .creator ? .pending : .accepted
    }

    /// A stored session, to be resumed: ``ChatState/active`` with the restored channel
    /// and link.
    ///
    /// - Throws: ``ChatError/storage`` when the snapshot's keys or link do not restore.
    public init(
        resuming snapshot: ChatSessionSnapshot, lifetime: MessageLifetime, configuration: Configuration,
        random: any RandomNumberGenerator & Sendable, at time: ChatTime
    ) throws(ChatError) {
        var random = AnyGenerator(base: random)
        let restoredChannel: any SecureChannel
        var staticKey: NoiseKeyPair?
        var v1Key: Curve25519.KeyAgreement.PrivateKey?
        do {
            switch snapshot.channel {
            case .v2(let session):
                staticKey = try snapshot.identity.withUnsafeBytes { raw throws(NoiseError) in
                    try NoiseKeyPair(rawPrivateKey: raw)
                }
                restoredChannel = V2SecureChannel(restoring: session, random: random.fork())
            case .v1(let peer, let sentCount, let window):
                let key = try snapshot.identity.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
                v1Key = key
                let timestamp = time.date.timeIntervalSince1970
                restoredChannel = try V1SecureChannel(
                    restoring: snapshot.role == .creator ? .initiator : .responder, roomID: snapshot.roomID,
                    privateKey: key, peerPublicKey: peer, sentCount: sentCount, window: window,
                    timestamp: { timestamp })
            }
            link = try ReliableLink(configuration: configuration.reliable, restoring: snapshot.link)
        } catch {
            throw ChatError(.storage, "stored session state: \(error)")
        }
        self.configuration = configuration
        self.role = snapshot.role
        self.invite = nil
        self.roomID = snapshot.roomID
        self.deviceID = snapshot.deviceID
        self.staticKey = staticKey
        self.v1Key = v1Key
        self.lifetime = lifetime
        self.random = random
        self.channel = restoredChannel
        self.security = Self.security(of: restoredChannel)
        self.state = .active
        // The peer may have missed our last ack: send it with the first pass.
        ackForced = link.isAckOwed
        lastRetransmitAck = link.peerAck
    }

    // MARK: Reading

    /// The channel's protocol, verification status and safety number, once established.
    /// Kept, not recomputed: a safety number costs 10,400 SHA-512 hashes (~5 ms).
    public internal(set) var security: ChatSecurity?

    /// `channel`'s security, computing its safety number once.
    static func security(of channel: any SecureChannel) -> ChatSecurity? {
        guard channel.isEstablished, let inputs = channel.safetyNumberInputs else { return nil }
        return ChatSecurity(version: channel.version, isVerified: channel.isVerified, computing: inputs)
    }

    /// The key that authenticates a direct connection, once the channel is up.
    public var directPathKey: SecretBytes? { channel?.directPathKey }

    /// The kind of the path messages are sent on.
    public var currentPath: ChatPath { sendPathKind }

    /// How many of our messages have not left for good: (v2) not acknowledged, (v1)
    /// sealed but not yet sent.
    public var undeliveredCount: Int {
        let v1InFlight = inFlight.values.reduce(0) { sum, items in
            sum + items.count { if case .v1Frame = $0 { true } else { false } }
        }
        return link.unacknowledgedCount + v1Unsent.count + v1InFlight
    }

    /// The id the next message ``send(_:at:)`` queues gets.
    public var nextMessageID: UInt64 { link.nextSeq }

    /// The machine's counters for a diagnostic line (no key, no payload): the send path,
    /// what is in flight per path, blocked paths, the link's counters.
    public var diagnostics: String {
        let flights = inFlight.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value.count)" }
        return "sendPath=\(sendPath.rawValue) inFlight=[\(flights.joined(separator: " "))] "
            + "blocked=\(blocked.map(\.rawValue).sorted()) peerPresent=\(peerPresent) canSeal=\(channel?.canSeal ?? false) "
            + "control=\(control.count) \(link.diagnostics) lastRetransmitAck=\(lastRetransmitAck) "
            + "retransmitBackoff=\(retransmitBackoff) "
            + "refused=\(refusedFrames.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })"
    }

    /// How many more messages the outbox takes before ``send(_:at:)`` refuses.
    public var outboxRoom: Int { link.room }

    /// How many items were handed to `path` and not yet reported sent.
    public func inFlightCount(on path: PathID) -> Int { inFlight[path]?.count ?? 0 }

    /// The state to store now; `nil` before the channel is established (nothing to resume).
    public func resumeSnapshot() -> ChatSessionSnapshot? {
        guard let channel, channel.isEstablished, let roomID else { return nil }
        if let v2 = channel as? V2SecureChannel, let session = v2.session, let staticKey {
            return ChatSessionSnapshot(
                role: role, roomID: roomID, deviceID: deviceID,
                identity: SecretBytes(staticKey.privateKey.rawRepresentation), channel: .v2(session),
                link: link.snapshot)
        }
        if let v1 = channel as? V1SecureChannel, let resume = v1.resumeState, let v1Key {
            return ChatSessionSnapshot(
                role: role, roomID: roomID, deviceID: deviceID, identity: SecretBytes(v1Key.rawRepresentation),
                channel: .v1(peerPublicKey: resume.peerPublicKey, sentCount: resume.sentCount, window: resume.window),
                link: link.snapshot)
        }
        return nil
    }
}

/// The two times an input happens at: the monotonic instant (timers) and the wall-clock
/// date (protocol timestamps). The driver reads both from its clock.
public struct ChatTime: Sendable, Hashable {
    /// The monotonic instant.
    public var now: ClockInstant
    /// The wall-clock date.
    public var date: Date

    /// A time from its parts.
    public init(now: ClockInstant, date: Date) {
        self.now = now
        self.date = date
    }

    /// The clock's current time.
    public init(_ clock: any InvisoClock) {
        self.init(now: clock.now, date: clock.wallClock)
    }
}
