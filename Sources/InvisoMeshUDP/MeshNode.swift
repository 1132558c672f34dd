import Foundation
public import InvisoMesh
public import InvisoTime
public import NIOCore

/// A mesh node in a real process: a ``MeshNodeCore`` driven by a ``UDPMeshSocket`` and a
/// timer.
///
/// Each neighbour is a UDP address and one ``UDPMeshLink``. Configured neighbours (`--peer`) are
/// up from the start; any other address that sends a datagram that decodes as a packet
/// becomes a neighbour too (up to ``maximumLinks``), so a line only needs each node to name
/// the one before it. A neighbour silent for ``linkTimeout`` milliseconds goes down (the
/// router stops counting on it) and comes back up with its next datagram, which starts a
/// gossip sync with it. With a ``MeshDiscovery``, every node heard on the LAN's discovery
/// port becomes a neighbour too.
public actor MeshNode {
    /// How long a neighbour may stay silent before its link goes down (ms). Nodes announce
    /// every 10 s, so this covers three lost announcements.
    public static let linkTimeout: UInt64 = 35_000
    /// The most neighbours one node keeps.
    public static let maximumLinks = 64
    /// The longest the timer sleeps between checks (ms).
    static let maximumSleep: UInt64 = 250
    /// How often a node with discovery broadcasts its beacon (ms).
    public static let beaconInterval: UInt64 = 5_000

    private struct Neighbour {
        var link: UDPMeshLink
        var lastHeard: UInt64
        var isUp: Bool
    }

    private var core: MeshNodeCore
    private let socket: UDPMeshSocket
    private let discovery: MeshDiscovery?
    private let clock: any InvisoClock
    private var neighbours: [LinkID: Neighbour] = [:]
    private var linksByAddress: [SocketAddress: LinkID] = [:]
    private var nextLink: UInt32 = 1
    private var tasks: [Task<Void, Never>] = []
    private let continuation: AsyncStream<MeshNodeCore.Event>.Continuation

    /// What happens on the mesh, for the user. Finishes when the node stops.
    public nonisolated let events: AsyncStream<MeshNodeCore.Event>

    /// Creates a node; call ``start()`` to run it.
    /// - Parameters:
    ///   - core: the protocol state (identity, nickname, restored outbox).
    ///   - socket: the bound UDP socket.
    ///   - neighbours: the configured neighbours' addresses.
    ///   - discovery: finds more neighbours on the LAN (`nil`: only the configured ones and
    ///     those that send us packets); the node broadcasts its beacon every
    ///     ``beaconInterval`` and closes it when it stops.
    ///   - clock: the wall clock stamps packets (milliseconds since the Unix epoch); timers
    ///     (announcements, beacons) sleep on it.
    public init(
        core: MeshNodeCore, socket: UDPMeshSocket, neighbours: [SocketAddress], discovery: MeshDiscovery? = nil,
        clock: any InvisoClock = SystemClock()
    ) {
        self.core = core
        self.socket = socket
        self.discovery = discovery
        self.clock = clock
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        let now = Self.milliseconds(clock)
        for address in neighbours where linksByAddress[address] == nil {
            let link = LinkID(nextLink)
            nextLink += 1
            linksByAddress[address] = link
            self.neighbours[link] = Neighbour(
                link: UDPMeshLink(id: link, address: address, socket: socket, clock: clock), lastHeard: now, isUp: false)
        }
    }

    /// Brings the configured links up and starts receiving and ticking.
    public func start() {
        let now = Self.milliseconds(clock)
        for link in neighbours.keys.sorted() {
            neighbours[link]?.isUp = true
            perform(core.linkUp(link, now: now))
        }
        let datagrams = socket.datagrams
        tasks.append(
            Task { [weak self] in
                for await datagram in datagrams {
                    await self?.received(datagram)
                }
            })
        let clock = clock
        tasks.append(
            Task { [weak self] in
                while !Task.isCancelled, let delay = await self?.tick() {
                    try? await clock.sleep(for: .milliseconds(delay))
                }
            })
        if let discovery {
            tasks.append(
                Task { [weak self] in
                    for await address in discovery.discovered {
                        await self?.addNeighbour(address)
                    }
                })
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        discovery.announce()
                        try? await clock.sleep(for: .milliseconds(Self.beaconInterval))
                    }
                })
        }
    }

    /// Stops the timer and the receiver and closes the socket; ``events`` finishes.
    public func stop() async {
        for task in tasks { task.cancel() }
        tasks = []
        await socket.close()
        await discovery?.close()
        continuation.finish()
    }

    /// Sends a public message.
    /// - Throws: ``MeshWireError`` when the text does not fit a message.
    public func sendPublic(_ text: String) throws(MeshWireError) {
        perform(try core.sendPublic(text, now: Self.milliseconds(clock)))
    }

    /// Queues a private message; it is resent until `peer` acknowledges it.
    /// - Returns: the message ID, which ``MeshNodeCore/Event/delivered(id:to:)`` reports.
    /// - Throws: ``MeshWireError`` when the text is longer than 255 bytes.
    public func sendPrivate(_ text: String, to peer: PeerID) throws(MeshWireError) -> String {
        let (id, actions) = try core.sendPrivate(text, to: peer, now: Self.milliseconds(clock))
        perform(actions)
        return id
    }

    /// The peers that announced themselves.
    public var knownPeers: [MeshNodeCore.Peer] { core.knownPeers }

    /// The peers heard from recently.
    public var presentPeers: [MeshNodeCore.Peer] { core.presentPeers(now: Self.milliseconds(clock)) }

    /// Private messages not yet acknowledged, to persist.
    public var pendingPrivateMessages: [PrivateOutbox.Entry] { core.pendingPrivateMessages }

    /// The number of neighbour links up now.
    public var linksUp: Int { neighbours.values.count { $0.isUp } }

    /// Makes `address` a neighbour and brings its link up (a node found by discovery).
    /// Nothing happens for an address that already is one, or when the node has
    /// ``maximumLinks`` neighbours.
    public func addNeighbour(_ address: SocketAddress) {
        guard linksByAddress[address] == nil, neighbours.count < Self.maximumLinks else { return }
        let now = Self.milliseconds(clock)
        let link = makeNeighbour(address, now: now)
        neighbours[link]?.isUp = true
        perform(core.linkUp(link, now: now))
    }

    /// A new neighbour at `address`, its link down.
    private func makeNeighbour(_ address: SocketAddress, now: UInt64) -> LinkID {
        let link = LinkID(nextLink)
        nextLink += 1
        linksByAddress[address] = link
        neighbours[link] = Neighbour(
            link: UDPMeshLink(id: link, address: address, socket: socket, clock: clock), lastHeard: now, isUp: false)
        return link
    }

    // MARK: - Driving the core

    private func received(_ datagram: UDPMeshSocket.Datagram) {
        let now = Self.milliseconds(clock)
        guard let frame = try? MeshFrame(decoding: datagram.bytes) else { return }
        let link: LinkID
        if let known = linksByAddress[datagram.sender] {
            link = known
        } else {
            // Only a datagram that is a packet makes a stranger a neighbour.
            guard neighbours.count < Self.maximumLinks else { return }
            link = makeNeighbour(datagram.sender, now: now)
        }
        neighbours[link]?.lastHeard = now
        if neighbours[link]?.isUp == false {
            neighbours[link]?.isUp = true
            perform(core.linkUp(link, now: now))
        }
        perform(core.receive(frame, on: link, now: now))
    }

    /// Runs due timers; returns how long to sleep (ms).
    private func tick() -> UInt64 {
        let now = Self.milliseconds(clock)
        for (link, neighbour) in neighbours.sorted(by: { $0.key < $1.key })
        where neighbour.isUp && now >= neighbour.lastHeard &+ Self.linkTimeout {
            neighbours[link]?.isUp = false
            perform(core.linkDown(link, now: now))
        }
        if core.nextDeadline <= now { perform(core.tick(now: now)) }
        let deadline = core.nextDeadline
        return deadline <= now ? 1 : min(deadline - now, Self.maximumSleep)
    }

    private func perform(_ actions: [MeshNodeCore.Action]) {
        for action in actions {
            switch action {
            case .send(let frame, let link):
                guard let neighbour = neighbours[link], neighbour.isUp else { continue }
                neighbour.link.peer = core.neighbour(on: link)
                neighbour.link.send(frame)
            case .event(let event):
                continuation.yield(event)
            }
        }
    }

    /// Milliseconds since the Unix epoch on `clock`'s wall clock (BitChat's packet time).
    static func milliseconds(_ clock: any InvisoClock) -> UInt64 {
        UInt64(max(0, clock.wallClock.timeIntervalSince1970 * 1_000))
    }
}
