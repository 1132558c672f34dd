import Crypto
import Foundation
import Synchronization
public import InvisoCrypto
import InvisoNoise
public import InvisoStore
public import InvisoTime
public import InvisoWire
public import Logging
import NIOCore
import NIOPosix

/// One end-to-end encrypted chat session with one peer over the rendezvous server: the
/// driver of a ``ChatSessionMachine`` behind `inviso invite` / `inviso join` and any app UI
/// (`docs/client.md`, "The session engine").
///
/// Lifecycle: ``ChatState/idle`` → ``invite()`` (``ChatState/pending``) or
/// ``join(_:)`` → ``ChatState/accepted`` → the secure channel is set up over the relay →
/// ``ChatState/active`` → ``leave()`` (or failure, expiry, the peer leaving) →
/// ``ChatState/closed``. Everything that happens is reported on ``events``.
///
/// The machine decides; this actor does the I/O it asks for: REST calls, the signaling
/// socket, the relay and direct paths, the store and the timers. All of its work runs as
/// child tasks of one task group that starts with the session and ends with it, so no
/// task outlives the session. Timers sleep on the injected clock (`InvisoTime`), so tests
/// advance a manual clock instead of waiting.
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
///   ``FrameTransport`` the same way.
public actor ChatClient {
    /// The events, in order; finishes after ``ChatEvent/closed(_:)``.
    public nonisolated let events: AsyncStream<ChatEvent>

    /// The threads sessions run on: a client's work, store calls included (SQLite and
    /// sealing block), runs on one of these instead of Swift's cooperative pool, so a slow
    /// disk never holds up the pool's few threads (and the timers and sockets of everything
    /// else). A client's own sockets (signaling, direct path) share its loop, so its frames
    /// reach the machine without a thread switch; no one else's do.
    static let executorGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    /// The event loop this client's actor runs on.
    nonisolated let executorLoop: any EventLoop
    /// Runs the session's child tasks on the same loop.
    nonisolated let taskExecutor: EventLoopTaskExecutor

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executorLoop.executor.asUnownedSerialExecutor()
    }

    let continuation: AsyncStream<ChatEvent>.Continuation
    let configuration: Configuration
    let store: InvisoStore?
    let clock: any InvisoClock
    let api: RoomAPI
    /// Opens the signaling connections (`nil`: WebSockets to the configuration's server).
    let signalingConnector: (any SignalingConnector)?
    let logger: Logger
    var random: AnyGenerator
    /// Sees every frame sent or received on any path (tests: "the relay carries no plaintext").
    let frameTap: (@Sendable (ChatPath, [UInt8]) -> Void)?

    // MARK: Session

    /// The session's machine, once ``invite()``, ``join(_:)`` or ``resume(sessionID:)`` made it.
    var machine: ChatSessionMachine?
    /// The state before the machine exists (a start in progress, or closed while idle).
    var preState = ChatState.idle
    /// The session's id in the store (a random UUID); `nil` before ``invite()`` or ``join(_:)``.
    public internal(set) var sessionID: String?
    var joinCode: String?

    // MARK: I/O

    /// The session's child tasks are added here (see ``ChatClient/startRunning()``).
    var jobs: AsyncStream<@Sendable () async -> Void>.Continuation?
    var runTask: Task<Void, Never>?
    var signaling: SignalingClient?
    var relay: RelayTransport?
    /// The paths by the machine's id, with what waits to be sent on each.
    var paths: [ChatSessionMachine.PathID: PathSender] = [:]
    var nextPathID = 1
    /// Arming a timer, or cancelling it, makes older wake-ups stale.
    var timers = TimerGenerations<ChatSessionMachine.Timer>()
    /// What this client did, counted (``diagnostics``).
    var counters = Counters()
    var snapshotSavePending = false
    /// Adds the safety number to the pinned identity (off the session's loop).
    var pinning: Task<Void, Never>?
    var directListener: DirectListener?
    /// The direct connection in use or last used (tests).
    var directConnection: DirectConnection?

    /// One path's transport and its send queue.
    struct PathSender {
        let transport: any FrameTransport
        var queued: [ChatSessionMachine.Outgoing] = []
        /// Chunk frames of file transfers, by batch (``FileTransferMachine``): sent after
        /// the machine's frames and reported to the file machine, not to the session's.
        var chunks: [ChunkBatch] = []
        let doorbell: AsyncStream<Void>.Continuation
        /// A batch taken from `queued` is being written.
        var sending = false
    }

    /// Messages sent from other threads that the machine has not taken yet (a session
    /// that stores nothing; see ``send(contentsOf:)``).
    nonisolated let submissions = Mutex(MessageSubmissions())
    /// Rung when ``submissions`` has messages for the machine; a child task drains them.
    nonisolated let drainBell: AsyncStream<Void>.Continuation
    let drainRequests: AsyncStream<Void>

    /// The session's file transfers (``ChatClient/sendFile(_:name:)``).
    var files: FileTransferMachine
    /// Open files of the transfers under way.
    var outgoingFiles: [FileTransferID: OutgoingFile] = [:]
    var incomingFiles: [FileTransferID: IncomingFile] = [:]
    /// Generation of the file machine's timer (a newer arm outdates an older wake-up).
    var fileTimerGeneration: UInt64 = 0

    /// Waiting for the relay's batch in progress to end (a closing pairing failure lets its
    /// abort frame out first).
    var relayBatchWaiters: [CheckedContinuation<Void, Never>] = []

    /// Creates a session; nothing happens until ``invite()`` or ``join(_:)``.
    ///
    /// - Parameters:
    ///   - configuration: Server, lifetime, timeouts.
    ///   - store: Where sessions and messages are kept (`nil`: nothing is stored).
    ///   - random: Device IDs, keys, invite words, reconnect jitter; a cryptographically
    ///     secure generator outside tests.
    ///   - clock: Timers, timeouts and pacing; stored message times.
    ///   - http: The REST transport (default: ``NIOHTTPTransport`` to the server).
    ///   - signaling: Opens the signaling connections (default:
    ///     ``WebSocketSignalingConnector`` to the server). With `http`, it lets the session
    ///     run against another rendezvous, such as InvisoTesting's in-process server.
    ///   - logger: Lifecycle events only; never text, keys, codes or ids. The session's REST
    ///     calls, signaling socket and direct path log here too.
    public init(
        configuration: Configuration, store: InvisoStore? = nil,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        clock: any InvisoClock = SystemClock(), http: (any HTTPTransport)? = nil,
        signaling: (any SignalingConnector)? = nil,
        logger: Logger = Logger(label: "inviso.kit.chat")
    ) {
        self.init(
            configuration: configuration, store: store, random: random, clock: clock, http: http,
            signaling: signaling, logger: logger, frameTap: nil)
    }

    /// ``init(configuration:store:random:clock:http:signaling:logger:)`` with a frame tap
    /// (tests).
    package init(
        configuration: Configuration, store: InvisoStore?, random: some RandomNumberGenerator & Sendable,
        clock: any InvisoClock, http: (any HTTPTransport)?, signaling: (any SignalingConnector)? = nil,
        logger: Logger, frameTap: (@Sendable (ChatPath, [UInt8]) -> Void)?
    ) {
        self.executorLoop = Self.executorGroup.next()
        self.taskExecutor = EventLoopTaskExecutor(executorLoop)
        self.configuration = configuration
        self.files = FileTransferMachine(configuration: configuration.files)
        self.store = configuration.isEphemeral ? nil : store
        self.random = AnyGenerator(generator: random)
        self.clock = clock
        // One logger for everything the session does, so an app's handler and level (a chat
        // screen logs nothing; `--json` keeps standard output for events) cover the REST
        // calls and the signaling socket too.
        // REST on the client's own loop, like its sockets: the answer reaches the actor
        // without a thread switch, and a process with only clients never starts NIO's
        // shared group (two more threads at start-up).
        self.api = RoomAPI(
            transport: http ?? NIOHTTPTransport(endpoint: configuration.server, group: executorLoop, timeout: configuration.httpTimeout), logger: logger)
        self.signalingConnector = signaling
        self.logger = logger
        self.frameTap = frameTap
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (drainRequests, drainBell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: - Starting

    /// Creates a room and returns the v2 invite to give the peer (`NNNNNN-word-word-word`
    /// and its link). Then waits in the background for the peer to accept (a `watch_code`
    /// push, with `check` polling as a fallback), joins the room and pairs.
    ///
    /// - Throws: ``ChatError/wrongState`` unless idle, ``ChatError/server`` when the
    ///   server refuses or cannot be reached.
    public func invite() async throws(ChatError) -> Invite {
        try await invite(fixed: nil)
    }

    /// Like ``invite()``, but with an invite both sides derived (a call to a saved contact,
    /// ``ContactCall``): the room is created under its code.
    ///
    /// - Throws: As ``invite()``; ``ChatError/alreadyUsed`` when the code is taken (the
    ///   peer created the room first: join it instead).
    public func invite(fixed: Invite?) async throws(ChatError) -> Invite {
        guard state == .idle else { throw .wrongState }
        preState = .pending
        let device = newDeviceID()
        let expiry = max(1, min(86_400, Int(configuration.inviteExpiry / .seconds(1))))
        // The server picks the code of a new invite: proposing our own would let a taken
        // code's 409 tell us (or anyone) which codes are live. A call's code is derived.
        let created: RoomAPI.CreatedRoom
        do {
            created = try await api.createRoom(joinID: fixed?.joinCode, deviceID: device, expiresInSeconds: expiry)
        } catch {
            if preState != .closed { preState = .idle }
            if error == .codeTaken { throw ChatError(.alreadyUsed, "code taken") }
            throw ChatError(.server, error.description)
        }
        // Left while the request was under way.
        guard preState != .closed else { throw .closed }
        guard let invite = fixed ?? (try? Invite.generate(joinCode: created.joinID, using: &random.generator)) else {
            preState = .idle
            throw ChatError(.server, "no free join code")
        }
        joinCode = created.joinID
        let machine = ChatSessionMachine(
            role: .creator, invite: invite, roomID: nil, deviceID: device, staticKey: newStaticKey(),
            lifetime: initialLifetime, configuration: machineConfiguration, random: random.fork())
        do throws(ChatError) {
            try saveNewSession(machine, protocolVersion: 2)
        } catch {
            preState = .idle
            throw error
        }
        await begin(machine)
        let signaling = signaling!
        spawn { try? await signaling.watch(joinID: created.joinID, deviceID: device) }
        spawn { [weak self] in await self?.pollForAcceptance() }
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
        var invite: Invite?
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
        preState = .accepted
        let device = newDeviceID()
        let room: String
        do {
            room = try await api.accept(joinID: code, deviceID: device)
        } catch {
            if preState != .closed { preState = .idle }
            if error == .alreadyAccepted { throw ChatError(.alreadyUsed) }
            if error == .notFoundOrExpired { throw ChatError(.expired, error.description) }
            throw ChatError(.server, error.description)
        }
        // Left while the request was under way.
        guard preState != .closed else { throw .closed }
        joinCode = code
        let machine = ChatSessionMachine(
            role: .joiner, invite: invite, roomID: room, deviceID: device, staticKey: newStaticKey(),
            lifetime: initialLifetime, configuration: machineConfiguration, random: random.fork())
        do throws(ChatError) {
            try saveNewSession(machine, protocolVersion: invite == nil ? 1 : 2)
        } catch {
            preState = .idle
            throw error
        }
        await begin(machine)
        logger.info("invite accepted")
    }

    // MARK: - Messages

    /// Sends a text; see ``send(_:)``.
    @discardableResult
    public nonisolated func send(text: String) async throws(ChatError) -> UInt64 {
        try await send(.text(text))
    }

    /// Queues a message for the peer and returns its id (v2: its sequence number; v1:
    /// frame counter + 1 — both count from 1). It goes out as soon as the channel is up,
    /// and (v2) again after reconnects until the peer acks it (``ChatEvent/delivered(id:)``).
    ///
    /// - Throws: ``ChatError/closed`` after the session ended, ``ChatError/wrongState``
    ///   before ``invite()`` / ``join(_:)``, ``ChatError/outboxFull``.
    @discardableResult
    public nonisolated func send(_ payload: ChatPayload) async throws(ChatError) -> UInt64 {
        try await send(contentsOf: [payload]).lowerBound
    }

    /// Queues messages in order — all of them, or none — and returns their ids
    /// (consecutive).
    ///
    /// In a session that stores nothing (ephemeral, or no store) the call returns at once,
    /// without waiting for the client's event loop: the messages wait in a queue that the
    /// machine takes whole, in order, on its next step, so a caller sending one message
    /// per call from another thread costs no thread switch per message. In a stored
    /// session the call returns once the store holds the messages (they survive the
    /// process); a caller with many messages (a file's chunks, a pasted text) then sends
    /// them in one call, which saves once.
    ///
    /// - Throws: As ``send(_:)``; ``ChatError/outboxFull`` when the outbox cannot take
    ///   them all (nothing was queued).
    @discardableResult
    public nonisolated func send(contentsOf payloads: [ChatPayload]) async throws(ChatError) -> Range<UInt64> {
        guard store == nil else { return try await sendStored(payloads) }
        let (ids, scheduleDrain) = try submissions.withLock { queue throws(ChatError) in try queue.submit(payloads) }
        if scheduleDrain { drainBell.yield() }
        return ids
    }

    private func sendStored(_ payloads: [ChatPayload]) async throws(ChatError) -> Range<UInt64> {
        guard machine != nil else { throw state == .closed ? .closed : .wrongState }
        var ids = 0..<UInt64(0)
        let actions = try step { machine throws(ChatError) in
            let sent = try machine.send(contentsOf: payloads, at: now)
            ids = sent.ids
            return sent.actions
        }
        await perform(actions)
        return ids
    }

    // MARK: - Lifetimes

    /// Proposes a message lifetime to the peer (`lifetime_proposal`, as the app does); it
    /// applies once the peer accepts (``ChatEvent/lifetime(_:)``).
    ///
    /// - Throws: As ``send(_:)``.
    public func proposeLifetime(_ lifetime: MessageLifetime) async throws(ChatError) {
        guard machine != nil else { throw state == .closed ? .closed : .wrongState }
        await perform(try step { machine throws(ChatError) in try machine.proposeLifetime(lifetime, at: now) })
    }

    /// Accepts the peer's proposal (`lifetime_accept`) and applies it.
    ///
    /// - Throws: As ``send(_:)``.
    public func acceptLifetime(_ lifetime: MessageLifetime) async throws(ChatError) {
        guard machine != nil else { throw state == .closed ? .closed : .wrongState }
        await perform(try step { machine throws(ChatError) in try machine.acceptLifetime(lifetime, at: now) })
    }

    /// Rejects the peer's proposal (`lifetime_reject`).
    ///
    /// - Throws: As ``send(_:)``.
    public func rejectLifetime(reason: String? = nil) async throws(ChatError) {
        guard machine != nil else { throw state == .closed ? .closed : .wrongState }
        await perform(try step { machine throws(ChatError) in try machine.rejectLifetime(reason: reason, at: now) })
    }

    // MARK: - Session management

    /// Where the session is.
    public var state: ChatState { machine?.state ?? preState }

    /// The agreed message lifetime.
    public var lifetime: MessageLifetime { machine?.lifetime ?? initialLifetime }

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
    public var security: ChatSecurity? { machine?.security }

    /// The path messages are sent on.
    public var currentPath: ChatPath? { signaling == nil ? nil : machine?.currentPath }

    /// The 32-byte key that authenticates a direct connection, once the channel is up
    /// (`docs/protocol.md`, "Direct-path key").
    public var directPathKey: SecretBytes? { machine?.directPathKey }

    /// The room's id, once known (for the direct transport's binding).
    public var currentRoomID: String? { machine?.roomID }

    /// Whether this side created the room.
    public var isCreator: Bool { machine?.role == .creator }

    /// How many messages wait for the peer's ack.
    public var unacknowledgedCount: Int { (machine?.link.unacknowledgedCount ?? 0) + submittedCount }

    /// How many of our messages have not left for good yet: (v2) those the peer has not
    /// acknowledged, (v1) those sealed but not yet handed to a path. Zero means a `leave()`
    /// now loses nothing we could still deliver.
    public var undeliveredCount: Int { (machine?.undeliveredCount ?? 0) + submittedCount }

    /// Messages ``send(contentsOf:)`` accepted that the machine has not taken yet.
    private nonisolated var submittedCount: Int { submissions.withLock { $0.pending.count } }

    /// Where the driver is, for a test that timed out: the machine's state, each path's
    /// queue, the submissions not yet taken. No keys, ids or contents.
    var diagnostics: String {
        get async {
            let signalingState = await signaling?.diagnostics ?? "none"
            return localDiagnostics + " signaling: \(signalingState)"
        }
    }

    /// Counts of what the client did, for ``diagnostics``: frames queued, sent and received
    /// per path, timer wake-ups handled, signaling events, and when the machine last stepped.
    struct Counters: Sendable {
        var queued: [ChatSessionMachine.PathID: Int] = [:]
        var sent: [ChatSessionMachine.PathID: Int] = [:]
        var failedBatches: [ChatSessionMachine.PathID: Int] = [:]
        var received: [ChatSessionMachine.PathID: Int] = [:]
        var timerFires = 0
        var signalingEvents: [String: Int] = [:]
        var lastStep: ClockInstant?

        var description: String {
            func list(_ counts: [ChatSessionMachine.PathID: Int]) -> String {
                counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: " ")
            }
            let events = signalingEvents.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: " ")
            return "queued=[\(list(queued))] sent=[\(list(sent))] failedBatches=[\(list(failedBatches))] "
                + "received=[\(list(received))] timerFires=\(timerFires) signalingEvents=[\(events)] "
                + "lastStep=\(lastStep.map { "\($0)" } ?? "never")"
        }
    }

    private var localDiagnostics: String {
        let pathStates = paths.sorted { $0.key.rawValue < $1.key.rawValue }.map {
            "\($0.key.rawValue):queued=\($0.value.queued.count),sending=\($0.value.sending)"
        }
        return "state=\(state) path=\(machine.map { "\($0.currentPath)" } ?? "none") paths=[\(pathStates.joined(separator: " "))] "
            + "relayWaiters=\(relayBatchWaiters.count) submitted=\(submittedCount) running=\(jobs != nil) "
            + "timers=\(timers.armed.map { "\($0)" }.sorted()) now=\(clock.now) \(counters.description) "
            + "machine: \(machine?.diagnostics ?? "none")"
    }

    /// This session's device id (tests).
    var deviceID: String? { machine?.deviceID }

    /// The room id (tests).
    var roomID: String? { machine?.roomID }

    /// The direct attempt's phase (tests).
    var directPhase: ChatSessionMachine.DirectPhase { machine?.directPhase ?? .idle }

    /// Sends `transport_candidates` to the peer (for the direct transport).
    ///
    /// - Throws: ``ChatError/closed``, ``ChatError/wrongState`` before the room is joined.
    public func sendTransportCandidates(_ candidates: [TransportCandidates.Candidate]) async throws(ChatError) {
        guard machine != nil else { throw state == .closed ? .closed : .wrongState }
        await perform(try step { machine throws(ChatError) in try machine.sendTransportCandidates(candidates) })
    }

    /// The user compared the safety number with the peer's, out of band: the peer's pinned
    /// identity is marked verified in the store (a v1 session can be verified no other
    /// way; `inviso sessions` then shows it verified). Nothing is stored for an ephemeral
    /// session.
    ///
    /// - Throws: ``ChatError/wrongState`` before the secure channel is up,
    ///   ``ChatError/storage`` when the store fails.
    public func markVerified() async throws(ChatError) {
        guard let security = machine?.security else { throw .wrongState }
        guard let store, let sessionID else { return }
        await pinning?.value  // the pin with the digits is written first
        do {
            var pin = try store.pinnedIdentity(sessionID: sessionID) ?? PinnedIdentity(publicKey: Data(), isVerified: true)
            pin.isVerified = true
            pin.safetyNumber = security.safetyNumber
            try store.savePinnedIdentity(pin, sessionID: sessionID)
        } catch {
            throw ChatError(.storage, error.description)
        }
    }

    /// Leaves for good: `leave_room` (the peer sees ``ChatCloseReason/peerLeft``), the
    /// room deleted and this device ID purged on the server (best effort), the session's
    /// keys wiped in the store, ``ChatEvent/closed(_:)`` with ``ChatCloseReason/left``.
    /// No reconnect follows. Idempotent.
    public func leave() async {
        guard machine != nil else {
            closeIdle(.left)
            return
        }
        await perform(step { $0.leave() })
    }

    // MARK: - Helpers

    /// The machine's configuration from the client's.
    var machineConfiguration: ChatSessionMachine.Configuration {
        var machine = ChatSessionMachine.Configuration()
        machine.allowsV1Fallback = configuration.allowsV1Fallback
        machine.pairingTimeout = configuration.pairingTimeout
        machine.ackDelay = configuration.ackDelay
        machine.retransmitInterval = configuration.retransmitInterval
        machine.maxRetransmitInterval = configuration.maxRetransmitInterval
        machine.triesDirectPath = configuration.direct != nil
        machine.directCandidatesTimeout = configuration.directCandidatesTimeout
        machine.reliable = configuration.reliable
        machine.persists = store != nil
        if let call = configuration.contactCall {
            machine.expectedPeerIdentity = call.peer
            machine.allowsV1Fallback = false
        }
        return machine
    }

    var initialLifetime: MessageLifetime { configuration.isEphemeral ? .ephemeral : configuration.lifetime }

    /// The current time, for the machine.
    var now: ChatTime { ChatTime(clock) }

    /// A random version-4 UUID, uppercase as the app's.
    func newDeviceID() -> String {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.generator.next()) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Hex.encode(bytes).uppercased()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    func newStaticKey() -> NoiseKeyPair {
        let secret = configuration.contactCall?.identity ?? SecretBytes(randomCount: 32, using: &random.generator)
        do {
            return try secret.withUnsafeBytes { raw throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: raw) }
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
