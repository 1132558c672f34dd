import Crypto
import InvisoCrypto
public import InvisoNoise

/// The protocol logic of one mesh node, as a value-type state machine: bytes in from
/// links, bytes out to links, events for the user. It composes the ``MeshRouter``
/// (relaying, routes, acknowledgements, gossip sync, spool), the ``MeshSessions`` (Noise
/// with each peer), the ``PrivateOutbox`` (private messages until acknowledged end to
/// end), the ``Reassembler`` and the table of announced peers. It does no I/O and reads
/// no clock: ``MeshNode`` (an actor over UDP) and tests drive it.
///
/// Trust rules:
/// - A peer is known from a signed announcement whose Noise key hashes to the sender ID
///   and whose signature verifies with the signing key it carries. The first key pair
///   seen for a peer ID is pinned; an announcement with other keys is rejected.
/// - Public messages must be signed by their sender's pinned key. Messages from a peer not
///   announced yet wait (bounded) for its announcement.
/// - Private messages travel inside the Noise session, which binds the peer's static key
///   to its ID.
public struct MeshNodeCore: Sendable {
    /// Timing and bounds.
    public struct Configuration: Sendable {
        /// How often this node announces itself, in milliseconds.
        public var announceInterval: UInt64 = 10_000
        /// How long a peer counts as present after its last announcement, in milliseconds.
        public var presenceTimeout: UInt64 = 35_000
        /// The router's parameters.
        public var router = MeshRouter.Configuration()
        /// The outbox's bounds.
        public var outbox = PrivateOutbox.Limits()
        /// Packets from not-yet-announced senders kept for verification.
        public var unverifiedLimit = 256

        /// The defaults above.
        public init() {}
    }

    /// A peer as the user sees it.
    public struct Peer: Sendable, Hashable {
        /// Its peer ID.
        public var id: PeerID
        /// The nickname of its latest announcement.
        public var nickname: String
        /// SHA-256 of its Noise static key, hex.
        public var fingerprint: String
        /// Its Noise static key.
        public var noiseKey: [UInt8]
        /// Its announcement signing key.
        public var signingKey: [UInt8]
        /// When it last announced itself (ms).
        public var lastSeen: UInt64
    }

    /// What happened, for the user.
    public enum Event: Sendable, Hashable {
        /// A peer announced itself for the first time, or changed its nickname.
        case peer(Peer)
        /// A public message. `hops` is how many links it crossed (1 from a neighbour) as
        /// its TTL tells (BitChat packets carry no hop counter): `nil` when it arrived by
        /// gossip sync, and an underestimate when a relay on the way got its copy by
        /// gossip sync, since such a relay restarts the TTL.
        case publicMessage(from: Peer, text: String, hops: Int?, id: String)
        /// A private message for this node, authenticated by the Noise session.
        case privateMessage(from: Peer?, peerID: PeerID, text: String, id: String)
        /// The recipient acknowledged a private message end to end.
        case delivered(id: String, to: PeerID)
        /// A private message was given up (24 h, 8 sends, or pushed out of a full outbox).
        case undeliverable(id: String, to: PeerID)
        /// Something was refused (a forged announcement, a bad signature); no secrets in the text.
        case refused(String)
    }

    /// What the owner must do.
    public enum Action: Sendable, Equatable {
        /// Send this frame on this link (``MeshLink/send(_:)``; a link that carries bytes
        /// encodes it with ``MeshFrame/datagrams(to:timestamp:hopCounts:)``).
        case send(MeshFrame, link: LinkID)
        /// Tell the user.
        case event(Event)
    }

    /// The node's identity.
    public let identity: MeshIdentity
    /// The node's nickname.
    public private(set) var nickname: String
    private let configuration: Configuration
    private var router: MeshRouter
    private var sessions: MeshSessions
    private var outbox: PrivateOutbox
    private var reassembler = Reassembler()
    private var peers: [PeerID: Peer] = [:]
    private var linkPeers: [LinkID: PeerID] = [:]
    private var unverified: [(MeshPacket, PacketID)] = []
    private var receivedPrivate: [String] = []
    private var receivedPrivateSet: Set<String> = []
    private var nextAnnounce: UInt64 = 0
    private var random: MeshRandom

