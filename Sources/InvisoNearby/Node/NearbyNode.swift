public import Foundation
import InvisoCrypto
import InvisoKit
public import InvisoStore
public import InvisoTime
public import NIOCore
import NIOPosix

/// The nearby chat's driver: listens on TCP, announces and finds people with DNS-SD, runs
/// a ``NearbyConnection`` per socket and a ``NearbyConversation`` per person, and keeps
/// identities, decisions, outboxes and history in the encrypted store. The protocol lives
/// in those machines; this actor only moves bytes and events between them, the sockets,
/// the daemon, the store and the user.
///
/// Policy:
/// - A request from a person accepted before is accepted at once; from a new person it is
///   reported (``NearbyEvent/request(_:)``) until the user answers; from a blocked one it
///   is refused.
/// - A person's identity is pinned, by name, on first contact. Someone presenting another
///   identity under a pinned name is refused (``NearbyEvent/identityChanged(name:pinned:presented:)``)
///   until the user trusts the new one.
/// - When a known person is seen again on the network, both sides dial, so that queued
///   messages go out without anyone asking (a daemon that never saw the person leave
///   reports nothing new on one side). When both connections open, both sides keep the
///   one the lower identity key dialled and close the other.
public actor NearbyNode {
    /// How the node runs.
    public struct Configuration: Sendable {
        /// The display name (and DNS-SD instance name).
        public var name: String
        /// The TCP port (0: any free port).
        public var port: Int = 0
        /// The address to listen on.
        public var host: String = "0.0.0.0"
        /// Whether to announce and browse with DNS-SD (off: `--peer` only).
        public var discovery = true
        /// How often expired messages are deleted while running.
        public var expirySweep: Duration = .seconds(30)
        /// Where received files go (created when the first file arrives).
        public var downloads: URL
        /// Files up to this size from verified people are accepted without asking.
        public var autoAcceptBytes: UInt64 = 10 * 1024 * 1024

        /// A configuration with a name and a downloads folder.
        public init(name: String, downloads: URL) {
            self.name = name
            self.downloads = downloads
        }
    }

    /// What the dialler expects, carried by the socket handler to ``Input/opened``.
    struct Dial: Sendable {
        var expectation: NearbyConnection.Expectation
        var label: String
    }

    /// A channel in a Sendable box (NIO channels are thread-safe).
    struct ChannelBox: @unchecked Sendable {
        // @unchecked: `any Channel` is Sendable in NIO; the box only avoids an existential warning.
        let channel: any Channel
        init(_ channel: any Channel) { self.channel = channel }
    }

    /// Everything that happens to the node from outside, in one ordered stream.
    enum Input: Sendable {
        case opened(ObjectIdentifier, ChannelBox, Dial?)
        case bytes(ObjectIdentifier, ByteBuffer)
        case socketClosed(ObjectIdentifier)
        case browse(DNSSDBrowseEvent)
        case resolved(DNSSDService, DNSSDResolution)
        /// Resolving a service again (after a failed dial) failed.
        case resolveFailed(DNSSDService)
        case address(DNSSDService, host: String, port: UInt16, txt: TXTRecord, address: [UInt8])
        case registered(Result<DNSSDService, DNSSDError>)
        case sweep
        /// A batch of chunk frames of a transfer with a person (by key) was written, or not.
        case chunksWritten(String, FileTransferID, generation: Int, written: Bool)
        /// The file stall timer armed for a person (by key) fired.
        case fileTimer(String, UInt64)
        /// Dialling `host:port` for `dial` failed with `reason`.
        case dialFailed(Dial, host: String, port: Int, reason: String)
    }

    struct Link {
        var machine: NearbyConnection
        let channel: any Channel
        var peerKey: String?
        let label: String
        /// The short fingerprint the dialler expected, if any.
        let expected: String?
    }

    struct Peer {
        var record: NearbyPeerRecord
        var conversation: NearbyConversation
        var link: ObjectIdentifier?
        var key: String { Hex.encode(record.identity) }
        var info: NearbyPeerInfo {
            NearbyPeerInfo(
                name: record.name, fingerprint: (try? NearbyPublicIdentity(record.identity))?.shortFingerprint ?? "",
                status: record.blocked ? .blocked : record.verified ? .verified : record.accepted ? .known : .new)
        }
    }

    private struct Discovered {
        var interfaces: Set<UInt32> = []
        /// The service as first browsed (to resolve it again).
        var service: DNSSDService?
        var host: String?
        var port: UInt16?
        var fingerprint: String?
        var address: [UInt8]?
        var reported = false
        /// A dial to the resolved address failed: resolving again, to dial once more if
        /// the address or port changed (`Input.dialFailed`).
        var redial: Dial?
    }

    /// The events, in order (one consumer).
    public nonisolated let events: AsyncStream<NearbyEvent>
    let emitContinuation: AsyncStream<NearbyEvent>.Continuation
    private let inputs: AsyncStream<Input>
    let inputContinuation: AsyncStream<Input>.Continuation

    let identity: NearbyIdentity
    let store: InvisoStore
    let clock: any InvisoClock
    let configuration: Configuration
    private let group: any EventLoopGroup
    private var registeredName: String
    private var serverChannel: (any Channel)?
    private var operations: [DNSSDOperation] = []
    private var pending: [String: [DNSSDOperation]] = [:]
    var links: [ObjectIdentifier: Link] = [:]
    var peers: [String: Peer] = [:]
    private var discovered: [String: Discovered] = [:]
    private var stopped = false
    /// The file transfers with each person, by key (`NearbyNode+Files`).
    var fileMachines: [String: FileTransferMachine] = [:]
    /// Files being sent, by transfer.
    var outgoingFiles: [FileTransferID: OutgoingFile] = [:]
    /// Files being received (accepted), by transfer.
    var incomingFiles: [FileTransferID: IncomingFile] = [:]
    /// Whom each open file is sent to or received from (a key).
    var transferPeers: [FileTransferID: String] = [:]
    /// The latest stall timer armed per person: an older one that fires is ignored.
    var fileTimerGenerations: [String: UInt64] = [:]
    /// Groups, by hex id.
    var groups: [String: NearbyGroup] = [:]

    /// A node for `identity`, keeping its state in `store`.
    public init(
        identity: NearbyIdentity, store: InvisoStore, configuration: Configuration, clock: any InvisoClock = SystemClock(),
        group: (any EventLoopGroup)? = nil
    ) throws(StoreError) {
        self.identity = identity
        self.store = store
        self.clock = clock
        self.configuration = configuration
        self.group = group ?? MultiThreadedEventLoopGroup.singleton
        registeredName = configuration.name
        (events, emitContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (inputs, inputContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        for stored in try store.nearbyRecords(kind: "peer") {
            guard let record = try? JSONDecoder().decode(NearbyPeerRecord.self, from: stored.value),
                let link = try? ReliableLink(restoring: record.link.snapshot)
            else { continue }
            let peer = Peer(
                record: record, conversation: NearbyConversation(lifetime: NearbyLifetime(rawValue: record.lifetime) ?? .never, link: link),
                link: nil)
            peers[peer.key] = peer
        }
        for stored in try store.nearbyRecords(kind: "group") {
            guard let snapshot = try? JSONDecoder().decode(NearbyGroup.Snapshot.self, from: stored.value),
                let group = try? NearbyGroup(snapshot: snapshot)
            else { continue }
            groups[stored.id] = group
        }
    }

    // MARK: - Identity in the store

    /// The identity kept in `store` (created on first use).
    public static func loadIdentity(from store: InvisoStore, now: Int64) throws -> NearbyIdentity {
        if let stored = try store.nearbyRecords(kind: "profile").first(where: { $0.id == "identity" }) {
            return try NearbyIdentity(rawPrivateKey: SecretBytes(stored.value))
        }
        let identity = NearbyIdentity()
        var raw = Data(count: 32)
        identity.rawPrivateKey.withUnsafeBytes { bytes in raw.withUnsafeMutableBytes { $0.copyMemory(from: bytes) } }
        defer { raw.resetBytes(in: 0..<raw.count) }
        try store.saveNearby(records: [NearbyStoredRecord(kind: "profile", id: "identity", updatedAt: now, value: raw)])
        return identity
    }

    // MARK: - Running

    /// Binds the listener, starts DNS-SD (unless disabled) and handles inputs until
    /// ``stop()``. Reports ``NearbyEvent/ready(name:port:fingerprint:)`` once listening.
    ///
    /// - Throws: when the port cannot be bound. A missing DNS-SD daemon is reported as an
    ///   ``NearbyEvent/error(_:)`` (the node still works with ``connect(host:port:)``).
    public func run() async throws {
        try restoreTransfers()
        let sink = inputContinuation
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NearbySocketHandler(dial: nil) { sink.yield($0) })
                }
            }
        let server = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        serverChannel = server
        let port = server.localAddress?.port ?? configuration.port
        sweep()
        emit(.ready(name: configuration.name, port: port, fingerprint: identity.publicKey.shortFingerprint))
        if configuration.discovery { startDiscovery(port: port) }
        let clock = self.clock
        let interval = configuration.expirySweep
        let ticker = Task {
            while !Task.isCancelled {
                try? await clock.sleep(for: interval)
                sink.yield(.sweep)
            }
        }
        defer { ticker.cancel() }
        for await input in inputs {
            handle(input)
            if stopped { break }
        }
    }

    /// Stops: closes every connection and the listener, withdraws the announcement.
    public func stop() {
        stopped = true
        for operation in operations { operation.cancel() }
        for (_, ops) in pending { ops.forEach { $0.cancel() } }
        operations = []
        for link in links.values { link.channel.close(promise: nil) }
        serverChannel?.close(promise: nil)
        inputContinuation.yield(.sweep)
        inputContinuation.finish()
        emitContinuation.finish()
    }

    private func startDiscovery(port: Int) {
        let sink = inputContinuation
        do {
            let txt = try TXTRecord([
                ("v", Array("1".utf8)), ("id", Array(identity.publicKey.shortFingerprint.utf8)),
                ("caps", Array(String(NearbyCapabilities.all.rawValue, radix: 16).utf8)),
            ])
            operations.append(try DNSSD.register(
                name: configuration.name, type: Self.serviceType, port: UInt16(port), txt: txt) { sink.yield(.registered($0)) })
            operations.append(try DNSSD.browse(type: Self.serviceType) { sink.yield(.browse($0)) })
        } catch let error as DNSSDError {
            emit(.error(error.description))
        } catch {
            emit(.error("DNS-SD: \(error)"))
        }
    }

    /// The DNS-SD service type.
    public static let serviceType = "_inviso._tcp"

    // MARK: - User commands

    /// Dials a person found on the network (by display name).
    public func connect(_ name: String) {
        guard let found = discovered[name], let address = found.address, let port = found.port else {
            return emit(.error("\(name) is not on the network (see /peers)"))
        }
        let expectation: NearbyConnection.Expectation
        if let pinned = peers.values.first(where: { $0.record.name == name && $0.record.accepted }) {
            expectation = .identity(NearbyPublicIdentity(unchecked: pinned.record.identity))
        } else if let fingerprint = found.fingerprint {
            expectation = .fingerprint(fingerprint)
        } else {
            expectation = .anyone
        }
        dial(host: address.map(String.init).joined(separator: "."), port: Int(port), expectation: expectation, label: name)
    }

    /// Dials `host:port` directly (no discovery needed).
    public func connect(host: String, port: Int) {
        dial(host: host, port: port, expectation: .anyone, label: "\(host):\(port)")
    }

    /// Accepts the pending request from `name` (or the only pending one for `nil`).
    public func accept(_ name: String?) {
        guard let id = pendingRequest(name) else { return emit(.error("no pending request\(name.map { " from \($0)" } ?? "")")) }
        if let key = links[id]?.peerKey { peers[key]?.record.accepted = true; save(key) }
        run(id) { $0.accept() }
    }

    /// Whether a connection request waits for the user.
    public var hasPendingRequest: Bool {
        links.values.contains { $0.machine.phase == .deciding && $0.peerKey != nil }
    }

    /// Rejects the pending request from `name` (or the only pending one).
    public func reject(_ name: String?) {
        guard let id = pendingRequest(name) else { return emit(.error("no pending request\(name.map { " from \($0)" } ?? "")")) }
        run(id) { $0.reject() }
    }

    /// Blocks `name`: its connections are closed and its requests refused.
    public func block(_ name: String) {
        guard let key = peerKey(named: name) else { return emit(.error("no one called \(name) has contacted you")) }
        peers[key]?.record.blocked = true
        peers[key]?.record.accepted = false
        save(key)
        if let link = peers[key]?.link { run(link) { $0.reject() } }
    }

    /// Trusts the identity `name` presents now, replacing the pinned one.
    public func trust(_ name: String) {
        let keys = peers.filter { $0.value.record.name == name }.map(\.key)
        for key in keys { peers[key] = nil }
        do {
            try store.saveNearby(records: [], deleting: keys.map { ("peer", $0) })
        } catch {
            emit(.error("the store failed: \(error)"))
        }
    }

    /// Sends `text` to `name` (queued while `name` is away).
    public func send(_ text: String, to name: String) {
        guard let key = peerKey(named: name), var peer = peers[key], peer.record.accepted else {
            return emit(.error("connect to \(name) first (/connect \(name))"))
        }
        let sentAt = UInt64(max(0, nowMilliseconds))
        do {
            var generator = SystemRandomNumberGenerator()
            let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let payload = NearbyPayload.text(try NearbyText(id: id, sentAt: sentAt, lifetime: peer.conversation.lifetime, body: text))
            let (seq, records) = try peer.conversation.enqueue(payload)
            peers[key] = peer
            save(key)
            storeMessage(peer: peer, direction: "out", seq: seq, text: text, sentAt: sentAt, lifetime: peer.conversation.lifetime)
            emit(.queued(to: peer.record.name, seq: seq, text: text, sentAt: sentAt))
            transmit(records, to: key)
        } catch {
            emit(.error("not sent: \(error)"))
        }
    }

    /// Proposes (or accepts) a lifetime for the conversation with `name`.
    public func setLifetime(_ lifetime: NearbyLifetime, for name: String) {
        guard let key = peerKey(named: name), var peer = peers[key] else { return emit(.error("no conversation with \(name)")) }
        do {
            let records = try peer.conversation.proposeLifetime(lifetime)
            peers[key] = peer
            save(key)
            if peer.conversation.lifetime == lifetime, peer.conversation.ourProposal == nil {
                emit(.lifetimeChanged(with: name, lifetime: lifetime))
            }
            transmit(records, to: key)
        } catch {
            emit(.error("not sent: \(error)"))
        }
    }

    /// Rejects the lifetime `name` proposed.
    public func rejectLifetime(from name: String) {
        guard let key = peerKey(named: name), var peer = peers[key] else { return }
        do {
            let records = try peer.conversation.answerLifetime(accept: false)
            peers[key] = peer
            save(key)
            transmit(records, to: key)
        } catch {
            emit(.error("not sent: \(error)"))
        }
    }

    /// Whether someone called `name` has talked with us.
    public func knows(_ name: String) -> Bool { peerKey(named: name) != nil }

    /// The lifetime of new messages with `name` (a person, else a group), if known.
    public func lifetime(with name: String) -> NearbyLifetime? {
        peerKey(named: name).flatMap { peers[$0]?.conversation.lifetime } ?? groupNamed(name)?.lifetime
    }

    /// The safety number with `name`, if we have talked.
    public func safetyNumber(with name: String) -> NearbySafetyNumber? {
        guard let key = peerKey(named: name), let peer = peers[key],
            let remote = try? NearbyPublicIdentity(peer.record.identity)
        else { return nil }
        return NearbySafetyNumber(local: identity.publicKey, remote: remote)
    }

    /// Marks `name` verified (after comparing safety numbers).
    public func markVerified(_ name: String) {
        guard let key = peerKey(named: name) else { return emit(.error("no one called \(name)")) }
        peers[key]?.record.verified = true
        save(key)
    }

    /// People found on the network and people known, with their status.
    public func people() -> [(info: NearbyPeerInfo, online: Bool, connected: Bool)] {
        var result: [(NearbyPeerInfo, Bool, Bool)] = []
        for (name, found) in discovered.sorted(by: { $0.key < $1.key }) where found.address != nil {
            if let peer = peers.values.first(where: { $0.record.name == name }) {
                result.append((peer.info, true, peer.link.map { links[$0]?.machine.phase == .open } ?? false))
            } else {
                result.append((NearbyPeerInfo(name: name, fingerprint: found.fingerprint ?? "?", status: .new), true, false))
            }
        }
        for peer in peers.values.sorted(by: { $0.record.name < $1.record.name }) where discovered[peer.record.name]?.address == nil {
            result.append((peer.info, false, peer.link.map { links[$0]?.machine.phase == .open } ?? false))
        }
        return result
    }

    /// A conversation's stored messages that have not expired: with a person, or (when no
    /// person has the name) a group's.
    public func history(with name: String) -> [(outgoing: Bool, from: String, seq: UInt64, text: String, sentAt: UInt64)] {
        let conversation: String
        if let key = peerKey(named: name) {
            conversation = key
        } else if let group = groupNamed(name) {
            conversation = Self.groupConversation(group)
        } else {
            return []
        }
        let rows = (try? store.nearbyMessages(conversation: conversation, now: nowMilliseconds)) ?? []
        return rows.compactMap { row in
            guard let message = try? JSONDecoder().decode(NearbyMessageRecord.self, from: row.value) else { return nil }
            let outgoing = message.direction == "out"
            return (outgoing, outgoing ? "you" : message.peer, message.seq, message.text, message.sentAt)
        }
    }

    // MARK: - Inputs

    private func handle(_ input: Input) {
        switch input {
        case .opened(let id, let box, let dial):
            let role: NearbyHandshake.Role = dial == nil ? .responder : .initiator
            do {
                let handshake = try NearbyHandshake(role: role, identity: identity, name: configuration.name)
                let machine = NearbyConnection(role: role, handshake: handshake, expecting: dial?.expectation ?? .anyone)
                let expected: String? = switch dial?.expectation {
                case .fingerprint(let short): short
                case .identity(let pinned): pinned.shortFingerprint
                default: nil
                }
                links[id] = Link(
                    machine: machine, channel: box.channel, peerKey: nil, label: dial?.label ?? "incoming", expected: expected)
                run(id) { $0.start() }
            } catch {
                box.channel.close(promise: nil)
            }
        case .bytes(let id, let bytes):
            run(id) { $0.receive(bytes.readableBytesView) }
            if let key = links[id]?.peerKey, var peer = peers[key], peer.link == id {
                let ack = peer.conversation.ackRecord()
                peers[key] = peer
                if !ack.isEmpty { save(key) }
                transmit(ack, to: key)
            }
        case .socketClosed(let id):
            run(id) { $0.disconnected() }
            links[id] = nil
        case .browse(let event): browse(event)
        case .resolved(let service, let resolution): resolved(service, resolution)
        case .resolveFailed(let service):
            guard discovered[service.name]?.redial != nil else { break }
            discovered[service.name]?.redial = nil
            emit(.error("could not reach \(service.name): it no longer resolves"))
        case .address(let service, let host, let port, let txt, let address): located(service, host: host, port: port, txt: txt, address: address)
        case .registered(.success(let service)):
            registeredName = service.name
            if service.name != configuration.name { emit(.error("the name \(configuration.name) is taken here: announced as \(service.name)")) }
        case .registered(.failure(let error)):
            emit(.error(error.description))
        case .sweep: sweep()
        case .chunksWritten(let key, let transfer, let generation, let written):
            chunksWritten(transfer, generation: generation, to: key, written: written)
        case .fileTimer(let key, let generation): fileTimerFired(key, generation: generation)
        case .dialFailed(let dial, let host, let port, let reason): dialFailed(dial, host: host, port: port, reason: reason)
        }
    }

    /// Runs a machine step for link `id` and carries out its actions.
    func run(_ id: ObjectIdentifier, _ step: (inout NearbyConnection) -> [NearbyConnection.Action]) {
        guard links[id] != nil else { return }
        // In place: a copy of the link would copy the machine's receive buffer on write.
        let actions = step(&links[id]!.machine)
        for action in actions { perform(action, on: id) }
    }

    private func perform(_ action: NearbyConnection.Action, on id: ObjectIdentifier) {
        guard let link = links[id] else { return }
        switch action {
        case .write(let bytes):
            link.channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        case .secured(let hello):
            secured(hello, on: id)
        case .opened:
            guard let key = link.peerKey, var peer = peers[key] else { return }
            if let old = peer.link, old != id, let oldLink = links[old], oldLink.machine.phase == .open {
                // Both sides dialled: keep the connection the lower identity dialled, on
                // both sides alike, and close the other.
                let weAreLower = identity.publicKey.bytes.lexicographicallyPrecedes(peer.record.identity)
                let newDialledByLower = (link.machine.role == .initiator) == weAreLower
                guard newDialledByLower else {
                    link.channel.close(promise: nil)
                    return
                }
                oldLink.channel.close(promise: nil)
            }
            peer.link = id
            peer.record.accepted = true
            let records = peer.conversation.connected()
            peers[key] = peer
            save(key)
            emit(.connected(peer.info))
            transmit(records, to: key)
            resumeTransfers(with: key)
        case .record(let record):
            guard let key = link.peerKey else { return }
            if peers[key]?.link == id, fileRecord(record, from: key) { return }
            received(record, from: key, on: id)
        case .chunk(let chunk):
            guard let key = link.peerKey else { return }
            guard peers[key]?.link == id else { return }
            fileChunk(chunk, from: key)
        case .closed(let reason):
            link.channel.close(promise: nil)
            guard let key = link.peerKey, var peer = peers[key] else {
                if case .identityChanged(let presented) = reason {
                    emit(.identityChanged(
                        name: link.label, pinned: link.expected ?? "?", presented: presented.shortFingerprint))
                } else if case .rejected = reason {
                    emit(.closed(peer: link.label, reason: "rejected"))
                }
                return
            }
            if peer.link == id {
                peer.link = nil
                peer.conversation.disconnected()
                peers[key] = peer
                save(key)
                emit(.closed(peer: peer.record.name, reason: Self.describe(reason)))
            } else if case .rejected = reason {
                emit(.closed(peer: peer.record.name, reason: "rejected"))
            }
        }
    }

    private static func describe(_ reason: NearbyConnection.CloseReason) -> String {
        switch reason {
        case .rejected: "rejected"
        case .local: "closed"
        case .identityChanged: "identityChanged"
        case .failed(let error): "failed (\(error.code))"
        case .disconnected: "disconnected"
        }
    }

    private func secured(_ hello: NearbyHello, on id: ObjectIdentifier) {
        let key = Hex.encode(hello.identity.bytes)
        // A pinned name presenting another identity is refused.
        if let pinned = peers.values.first(where: { $0.record.name == hello.name && $0.key != key && $0.record.accepted }) {
            let pinnedFingerprint = pinned.info.fingerprint
            links[id]?.peerKey = nil
            run(id) { $0.reject() }
            return emit(.identityChanged(name: hello.name, pinned: pinnedFingerprint, presented: hello.identity.shortFingerprint))
        }
        if peers[key] == nil {
            let record = NearbyPeerRecord(
                identity: hello.identity.bytes, name: hello.name, accepted: false, verified: false, blocked: false,
                lifetime: 0, link: .init(ReliableLink().snapshot))
            peers[key] = Peer(record: record, conversation: NearbyConversation(), link: nil)
        } else if peers[key]?.record.name != hello.name {
            peers[key]?.record.name = hello.name
        }
        links[id]?.peerKey = key
        guard let peer = peers[key], let link = links[id] else { return }
        if peer.record.blocked {
            return run(id) { $0.reject() }
        }
        guard link.machine.phase == .deciding else { return }  // we dialled: the answer will come
        if peer.record.accepted {
            run(id) { $0.accept() }
        } else {
            save(key)
            emit(.request(peer.info))
        }
    }

    private func received(_ record: NearbyRecord, from key: String, on id: ObjectIdentifier) {
        guard var peer = peers[key], peer.link == id else { return }
        do {
            let (received, replies) = try peer.conversation.receive(record)
            peers[key] = peer
            if let delivered = received.delivered { emit(.delivered(to: peer.record.name, seqs: delivered)) }
            for (seq, payload) in received.deliveries {
                switch payload {
                case .text(let text):
                    let expiresAt = storeMessage(
                        peer: peer, direction: "in", seq: seq, text: text.body, sentAt: text.sentAt, lifetime: text.lifetime)
                    emit(.message(from: peer.record.name, seq: seq, text: text.body, sentAt: text.sentAt, expiresAt: expiresAt))
                case .lifetimeProposal(let lifetime):
                    if received.lifetimeAgreed == nil { emit(.lifetimeProposed(by: peer.record.name, lifetime: lifetime)) }
                case .fileOffer, .fileAnswer, .fileComplete, .fileDigest, .fileCancel:
                    filePayload(payload, from: key)
                case .groupUpdate, .groupMessage, .groupLeave:
                    groupPayload(payload, from: key)
                default: break
                }
            }
            if let agreed = received.lifetimeAgreed { emit(.lifetimeChanged(with: peer.record.name, lifetime: agreed)) }
            save(key)
            transmit(replies, to: key)
        } catch {
            emit(.error("\(peer.record.name) sent something invalid; connection closed"))
            run(id) { $0.reject() }
        }
    }

    func transmit(_ records: [NearbyRecord], to key: String) {
        guard !records.isEmpty, let id = peers[key]?.link else { return }
        for record in records { run(id) { $0.send(record) } }
    }

    @discardableResult
    private func storeMessage(peer: Peer, direction: String, seq: UInt64, text: String, sentAt: UInt64, lifetime: NearbyLifetime) -> UInt64? {
        storeMessage(
            NearbyMessageRecord(direction: direction, peer: peer.record.name, seq: seq, text: text, sentAt: sentAt),
            conversation: peer.key, id: "\(direction)-\(seq)", lifetime: lifetime)
    }

    /// Stores a message of `conversation` (a person's key or a group's) under `id`, to
    /// expire after `lifetime`; returns when it expires (ms since 1970), if it does.
    @discardableResult
    func storeMessage(_ record: NearbyMessageRecord, conversation: String, id: String, lifetime: NearbyLifetime) -> UInt64? {
        let now = nowMilliseconds
        let expiresAt: Int64? = lifetime == .never ? nil : now + Int64(lifetime.seconds) * 1000
        do {
            try store.addNearbyMessage(NearbyStoredMessage(
                conversation: conversation, id: id, storedAt: now, expiresAt: expiresAt, value: try JSONEncoder().encode(record)))
        } catch {
            emit(.error("the store failed: \(error)"))
        }
        return expiresAt.map { UInt64($0) }
    }

    func save(_ key: String) {
        guard var peer = peers[key] else { return }
        peer.record.lifetime = peer.conversation.lifetime.rawValue
        peer.record.link = .init(peer.conversation.linkSnapshot)
        peers[key] = peer
        persist(peer.record, kind: "peer", id: key)
    }

    /// Writes `value` as the store's record `kind`/`id` (a failure is reported, not thrown).
    func persist(_ value: some Encodable, kind: String, id: String) {
        do {
            let encoded = try JSONEncoder().encode(value)
            try store.saveNearby(records: [NearbyStoredRecord(kind: kind, id: id, updatedAt: nowMilliseconds, value: encoded)])
        } catch {
            emit(.error("the store failed: \(error)"))
        }
    }

    /// Deletes the store's record `kind`/`id` (best effort: a record left over is dropped
    /// when it no longer loads).
    func forget(kind: String, id: String) {
        try? store.saveNearby(records: [], deleting: [(kind, id)])
    }

    private func sweep() {
        let now = nowMilliseconds
        do {
            try store.deleteExpiredNearbyMessages(now: now)
        } catch {
            emit(.error("the store failed: \(error)"))
        }
    }

    private func pendingRequest(_ name: String?) -> ObjectIdentifier? {
        let deciding = links.filter { $0.value.machine.phase == .deciding && $0.value.peerKey != nil }
        if let name {
            return deciding.first { peers[$0.value.peerKey!]?.record.name == name }?.key
        }
        return deciding.count == 1 ? deciding.first?.key : nil
    }

    func peerKey(named name: String) -> String? {
        peers.values.first { $0.record.name == name }?.key
    }

    private func dial(host: String, port: Int, expectation: NearbyConnection.Expectation, label: String) {
        let sink = inputContinuation
        let dial = Dial(expectation: expectation, label: label)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NearbySocketHandler(dial: dial) { sink.yield($0) })
                }
            }
        bootstrap.connect(host: host, port: port).whenFailure { error in
            sink.yield(.dialFailed(dial, host: host, port: port, reason: "\(error)"))
        }
    }

    /// A dial failed. For a service found on the network, its announcement may have
    /// changed without a removal reaching us (a peer that restarted on another port while
    /// its goodbye was lost): resolve it again, once, and dial again if the address moved.
    private func dialFailed(_ dial: Dial, host: String, port: Int, reason: String) {
        guard var found = discovered[dial.label], found.redial == nil, let service = found.service,
            found.port.map(Int.init) == port
        else {
            return emit(.error("could not reach \(dial.label): \(reason)"))
        }
        found.redial = dial
        discovered[dial.label] = found
        let sink = inputContinuation
        do {
            let operation = try DNSSD.resolve(service) { result in
                switch result {
                case .success(let resolution): sink.yield(.resolved(service, resolution))
                case .failure: sink.yield(.resolveFailed(service))
                }
            }
            pending[service.name, default: []].append(operation)
        } catch {
            found.redial = nil
            discovered[dial.label] = found
            emit(.error("could not reach \(dial.label): \(reason)"))
        }
    }

    /// The injected clock's wall time, in milliseconds since 1970.
    var nowMilliseconds: Int64 { Int64((clock.wallClock.timeIntervalSince1970 * 1000).rounded()) }

    func emit(_ event: NearbyEvent) {
        emitContinuation.yield(event)
    }

    // MARK: - Discovery

    private func browse(_ event: DNSSDBrowseEvent) {
        switch event {
        case .added(let service):
            guard service.name != registeredName else { return }
            var found = discovered[service.name] ?? Discovered()
            let first = found.interfaces.isEmpty
            found.interfaces.insert(service.interfaceIndex)
            if first { found.service = service }
            discovered[service.name] = found
            guard first else { return }
            let sink = inputContinuation
            do {
                let operation = try DNSSD.resolve(service) { result in
                    if case .success(let resolution) = result { sink.yield(.resolved(service, resolution)) }
                }
                pending[service.name, default: []].append(operation)
            } catch {
                emit(.error(error.description))
            }
        case .removed(let service):
            guard var found = discovered[service.name] else { return }
            found.interfaces.remove(service.interfaceIndex)
            if found.interfaces.isEmpty {
                discovered[service.name] = nil
                pending.removeValue(forKey: service.name)?.forEach { $0.cancel() }
                if found.reported { emit(.peerLost(name: service.name)) }
            } else {
                discovered[service.name] = found
            }
        case .failed(let error):
            emit(.error(error.description))
        }
    }

    private func resolved(_ service: DNSSDService, _ resolution: DNSSDResolution) {
        guard discovered[service.name] != nil else { return }
        let txt = (try? TXTRecord(decoding: resolution.txt)) ?? TXTRecord()
        guard txt.string(for: "v") == "1" else {
            if discovered[service.name]?.redial != nil {
                discovered[service.name]?.redial = nil
                emit(.error("could not reach \(service.name): it no longer announces Inviso version 1"))
            }
            return
        }
        let sink = inputContinuation
        pending[service.name]?.forEach { $0.cancel() }
        do {
            let operation = try DNSSD.queryIPv4(host: resolution.hostTarget, interfaceIndex: resolution.interfaceIndex) { result in
                if case .success(let address) = result {
                    sink.yield(.address(service, host: resolution.hostTarget, port: resolution.port, txt: txt, address: address))
                }
            }
            pending[service.name] = [operation]
        } catch {
            emit(.error(error.description))
        }
    }

    private func located(_ service: DNSSDService, host: String, port: UInt16, txt: TXTRecord, address: [UInt8]) {
        guard var found = discovered[service.name] else { return }
        pending.removeValue(forKey: service.name)?.forEach { $0.cancel() }
        let redial = found.redial
        let moved = found.port != port || found.address != address
        found.redial = nil
        found.host = host
        found.port = port
        found.address = address
        if let redial {
            // Resolved again after a failed dial: dial once more only if it moved.
            discovered[service.name] = found
            if moved {
                dial(host: address.map(String.init).joined(separator: "."), port: Int(port), expectation: redial.expectation, label: redial.label)
            } else {
                emit(.error("could not reach \(service.name): it does not answer at its announced address"))
            }
            return
        }
        found.fingerprint = txt.string(for: "id")
        let firstReport = !found.reported
        found.reported = true
        discovered[service.name] = found
        guard firstReport else { return }
        // Known by name, or (someone a group introduced) by the advertised fingerprint.
        let known = peers.values.first { $0.record.name == service.name }
            ?? peers.values.first { $0.record.accepted && $0.info.fingerprint == found.fingerprint }
        emit(.peerFound(known?.info ?? NearbyPeerInfo(name: service.name, fingerprint: found.fingerprint ?? "?", status: .new)))
        // A known person is back: dial, so that queued messages go out. Both may dial at
        // once; the connection the lower identity dialled is kept (see `.opened`).
        if let known, known.record.accepted, !known.record.blocked, known.link == nil {
            dial(known, at: service.name)
        }
    }

    /// Dials a known person at the service `name`, expecting its pinned identity.
    func dial(_ peer: Peer, at name: String) {
        guard let found = discovered[name], let address = found.address, let port = found.port else { return }
        dial(
            host: address.map(String.init).joined(separator: "."), port: Int(port),
            expectation: .identity(NearbyPublicIdentity(unchecked: peer.record.identity)), label: name)
    }

    /// People a group's creator introduced: pinned and accepted (as the creator vouched for
    /// them), named by fingerprint until their hello says their name, and dialled when
    /// they are on the network.
    func introduce(_ members: [NearbyPublicIdentity]) {
        for member in members where member != identity.publicKey {
            let key = Hex.encode(member.bytes)
            guard peers[key] == nil else { continue }
            let record = NearbyPeerRecord(
                identity: member.bytes, name: member.shortFingerprint, accepted: true, verified: false, blocked: false,
                lifetime: 0, link: .init(ReliableLink().snapshot))
            peers[key] = Peer(record: record, conversation: NearbyConversation(), link: nil)
            save(key)
            if let name = discovered.first(where: { $0.value.fingerprint == member.shortFingerprint && $0.value.address != nil })?.key,
                let peer = peers[key]
            {
                dial(peer, at: name)
            }
        }
    }
}
