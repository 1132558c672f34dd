import Foundation
import InvisoWire
import Logging
import Prometheus
import NIOCore
public import ServiceLifecycle
import Synchronization

/// The WebSocket signaling server: owns the ``SignalingState`` machine, the sockets'
/// writers and the link to other instances, and does the I/O the machine asks for.
///
/// Sockets call in from their event loops (``SignalingSocketHandler``). State changes
/// happen under one lock, without awaiting; the frames they produce are written after the
/// lock is released, without waiting either. What must wait — a store lookup, a publish
/// to other instances, a peer that is not reading — comes back as a ``Pending`` that the
/// socket runs before it handles its next message, so what one member sends reaches the
/// other in the order it was sent.
///
/// As a `Service`, ``run()`` consumes the bus and, on graceful shutdown, closes every
/// socket with 1001 (going away). Put it after the HTTP application in the service group
/// so it is shut down first.
public final class SignalingHub: Service, Sendable {
    struct Shared: Sendable {
        var machine: SignalingState
        var writers: [ConnectionID: SocketWriter] = [:]
        var nextID: UInt64 = 1

        /// The writer of the member a relay goes to, when it is local.
        func peerWriter(_ route: RelayRoute) -> SocketWriter? {
            guard case .local(let peer, _, _) = route else { return nil }
            return writers[peer]
        }

        /// The writer of the local member in seat `role` of `roomID`.
        func localWriter(roomID: String, role: RoomRole) -> SocketWriter? {
            machine.localMember(roomID: roomID, role: role).flatMap { writers[$0] }
        }
    }

    /// What a socket must wait for before it handles its next message.
    enum Pending: Sendable {
        /// Asynchronous work (a store lookup, a publish).
        case work(@Sendable () async -> Void)
        /// The peer's socket draining below its low-water mark.
        case peerWritable(SocketWriter)
    }

    private let shared: Mutex<Shared>
    /// The bound on bytes queued for all sockets' readers together.
    let outboundBudget: OutboundBudget
    private let store: any RoomStore
    private let bus: (any SignalingBus)?
    private let environment: ServerEnvironment
    private let metrics: ServerMetrics
    private let logger: Logger

    init(
        store: any RoomStore, bus: (any SignalingBus)?, limits: SignalingLimits, environment: ServerEnvironment,
        metrics: ServerMetrics, logger: Logger, maxQueuedBytesTotal: Int = .max
    ) {
        shared = Mutex(Shared(machine: SignalingState(limits: limits, clustered: bus != nil)))
        outboundBudget = OutboundBudget(limit: maxQueuedBytesTotal)
        self.store = store
        self.bus = bus
        self.environment = environment
        self.metrics = metrics
        self.logger = logger
    }

    /// The number of open sockets.
    public var connectionCount: Int { shared.withLock { $0.writers.count } }

    // MARK: - Sockets

    /// The writer of a new socket, bound by `maxQueuedBytes` and the hub's budget.
    func makeWriter(for channel: any Channel, maxQueuedBytes: Int) -> SocketWriter {
        let metrics = self.metrics
        let logger = self.logger
        return SocketWriter(channel: channel, maxQueuedBytes: maxQueuedBytes, budget: outboundBudget) {
            metrics.closed(.slowReader)
            logger.info("socket closed: reader too slow")
        }
    }

    /// Registers an upgraded socket and greets it with `connected`.
    func open(_ writer: SocketWriter) -> ConnectionID {
        let clientID = environment.randomUUID()
        let (id, greeting) = shared.withLock { shared in
            let id = ConnectionID(shared.nextID)
            shared.nextID += 1
            shared.writers[id] = writer
            return (id, resolve(shared.machine.open(id, clientID: clientID), in: shared))
        }
        metrics.connections.increment()
        logger.debug("socket opened", metadata: ["connection": "\(id)"])
        _ = perform(greeting)
        return id
    }

