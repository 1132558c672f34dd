import Crypto
import Foundation
public import InvisoCrypto
import InvisoNoise
public import InvisoStore
public import InvisoWire
public import Logging

/// One end-to-end encrypted chat session with one peer: the engine behind
/// `inviso invite` / `inviso join` and any app UI (`docs/client.md`, "Chat engine").
///
/// Lifecycle: ``ChatState/idle`` → ``invite()`` (``ChatState/pending``) or
/// ``join(_:)`` → ``ChatState/accepted`` → the secure channel is set up over the relay →
/// ``ChatState/active`` → ``leave()`` (or failure, expiry, the peer leaving) →
/// ``ChatState/closed``. Everything that happens is reported on ``events``.
///
/// - Every session has a fresh random device ID and a fresh identity (Noise static key;
///   X25519 key for v1); nothing links two sessions on the server.
/// - ``send(_:)`` works in any state before closing: messages wait in the outbox until
///   the channel is up, and (v2) stay there until the peer acks them; after a reconnect
///   or a path change every unacknowledged message is sent again, and the receiver drops
///   duplicates and restores the order (``ReliableLink``).
/// - With a store and a non-ephemeral session, the session, its messages (expiring after
///   the agreed lifetime) and the peer's pinned identity are kept; an ephemeral session
///   stores nothing.
/// - Paths: the relay through the server at once; once the channel is secured, a direct
///   TCP connection is tried in the background (``Configuration/direct``) and, when it
///   authenticates, sending moves to it (``ChatEvent/path(_:)``); if it drops, sending
///   falls back to the relay. ``addPath(_:)`` switches sending to any other
///   ``FrameTransport`` the same way: frames still arrive on the old path, and whatever
///   is unacknowledged is sent again on the new one.
public actor ChatClient {
    /// The events, in order; finishes after ``ChatEvent/closed(_:)``.
    public nonisolated let events: AsyncStream<ChatEvent>

    let continuation: AsyncStream<ChatEvent>.Continuation
    let configuration: Configuration
    let store: InvisoStore?
    let clock: ChatClock
    let api: RoomAPI
    let logger: Logger
    var random: AnyGenerator
    /// Whether ``random`` is the system's generator (forks are then system generators too).
    let randomIsSystem: Bool
    /// Sees every frame sent or received on any path (tests: "the relay carries no plaintext").
    let frameTap: (@Sendable (ChatPath, [UInt8]) -> Void)?

    // MARK: Session

    /// Where the session is.
    public internal(set) var state = ChatState.idle
    /// The session's id in the store (a random UUID); `nil` before ``invite()`` or ``join(_:)``.
    public internal(set) var sessionID: String?
    var deviceID: String?
    var joinCode: String?
    var roomID: String?
    var role: V2Pairing.Role?
    var invite: Invite?
    var staticKey: NoiseKeyPair?
    var v1Key: Curve25519.KeyAgreement.PrivateKey?
    /// The agreed message lifetime.
    public internal(set) var lifetime: MessageLifetime
    var proposedLifetime: MessageLifetime?
    var warnedV1 = false

    // MARK: Networking

    var signaling: SignalingClient?
    var relay: RelayTransport?
    var sendPath: (any FrameTransport)?
    var peerPresent = false
    var tasks: [Task<Void, Never>] = []
    /// The automatic direct-path attempt (`ChatClient+Direct.swift`).
    var direct = DirectAttempt()

    // MARK: Messaging

    var channel: (any SecureChannel)?
    var link: ReliableLink
    var control: [ControlItem] = []
    var v1Unsent: [[UInt8]] = []
    var pumpTask: Task<Void, Never>?
    var pumpAgain = false
    var ackTimer: Task<Void, Never>?
    var ackForced = false
    var pairingTimer: Task<Void, Never>?
    /// A save of the resumable state is scheduled (`ChatClient+Resume.swift`).
    var resumeSavePending = false

    /// A handshake frame or signaling message waiting to go out, in order.
    enum ControlItem: Sendable {
        case frame([UInt8])
        case signal(ClientMessage)
    }

    /// Creates a session; nothing happens until ``invite()`` or ``join(_:)``.
    ///
    /// - Parameters:
    ///   - configuration: Server, lifetime, timeouts.
    ///   - store: Where sessions and messages are kept (`nil`: nothing is stored).
    ///   - random: Device IDs, keys, join codes, invite words, reconnect jitter; a
    ///     cryptographically secure generator outside tests.
    ///   - clock: Time sources.
    ///   - http: The REST transport (default: ``NIOHTTPTransport`` to the server).
    ///   - logger: Lifecycle events only; never text, keys, codes or ids. The session's REST
    ///     calls, signaling socket and direct path log here too.
    public init(
        configuration: Configuration, store: InvisoStore? = nil,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), clock: ChatClock = .system,
        http: (any HTTPTransport)? = nil, logger: Logger = Logger(label: "inviso.kit.chat")
    ) {
        self.init(
            configuration: configuration, store: store, random: random, clock: clock, http: http, logger: logger,
            frameTap: nil)
    }

    /// ``init(configuration:store:random:clock:http:logger:)`` with a frame tap (tests).
    package init(
        configuration: Configuration, store: InvisoStore?, random: some RandomNumberGenerator & Sendable,
        clock: ChatClock, http: (any HTTPTransport)?, logger: Logger, frameTap: (@Sendable (ChatPath, [UInt8]) -> Void)?
    ) {
        self.configuration = configuration
        self.store = configuration.isEphemeral ? nil : store
        self.random = AnyGenerator(generator: random)
        self.randomIsSystem = random is SystemRandomNumberGenerator
        self.clock = clock
        // One logger for everything the session does, so an app's handler and level (a chat
        // screen logs nothing; `--json` keeps standard output for events) cover the REST
        // calls and the signaling socket too.
        self.api = RoomAPI(transport: http ?? NIOHTTPTransport(endpoint: configuration.server), logger: logger)
        self.logger = logger
        self.frameTap = frameTap
        self.lifetime = configuration.isEphemeral ? .ephemeral : configuration.lifetime
        self.link = ReliableLink(configuration: configuration.reliable)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: - Starting

    /// Creates a room and returns the v2 invite to give the peer (`NNNNNN-word-word-word`
    /// and its link). Then waits in the background for the peer to accept (a `watch_code`
    /// push, with `check` polling as a fallback), joins the room and pairs.
    ///
    /// - Throws: ``ChatError/wrongState`` unless idle, ``ChatError/server`` when the
    ///   server refuses or cannot be reached.
    public func invite() async throws(ChatError) -> Invite {
        guard state == .idle else { throw .wrongState }
        state = .pending
        role = .creator
        let device = newDeviceID()
        deviceID = device
        staticKey = newStaticKey()
        let expiry = max(1, min(86_400, Int(configuration.inviteExpiry / .seconds(1))))
        // The server picks the code: proposing our own would let a taken code's 409 tell
        // us (or anyone) which codes are live.
        let created: RoomAPI.CreatedRoom
        do {
            created = try await api.createRoom(deviceID: device, expiresInSeconds: expiry)
        } catch {
            state = .idle
            throw ChatError(.server, error.description)
        }
        guard let invite = try? Invite.generate(joinCode: created.joinID, using: &random.generator) else {
            state = .idle
            throw ChatError(.server, "no free join code")
        }
        self.invite = invite
        joinCode = created.joinID
        try saveNewSession(state: .pending, protocolVersion: 2)
        emit(.state(.pending))
        let signaling = startSignaling()
        try? await signaling.watch(joinID: created.joinID, deviceID: device)
        startTask { [weak self] in await self?.pollForAcceptance() }
        logger.info("invite created")
        return invite
    }

    /// Joins with an invite: `NNNNNN-word-word-word` or its link (v2), or six digits alone
    /// (v1, as the iOS app: encrypted but unverified; a ``ChatWarning/unverifiedV1``
    /// warning follows). Accepts the code, joins the room and pairs in the background.
    ///
    /// - Throws: ``ChatError/wrongState`` unless idle, ``ChatError/invalidInvite``,
    ///   ``ChatError/expired`` when the code is unknown or expired, ``ChatError/server``.
    public func join(_ text: String) async throws(ChatError) {
        guard state == .idle else { throw .wrongState }
        let code: String
        do {
            switch try Invite.parse(text) {
            case .v2(let parsed):
                invite = parsed
                code = parsed.joinCode
            case .v1Only(let joinCode):
                code = joinCode
            }
        } catch {
            throw ChatError(.invalidInvite, error.description)
        }
        state = .accepted
        role = .joiner
        joinCode = code
        let device = newDeviceID()
        deviceID = device
        staticKey = newStaticKey()
        let room: String
        do {
            room = try await api.accept(joinID: code, deviceID: device)
        } catch {
            state = .idle
            invite = nil
            if error == .notFoundOrExpired || error == .alreadyAccepted { throw ChatError(.expired, error.description) }
            throw ChatError(.server, error.description)
        }
        roomID = room
        try saveNewSession(state: .accepted, protocolVersion: invite == nil ? 1 : 2)
        emit(.state(.accepted))
        if invite == nil { warnV1() }
        let signaling = startSignaling()
        try? await signaling.join(roomID: room, deviceID: device)
        logger.info("invite accepted")
    }

    // MARK: - Messages

    /// Sends a text; see ``send(_:)``.
    @discardableResult
    public func send(text: String) throws(ChatError) -> UInt64 {
        try send(.text(text))
    }

    /// Queues a message for the peer and returns its id (v2: its sequence number; v1:
    /// frame counter + 1 — both count from 1). It goes out as soon as the channel is up,
    /// and (v2) again after reconnects until the peer acks it (``ChatEvent/delivered(id:)``).
    ///
    /// - Throws: ``ChatError/closed`` after the session ended, ``ChatError/wrongState``
    ///   before ``invite()`` / ``join(_:)``, ``ChatError/outboxFull``.
    @discardableResult
    public func send(_ payload: ChatPayload) throws(ChatError) -> UInt64 {
        switch state {
        case .closed: throw .closed
        case .idle: throw .wrongState
        default: break
        }
        let id: UInt64
        do {
            id = try link.enqueue(payload.plaintext)
        } catch {
            throw .outboxFull
        }
        if let kind = Self.storedKind(payload) {
            storeMessage(id: "s\(id)", direction: .sent, kind: kind, payload: payload)
        }
        // Saved at once, so that a message accepted here survives the process.
        saveResumeState()
        schedulePump()
        return id
    }

    // MARK: - Lifetimes

    /// Proposes a message lifetime to the peer (`lifetime_proposal`, as the app does); it
    /// applies once the peer accepts (``ChatEvent/lifetime(_:)``).
    ///
    /// - Throws: As ``send(_:)``.
    public func proposeLifetime(_ lifetime: MessageLifetime) throws(ChatError) {
        proposedLifetime = lifetime
        try send(.lifetimeProposal(sessionID: roomID ?? "", lifetime: lifetime, proposedAt: clock.date().timeIntervalSince1970))
    }

    /// Accepts the peer's proposal (`lifetime_accept`) and applies it.
    ///
    /// - Throws: As ``send(_:)``.
    public func acceptLifetime(_ lifetime: MessageLifetime) throws(ChatError) {
        try send(.lifetimeAccept(sessionID: roomID ?? "", lifetime: lifetime, acceptedAt: clock.date().timeIntervalSince1970))
        applyLifetime(lifetime)
    }

    /// Rejects the peer's proposal (`lifetime_reject`).
    ///
    /// - Throws: As ``send(_:)``.
    public func rejectLifetime(reason: String? = nil) throws(ChatError) {
        try send(.lifetimeReject(sessionID: roomID ?? "", reason: reason))
    }

    // MARK: - Session management

    /// Renames the session in the store (nothing for an ephemeral session).
    ///
    /// - Throws: ``ChatError/storage``.
    public func rename(to name: String) throws(ChatError) {
        guard let store, let sessionID else { return }
        do {
            try store.renameSession(id: sessionID, to: name)
        } catch {
            throw ChatError(.storage, error.description)
        }
    }

    /// The channel's protocol, verification status and safety number, once established.
    public var security: ChatSecurity? {
        guard let channel, channel.isEstablished, let number = channel.safetyNumber else { return nil }
        return ChatSecurity(version: channel.version, isVerified: channel.isVerified, safetyNumber: number)
    }

    /// The path messages are sent on.
    public var currentPath: ChatPath? { sendPath?.path }

    /// The 32-byte key that authenticates a direct connection, once the channel is up
    /// (`docs/protocol.md`, "Direct-path key").
    public var directPathKey: SecretBytes? { channel?.directPathKey }

    /// The room's id, once known (for the direct transport's binding).
    public var currentRoomID: String? { roomID }

    /// Whether this side created the room.
    public var isCreator: Bool { role == .creator }

    /// How many messages wait for the peer's ack.
    public var unacknowledgedCount: Int { link.unacknowledgedCount }

    /// Sends `transport_candidates` to the peer (for the direct transport).
    ///
    /// - Throws: ``ChatError/closed``, ``ChatError/wrongState`` before the room is joined.
    public func sendTransportCandidates(_ candidates: [TransportCandidates.Candidate]) throws(ChatError) {
        guard state != .closed else { throw .closed }
        guard signaling != nil, roomID != nil else { throw .wrongState }
        control.append(.signal(TransportCandidates(candidates: candidates).message))
        schedulePump()
    }

    /// Leaves for good: `leave_room` (the peer sees ``ChatCloseReason/peerLeft``), the
    /// room deleted and this device ID purged on the server (best effort), the session's
    /// keys wiped in the store, ``ChatEvent/closed(_:)`` with ``ChatCloseReason/left``.
    /// No reconnect follows. Idempotent.
    public func leave() async {
        await close(reason: .left, leaveRoom: true)
    }

    // MARK: - Helpers

    func emit(_ event: ChatEvent) {
        continuation.yield(event)
    }

    func warnV1() {
        guard !warnedV1 else { return }
        warnedV1 = true
        emit(.warning(.unverifiedV1))
    }

    /// Runs `body` as a task the session owns (cancelled when it closes).
    func startTask(_ body: @escaping @Sendable () async -> Void) {
        tasks.append(Task { await body() })
    }

    /// A random version-4 UUID, uppercase as the app's.
    func newDeviceID() -> String {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.generator.next()) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Hex.encode(bytes).uppercased()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// A generator for a component (signaling jitter, a channel): the system's generator
    /// when that is what was injected, else a deterministic one seeded from ``random``
    /// (tests), so that no two components replay the same numbers.
    func forkRandom() -> any RandomNumberGenerator & Sendable {
        randomIsSystem ? SystemRandomNumberGenerator() : SplitMixGenerator(seed: random.generator.next())
    }

    func newStaticKey() -> NoiseKeyPair {
        let secret = SecretBytes(randomCount: 32, using: &random.generator)
        do {
            return try secret.withUnsafeBytes { raw throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: raw) }
        } catch {
            preconditionFailure("32 bytes are always an X25519 private key")
        }
    }

    func newV1Key() -> Curve25519.KeyAgreement.PrivateKey {
        let secret = SecretBytes(randomCount: 32, using: &random.generator)
        do {
            return try secret.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
        } catch {
            preconditionFailure("32 bytes are always an X25519 private key")
        }
    }
}

/// SplitMix64: the deterministic generator of forks of an injected test generator.
struct SplitMixGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