    /// Creates a node.
    /// - Parameters:
    ///   - identity: its keys.
    ///   - nickname: the name it announces.
    ///   - seed: seeds relay jitter and fragment IDs (tests pass a fixed one).
    ///   - ephemeralGenerator: Noise ephemeral keys (inject for determinism).
    ///   - outbox: messages restored from the node's sealed file.
    public init(
        identity: MeshIdentity, nickname: String, configuration: Configuration = Configuration(), seed: UInt64,
        ephemeralGenerator: @escaping @Sendable () -> NoiseKeyPair = NoiseKeyPair.generate,
        outbox: [PrivateOutbox.Entry] = []
    ) {
        self.identity = identity
        self.nickname = nickname
        self.configuration = configuration
        self.router = MeshRouter(localID: identity.peerID, configuration: configuration.router, seed: seed)
        self.sessions = MeshSessions(identity: identity.noiseKey, ephemeralGenerator: ephemeralGenerator)
        self.outbox = PrivateOutbox(limits: configuration.outbox, restoring: outbox)
        self.random = MeshRandom(seed: seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The peers that announced themselves, by nickname then ID.
    public var knownPeers: [Peer] { peers.values.sorted { ($0.nickname, $0.id) < ($1.nickname, $1.id) } }

    /// The peers heard from within the presence timeout.
    public func presentPeers(now: UInt64) -> [Peer] {
        knownPeers.filter { now < $0.lastSeen &+ configuration.presenceTimeout }
    }

    /// The private messages still waiting for acknowledgement (to persist them sealed).
    public var pendingPrivateMessages: [PrivateOutbox.Entry] { outbox.entries }

    /// The earliest time ``tick(now:)`` has work.
    public var nextDeadline: UInt64 {
        let outboxDeadline = outbox.nextDeadline(sendableTo: { sessions.isEstablished(with: $0) })
        return [router.nextDeadline?.milliseconds, outboxDeadline, sessions.nextDeadline].compactMap { $0 }
            .reduce(nextAnnounce, min)
    }

    /// The router's counters.
    public var statistics: MeshRouter.Statistics { router.statistics }

    // MARK: - Links

    /// A link came up (a neighbour was heard from or configured).
    public mutating func linkUp(_ link: LinkID, now: UInt64) -> [Action] {
        var actions = perform(router.linkUp(link, peer: linkPeers[link], now: MeshTime(milliseconds: now)), now: now)
        // Introduce ourselves to the new neighbour at once.
        nextAnnounce = now
        actions += tick(now: now)
        return actions
    }

    /// A link went down.
    public mutating func linkDown(_ link: LinkID, now: UInt64) -> [Action] {
        linkPeers[link] = nil
        return perform(router.linkDown(link, now: MeshTime(milliseconds: now)), now: now)
    }

    // MARK: - Input

    /// Bytes received on a link. Malformed bytes are dropped without a state change.
    public mutating func receive(_ bytes: [UInt8], on link: LinkID, now: UInt64) -> [Action] {
        guard let frame = try? MeshFrame(decoding: bytes) else { return [] }
        return receive(frame, on: link, now: now)
    }

    /// A frame received on a link.
    public mutating func receive(_ frame: MeshFrame, on link: LinkID, now: UInt64) -> [Action] {
        if case .packet(let packet, _, _, _) = frame, packet.type == .announce, packet.ttl >= configuration.router.originTTL,
            linkPeers[link] == nil
        {
            // An announcement that crossed no relay names the neighbour on this link.
            linkPeers[link] = packet.senderID
        }
        return perform(router.receive(frame, on: link, now: MeshTime(milliseconds: now)), now: now)
    }

    /// The neighbour on `link`, once an announcement that crossed no relay named it (links
    /// address REQUEST_SYNCs and acknowledgements to it).
    public func neighbour(on link: LinkID) -> PeerID? { linkPeers[link] }

    /// Sends a public message to everyone.
    /// - Throws: ``MeshWireError`` when the text is too long for one message.
    public mutating func sendPublic(_ text: String, now: UInt64) throws(MeshWireError) -> [Action] {
        let id = randomID()
        let message = ChatMessage(id: id, sender: nickname, content: text, timestamp: now, senderPeerID: identity.peerID.description)
        return try originate(type: .message, payload: try message.encoded(), recipient: nil, now: now)
    }

    /// Queues a private message for `peer`; it is sent once a Noise session exists and
    /// resent until acknowledged (see ``PrivateOutbox``).
    /// - Returns: the message ID and the actions.
    /// - Throws: ``MeshWireError`` when the text is longer than 255 bytes.
    public mutating func sendPrivate(_ text: String, to peer: PeerID, now: UInt64) throws(MeshWireError) -> (id: String, actions: [Action]) {
        let id = randomID()
        let payload = NoisePayload(type: .privateMessage, data: try PrivateMessagePacket(messageID: id, content: text).encoded())
        var actions: [Action] = []
        if let dropped = outbox.enqueue(id: id, payload: payload.encoded(), for: peer, now: now) {
            actions.append(.event(.undeliverable(id: dropped.id, to: dropped.peer)))
        }
        actions += pump(peer, now: now)
        return (id, actions)
    }

    /// Timers: relays, retries, sync, announcements, resends, expiries.
    public mutating func tick(now: UInt64) -> [Action] {
        var actions = perform(router.tick(now: MeshTime(milliseconds: now)), now: now)
        _ = sessions.tick(now: now)
        reassembler.removeExpired(now: now)
        for entry in outbox.expire(now: now) {
            actions.append(.event(.undeliverable(id: entry.id, to: entry.peer)))
        }
        if now >= nextAnnounce {
            nextAnnounce = now &+ configuration.announceInterval
            actions += (try? announce(now: now)) ?? []
        }
        for peer in Set(outbox.entries.map(\.peer)).sorted() {
            actions += pump(peer, now: now)
        }
        return actions
    }

    // MARK: - Originating

    private mutating func announce(now: UInt64) throws(MeshWireError) -> [Action] {
        let announcement = IdentityAnnouncement(
            nickname: nickname, noisePublicKey: identity.noiseKey.publicKey, signingPublicKey: identity.signingPublicKey)
        return try originate(type: .announce, payload: try announcement.encoded(), recipient: nil, now: now)
    }

    /// Signs a new packet from this node and hands it (or its fragments) to the router.
    private mutating func originate(type: MessageType, payload: [UInt8], recipient: PeerID?, now: UInt64) throws(MeshWireError) -> [Action] {
        var packet = MeshPacket(
            type: type, ttl: configuration.router.originTTL, timestamp: now, senderID: identity.peerID,
            recipientID: recipient, payload: payload)
        try packet.sign(using: identity.signingKey)
        let encoded = try packet.encoded()
        guard Fragmenter.needsFragmentation(encodedSize: encoded.count) else {
            return perform(router.originate(packet, now: MeshTime(milliseconds: now)), now: now)
        }
        var actions: [Action] = []
        for var fragment in try Fragmenter().fragments(of: packet, encoded: encoded, fragmentID: random.next()) {
            try fragment.sign(using: identity.signingKey)
            actions += perform(router.originate(fragment, now: MeshTime(milliseconds: now)), now: now)
        }
        return actions
    }

    /// Sends what the outbox has due for `peer`, or starts the handshake it needs.
    private mutating func pump(_ peer: PeerID, now: UInt64) -> [Action] {
        guard sessions.isEstablished(with: peer) else {
            guard peers[peer] != nil else { return [] }  // wait for its announcement
            return sessionActions(sessions.initiate(with: peer, now: now), now: now)
        }
        var actions: [Action] = []
        for entry in outbox.due(now: now, for: peer) {
            guard let sealed = try? sessions.seal(entry.payload, for: peer) else { continue }
            actions += (try? originate(type: .noiseEncrypted, payload: sealed, recipient: peer, now: now)) ?? []
        }
        return actions
    }

    private mutating func sessionActions(_ sessionActions: [MeshSessions.Action], now: UInt64) -> [Action] {
        var actions: [Action] = []
        for action in sessionActions {
            switch action {
            case .sendHandshake(let peer, let bytes):
                actions += (try? originate(type: .noiseHandshake, payload: bytes, recipient: peer, now: now)) ?? []
            case .established(let peer, _):
                outbox.peerAppeared(peer, now: now)
                actions += pump(peer, now: now)
            }
        }
        return actions
    }

    // MARK: - Router actions

    private mutating func perform(_ routerActions: [MeshRouter.Action], now: UInt64) -> [Action] {
        var actions: [Action] = []
        for action in routerActions {
            switch action {
            case .transmit(let packet, let id, let links, let hops):
                actions += links.map { .send(.packet(packet, id: id, hops: hops), link: $0) }
            case .transmitWithAcknowledgements(let packet, let id, let link, let hops, let acknowledgements):
                actions.append(.send(.packet(packet, id: id, hops: hops, acknowledgements: acknowledgements), link: link))
            case .sendSyncRequest(let request, let link):
                actions.append(.send(.syncRequest(request), link: link))
            case .sendAcknowledgement(let ack, let link):
                actions.append(.send(.acknowledgement(ack), link: link))
            case .deliver(let packet, let id):
                actions += deliver(packet, id: id, now: now)
            case .report, .schedule:
                break  // end-to-end receipts drive the outbox; the owner polls nextDeadline
            }
        }
        return actions
    }

    // MARK: - Delivery

    private mutating func deliver(_ packet: MeshPacket, id: PacketID, now: UInt64) -> [Action] {
        guard packet.senderID != identity.peerID else { return [] }
        switch packet.type {
        case .fragment:
            guard packet.isBroadcast || packet.recipientID == identity.peerID,
                let bytes = try? reassembler.receive(packet, now: now), let whole = try? MeshPacket.decode(bytes),
                whole.senderID == packet.senderID
            else { return [] }
            return deliver(whole, id: PacketID(whole), now: now)
        case .announce:
            return announced(packet, now: now)
        default:
            guard let peer = peers[packet.senderID] else {
                unverified.append((packet, id))
                if unverified.count > configuration.unverifiedLimit { unverified.removeFirst() }
                return []
            }
            return verified(packet, from: peer, now: now)
        }
    }

    private mutating func announced(_ packet: MeshPacket, now: UInt64) -> [Action] {
        guard let announcement = try? IdentityAnnouncement(decoding: Self.contents(of: packet)),
            MeshIdentity.peerID(noiseKey: announcement.noisePublicKey) == packet.senderID,
            let signingKey = try? Curve25519.Signing.PublicKey(rawRepresentation: announcement.signingPublicKey),
            packet.isSignatureValid(publicKey: signingKey)
        else { return [.event(.refused("announcement from \(packet.senderID) failed verification"))] }
        let fingerprint = MeshIdentity.fingerprint(noiseKey: announcement.noisePublicKey)
        var actions: [Action] = []
        if var known = peers[packet.senderID] {
            guard known.signingKey == announcement.signingPublicKey else {
                return [.event(.refused("announcement from \(packet.senderID) with a different signing key than pinned"))]
            }
            known.lastSeen = max(known.lastSeen, now)
            if known.nickname != announcement.nickname {
                known.nickname = announcement.nickname
                actions.append(.event(.peer(known)))
            }
            peers[packet.senderID] = known
        } else {
            let peer = Peer(
                id: packet.senderID, nickname: announcement.nickname, fingerprint: Hex.encode(fingerprint),
                noiseKey: announcement.noisePublicKey, signingKey: announcement.signingPublicKey, lastSeen: now)
            peers[packet.senderID] = peer
            actions.append(.event(.peer(peer)))
            let waiting = unverified.filter { $0.0.senderID == packet.senderID }
            unverified.removeAll { $0.0.senderID == packet.senderID }
            for (held, _) in waiting { actions += verified(held, from: peer, now: now) }
        }
        outbox.peerAppeared(packet.senderID, now: now)
        actions += pump(packet.senderID, now: now)
        return actions
    }

    private mutating func verified(_ packet: MeshPacket, from peer: Peer, now: UInt64) -> [Action] {
        switch packet.type {
        case .message:
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: peer.signingKey),
                packet.isSignatureValid(publicKey: key)
            else { return [.event(.refused("public message from \(peer.id) with a bad signature"))] }
            guard let message = try? ChatMessage(decoding: Self.contents(of: packet)) else { return [] }
            let hops = packet.isRSR ? nil : max(1, Int(configuration.router.originTTL) - Int(packet.ttl) + 1)
            return [.event(.publicMessage(from: peer, text: message.content, hops: hops, id: message.id))]
        case .noiseHandshake:
            guard packet.recipientID == identity.peerID,
                let result = try? sessions.receiveHandshake(Self.contents(of: packet), from: packet.senderID, now: now)
            else { return [] }
            return sessionActions(result, now: now)
        case .noiseEncrypted:
            guard packet.recipientID == identity.peerID, let sealed = try? Self.contents(of: packet) else { return [] }
            do {
                let plaintext = try sessions.open(sealed, from: packet.senderID)
                return received(plaintext, from: peer, now: now)
            } catch let error where error == .noSession {
                // The peer holds a session we lost (we restarted): handshake again; its
                // outbox resends once the new session is up.
                return sessionActions(sessions.initiate(with: packet.senderID, now: now), now: now)
            } catch {
                return []
            }
        default:
            return []
        }
    }

    private mutating func received(_ plaintext: [UInt8], from peer: Peer, now: UInt64) -> [Action] {
        guard let payload = try? NoisePayload(decoding: plaintext) else { return [] }
        switch payload.type {
        case .privateMessage:
            guard let message = try? PrivateMessagePacket(decoding: payload.data) else { return [] }
            var actions: [Action] = []
            if receivedPrivateSet.insert(message.messageID).inserted {
                receivedPrivate.append(message.messageID)
                if receivedPrivate.count > 4_096 { receivedPrivateSet.remove(receivedPrivate.removeFirst()) }
                actions.append(.event(.privateMessage(from: peer, peerID: peer.id, text: message.content, id: message.messageID)))
            }
            // Acknowledge every copy: the first receipt may have been lost.
            let receipt = NoisePayload(type: .delivered, data: Array(message.messageID.utf8))
            if let sealed = try? sessions.seal(receipt.encoded(), for: peer.id) {
                actions += (try? originate(type: .noiseEncrypted, payload: sealed, recipient: peer.id, now: now)) ?? []
            }
            return actions
        case .delivered:
            let id = String(decoding: payload.data, as: UTF8.self)
            return outbox.acknowledged(id, by: peer.id) ? [.event(.delivered(id: id, to: peer.id))] : []
        default:
            return []
        }
    }

    // MARK: - Helpers

    /// The most a compressed payload may inflate to.
    static let payloadLimit = 65_536

    /// A packet's payload, inflated when it arrived compressed. The packet itself is relayed
    /// as received, never re-compressed.
    private static func contents(of packet: MeshPacket) throws(MeshWireError) -> [UInt8] {
        try packet.decompressedPayload(limit: payloadLimit)
    }

    private mutating func randomID() -> String {
        Hex.encode((0..<2).flatMap { _ in withUnsafeBytes(of: random.next().bigEndian, Array.init) })
    }
}