    /// A socket closed: its seat is freed and the other member told. Returns the publish
    /// to other instances, if any, for the caller to run.
    func closed(_ id: ConnectionID) -> (@Sendable () async -> Void)? {
        let actions = shared.withLock { shared -> [Resolved]? in
            guard shared.writers[id] != nil else { return nil }
            let actions = resolve(shared.machine.close(id), in: shared)
            shared.writers[id] = nil
            return actions
        }
        guard let actions else { return nil }
        metrics.connections.decrement()
        logger.debug("socket closed", metadata: ["connection": "\(id)"])
        guard case .work(let work)? = perform(actions) else { return nil }
        return work
    }

    /// Handles one text message. A relay — the hot path — takes the lock once: the rate
    /// limit and the route are decided together.
    func received(text frame: ByteBuffer, from id: ConnectionID) -> Pending? {
        let now = environment.now()
        let text = frame.readableBytesView
        let parsed = Result { () throws(SignalingError) in try ClientMessage.parse(text) }
        let (refused, route, writer): ([Resolved]?, RelayRoute?, SocketWriter?) = shared.withLock { shared in
            if let refused = shared.machine.admit(id, now: now) { return (resolve(refused, in: shared), nil, nil) }
            guard case .success(.relay) = parsed else { return (nil, nil, nil) }
            let route = shared.machine.route(from: id, now: now)
            return (nil, route, shared.peerWriter(route))
        }
        if let refused {
            metrics.rateLimited(.socket)
            return perform(refused)
        }
        let message: ClientMessage
        switch parsed {
        case .success(let parsed): message = parsed
        case .failure(let error):
            // Valid JSON is valid UTF-8; a text frame that is not UTF-8 fails the
            // connection with 1007 (RFC 6455 §8.1) instead of getting an error message.
            guard UTF8Validation.isValid(text) else {
                return perform(shared.withLock { resolve([.close(id, code: 1007, reason: "text frame is not UTF-8")], in: $0) })
            }
            return send(.error(error.message), to: id)
        }
        switch message {
        case .joinRoom(let roomID, let deviceID):
            return .work { await self.join(id, roomID: roomID, deviceID: deviceID) }
        case .leaveRoom:
            return apply { $0.leave(id) }
        case .relay(_, let object):
            guard let route else { return nil }
            return relay(object, text: text, route: route, writer: writer)
        case .ping:
            return send(.pong, to: id)
        case .pingPeer:
            return apply { $0.pingPeer(id) }
        case .watchCode(let joinID, let client1):
            return .work { await self.watch(id, joinID: joinID, client1: client1, now: now) }
        }
    }

    /// Handles one binary message: relayed as-is to the other member, within the room's quota.
    func received(binary: ByteBuffer, from id: ConnectionID) -> Pending? {
        let now = environment.now()
        let (route, writer, limit): (RelayRoute, SocketWriter?, ServerMetrics.Limit?) = shared.withLock { shared in
            if let refused = shared.machine.admit(id, now: now) { return (.refused(refused), nil, .socket) }
            let route = shared.machine.route(from: id, binaryBytes: binary.readableBytes, now: now)
            let overQuota = route == .refused([.send(id, .error(SignalingState.quotaText))])
            return (route, shared.peerWriter(route), overQuota ? .roomQuota : nil)
        }
        if let limit { metrics.rateLimited(limit) }
        switch route {
        case .local:
            guard let writer else { return nil }
            metrics.relayed(binaryBytes: binary.readableBytes)
            writer.send(binary: binary)
            return Self.waitIfBehind(writer)
        case .remote(let roomID, let role, _):
            metrics.relayed(binaryBytes: binary.readableBytes)
            return publish(.binary(roomID: roomID, to: role, frame: Array(buffer: binary)))
        case .refused(let actions):
            return perform(shared.withLock { resolve(actions, in: $0) })
        }
    }

    /// After a relay: wait for the peer when it has more queued than its high-water mark.
    private static func waitIfBehind(_ writer: SocketWriter) -> Pending? {
        writer.isWritable ? nil : .peerWritable(writer)
    }

    private func join(_ id: ConnectionID, roomID: String, deviceID: String) async {
        let room: Room?
        do {
            room = try await store.room(id: roomID)
        } catch {
            logger.error("room lookup failed", metadata: ["error": "\(error)"])
            return await run(send(.error("Server unavailable, try again"), to: id))
        }
        guard let room else { return await run(send(.error(ServerMessage.roomNotFoundText), to: id)) }
        let digest = DeviceDigest.of(deviceID)
        guard room.isMember(digest) else {
            logger.info("join refused: not a member", metadata: ["room": "\(Redact.room(roomID))"])
            return await run(send(.error(ServerMessage.notMemberText), to: id))
        }
        let role: RoomRole = digest == room.client1 ? .creator : .joiner
        logger.info(
            "joined", metadata: ["room": "\(Redact.room(roomID))", "device": "\(Redact.device(deviceID))", "role": "\(role)"])
        await run(apply { $0.join(id, roomID: roomID, deviceID: deviceID, role: role) })
        // A delete (or purge) that landed between the lookup and the seat found no one to
        // tell and would leave this device in a room that no longer exists: look again
        // now that it is seated, and end the room here as the delete would have.
        let stillThere: Bool
        do { stillThere = try await store.room(id: roomID) != nil } catch { stillThere = true }
        if !stillThere { await run(apply { $0.roomDeleted(roomID) }) }
    }

    private func relay(_ object: JSONObject, text: ByteBufferView, route: RelayRoute, writer: SocketWriter?) -> Pending? {
        switch route {
        case .local(_, let roomID, let from):
            guard let writer else { return nil }
            let frame = Self.forwarded(object, text: text, from: from, roomID: roomID)
            metrics.relayed(textBytes: frame.readableBytes)
            writer.send(text: frame)
            return Self.waitIfBehind(writer)
        case .remote(let roomID, let role, let from):
            let frame = Self.forwarded(object, text: text, from: from, roomID: roomID)
            metrics.relayed(textBytes: frame.readableBytes)
            return publish(.text(roomID: roomID, to: role, frame: Array(buffer: frame)))
        case .refused(let actions):
            return perform(shared.withLock { resolve(actions, in: $0) })
        }
    }

    /// The relayed frame: the sender's object with `from` and `roomId` set. When the
    /// sender did not include either key (every honest client), the original text is kept
    /// byte for byte and the two members are appended before its closing brace, which is
    /// what re-serializing would produce without the cost; otherwise the object is
    /// re-serialized with the sender's values overwritten.
    static func forwarded<Text: BidirectionalCollection<UInt8>>(
        _ object: JSONObject, text: Text, from: String, roomID: String
    ) -> ByteBuffer {
        var utf8 = text[...]
        while let last = utf8.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 { utf8 = utf8.dropLast() }
        guard object["from"] == nil, object["roomId"] == nil, utf8.last == UInt8(ascii: "}") else {
            return ByteBuffer(bytes: ServerMessage.relay(object, from: from, roomID: roomID).serialized())
        }
        let suffix = #","from":"# + JSONValue.string(from).jsonText + #","roomId":"# + JSONValue.string(roomID).jsonText + "}"
        var buffer = ByteBuffer()
        buffer.reserveCapacity(utf8.count + suffix.utf8.count)
        buffer.writeBytes(utf8.dropLast())
        buffer.writeString(suffix)
        return buffer
    }

    private func watch(_ id: ConnectionID, joinID: String, client1: String, now: Date) async {
        let outcome: CheckOutcome
        do {
            outcome = try await store.check(joinID: joinID, client1: DeviceDigest.of(client1), now: now)
        } catch {
            logger.error("code lookup failed", metadata: ["error": "\(error)"])
            return await run(send(.error("Server unavailable, try again"), to: id))
        }
        switch outcome {
        case .accepted(let roomID): await run(send(.roomAccepted(joinID: joinID, roomID: roomID), to: id))
        case .pending: await run(apply { $0.watch(id, joinID: joinID) })
        case .notFound: await run(send(.error("Code not found or expired"), to: id))
        }
        // An accept may have landed between the check and the watch: look again.
        if case .pending = outcome,
            case .accepted(let roomID)? = try? await store.check(joinID: joinID, client1: DeviceDigest.of(client1), now: now)
        {
            await run(apply { $0.codeAccepted(joinID: joinID, roomID: roomID) })
        }
    }

    // MARK: - Events from the REST API

    /// A code was accepted: push `room_accepted` to its watchers here and elsewhere.
    func codeAccepted(joinID: String, roomID: String) async {
        await run(apply { $0.codeAccepted(joinID: joinID, roomID: roomID) })
        await run(publish(.accepted(joinID: joinID, roomID: roomID)))
    }

    /// A room was deleted: its members lose their seats here and elsewhere.
    func roomDeleted(_ roomID: String) async {
        await run(apply { $0.roomDeleted(roomID) })
        await run(publish(.roomDeleted(roomID: roomID)))
    }

    /// Device IDs were purged.
    func devicesPurged(_ deviceIDs: [String]) async {
        await run(apply { $0.devicesPurged(Set(deviceIDs)) })
        await run(publish(.purged(deviceIDs: deviceIDs)))
    }

    // MARK: - Service

    /// Consumes the bus until graceful shutdown, then closes every socket with 1001.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            if let bus {
                group.addTask { await self.consume(bus) }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        let goodbyes = shared.withLock { resolve($0.machine.shutdown(), in: $0) }
        await run(perform(goodbyes))
    }

    private func consume(_ bus: any SignalingBus) async {
        for await message in bus.messages() {
            guard let event = BusEvent.decode(message.payload) else {
                logger.debug("ignored a malformed bus message")
                continue
            }
            switch event {
            case .text(let roomID, let role, let frame):
                shared.withLock({ $0.localWriter(roomID: roomID, role: role) })?.send(text: frame)
            case .binary(let roomID, let role, let frame):
                shared.withLock({ $0.localWriter(roomID: roomID, role: role) })?.send(binary: ByteBuffer(bytes: frame))
            default:
                await run(apply { $0.received(event, from: message.origin) })
            }
        }
    }

    // MARK: - Performing actions

    private enum Resolved {
        case send(SocketWriter, [UInt8])
        case close(SocketWriter, UInt16, String)
        case publish(BusEvent)
    }

    private func apply(_ change: (inout SignalingState) -> [SignalingAction]) -> Pending? {
        perform(shared.withLock { shared in resolve(change(&shared.machine), in: shared) })
    }

    private func send(_ message: ServerMessage, to id: ConnectionID) -> Pending? {
        perform(shared.withLock { resolve([.send(id, message)], in: $0) })
    }

    private func publish(_ event: BusEvent) -> Pending? {
        perform([.publish(event)])
    }

    /// Runs what an action left pending (from a task, where waiting is allowed).
    private func run(_ pending: Pending?) async {
        switch pending {
        case .work(let work)?: await work()
        case .peerWritable?, nil: break  // only a sender's own socket waits for its peer
        }
    }

    /// Maps connection ids to writers (under the lock).
    private func resolve(_ actions: [SignalingAction], in shared: Shared) -> [Resolved] {
        actions.compactMap { action in
            switch action {
            case .send(let id, let message): shared.writers[id].map { .send($0, message.serialized()) }
            case .close(let id, let code, let reason): shared.writers[id].map { .close($0, code, reason) }
            case .publish(let event): bus == nil ? nil : .publish(event)
            }
        }
    }

    /// Writes and closes at once; returns the publishes to other instances, in order, as
    /// one pending piece of work.
    private func perform(_ actions: [Resolved]) -> Pending? {
        var events: [BusEvent] = []
        for action in actions {
            switch action {
            case .send(let writer, let frame): writer.send(text: frame)
            case .close(let writer, let code, let reason): writer.close(code: code, reason: reason)
            case .publish(let event): events.append(event)
            }
        }
        guard let bus, !events.isEmpty else { return nil }
        let logger = self.logger
        return .work { [events] in
            for event in events {
                do {
                    try await bus.publish(event.encoded())
                } catch {
                    logger.warning("bus publish failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
