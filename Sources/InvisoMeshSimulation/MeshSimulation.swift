public import InvisoMesh
import Dispatch
import Synchronization

/// A discrete-event simulation of a mesh of ``MeshRouter``s on a ``GeometricGraph``.
///
/// Events (frame arrivals, router timers, message origins, nodes going offline and back)
/// come out of one time-ordered queue; ties keep their insertion order and every random
/// draw comes from generators seeded by ``SimulationParameters/seed``, so a run is the
/// same every time. Packets are never encoded: frames travel as values, and each message's
/// ``PacketID`` is computed once when it is made. Every transmission on a link is counted,
/// lost or not.
///
/// The events of one millisecond are handled in two phases: first each router takes its
/// inputs (frames and timers; routers are independent, so with
/// ``SimulationParameters/threads`` above 1 the nodes are split between threads), then the
/// actions they returned are carried out one event at a time in queue order, which is
/// where every shared random draw and queue insertion happens. The result is the same for
/// any thread count.
///
/// Not thread-safe: one simulation is run from one thread. (The state touched for every
/// event is marked `@exclusivity(unchecked)`: no two accesses to one of those properties
/// ever overlap, and the run-time checks cost more than a tenth of an event.)
public final class MeshSimulation {
    /// The graph.
    public let graph: GeometricGraph
    /// The parameters.
    public let parameters: SimulationParameters
    /// The peer ID of each node.
    public let peerIDs: [PeerID]
    /// The routers, one per node (read them to inspect state).
    @exclusivity(unchecked) public private(set) var routers: [MeshRouter]
    /// Simulated time at the start (milliseconds since the Unix epoch).
    public let epoch: UInt64 = 1_750_000_000_000

    var links: [[SimulatedLink]] = []
    /// For node u's link i: u's link index at the neighbour.
    var reverseLink: [[UInt32]] = []
    /// Node u's link i is `edges[edgeStart[u] + i]`: the neighbour and u's link index at the
    /// neighbour (the two tables above, flattened for ``transmit(_:from:link:)``).
    @exclusivity(unchecked) var edgeStart: [Int32] = []
    @exclusivity(unchecked) var edges: [(neighbour: Int32, reverse: UInt32)] = []
    @exclusivity(unchecked) var online: [Bool]
    /// Frames arrive 10–40 ms after they are sent and relays wait up to 220 ms: a window of
    /// 256 ms holds nearly every event, and its buckets stay in cache.
    @exclusivity(unchecked) var queue = CalendarQueue<Event>(window: 256)
    /// The last packet ID looked up, and its message (a relay sends one packet on several
    /// links in a row).
    @exclusivity(unchecked) var lastLookup: (id: PacketID, message: Int32)?
    @exclusivity(unchecked) var pendingWake: [UInt64]
    @exclusivity(unchecked) var random: MeshRandom
    /// Current simulated time.
    @exclusivity(unchecked) public private(set) var now: UInt64

    @exclusivity(unchecked) var messages: [MessageRecord] = []
    /// Message index by ``PacketID/dedupKey`` (checked against the record's full ID).
    @exclusivity(unchecked) var messageIndex = RandomKeyMap<Int32>(seed: 0x4D53_4731)
    /// One array for the actions of a router input outside a batch, reused.
    @exclusivity(unchecked) var actions: [MeshRouter.Action] = []
    /// The events of the millisecond being run, and their frames (taken by the routers).
    @exclusivity(unchecked) var batch: [BatchEvent] = []
    @exclusivity(unchecked) var batchFrames: [MeshFrame?] = []
    /// For each router input of the batch: which thread's buffer holds its actions, and where.
    @exclusivity(unchecked) var batchActions: [(thread: Int32, start: Int32, end: Int32)] = []
    /// One action buffer per thread.
    @exclusivity(unchecked) var threadActions: [[MeshRouter.Action]]
    /// The batch's router inputs by node group (see ``runRouterInputs(_:)``).
    @exclusivity(unchecked) var groupStart: [Int] = []
    @exclusivity(unchecked) var groupOrder: [Int32] = []
    /// Transmissions by category.
    @exclusivity(unchecked) public private(set) var counters = Counters()

    /// An event of a batch (``run(untilMillisecond:)``); a frame's contents are kept apart.
    enum BatchEvent {
        case frame(node: Int32, link: UInt32, hops: UInt16, message: Int32)
        case wake(node: Int32)
        case originate(message: Int32)
        case setOnline(node: Int32, online: Bool)

        /// The node a frame or timer is for.
        var node: Int {
            switch self {
            case .frame(let node, _, _, _), .wake(let node), .setOnline(let node, _): return Int(node)
            case .originate: return 0
            }
        }

        /// A frame or a timer: an input for one router alone.
        var isRouterInput: Bool {
            switch self {
            case .frame, .wake: return true
            case .originate, .setOnline: return false
            }
        }
    }

    enum Event {
        /// A frame arriving at `node` on `link`, with the hops it has travelled and the
        /// workload message it carries (-1: none).
        case frame(node: Int32, link: UInt32, hops: UInt16, message: Int32, frame: MeshFrame)
        case wake(node: Int32)
        case originate(message: Int32)
        case setOnline(node: Int32, online: Bool)
    }

    /// A message of the workload and what became of it.
    struct MessageRecord {
        var kind: SimulatedMessage.Kind
        var origin: Int32
        var sentAt: UInt64
        var id: PacketID
        var hops: [UInt16]
        var shortest: [Int32]
        var transmissions = 0
        /// Of ``transmissions``, per-hop acknowledgements of the message (directed only).
        var acknowledgements = 0
        var delivered = 0
        var deliveredLate = 0
        var latencies: [UInt32] = []
        var stretchSum = 0.0
        var hopSum = 0
        var routeKnown = false
    }

    /// Transmissions counted by what they carried.
    public struct Counters: Sendable, Hashable {
        /// Workload broadcasts: origin sends and relays.
        public var broadcastData = 0
        /// Workload broadcasts sent in answer to REQUEST_SYNCs.
        public var broadcastSyncResponses = 0
        /// Workload directed packets (unicast hops, retries, floods, spool deliveries).
        public var directedData = 0
        /// Acknowledgements of workload directed packets (sent alone).
        public var acknowledgements = 0
        /// Acknowledgements of workload directed packets that rode on another packet (no
        /// transmission of their own; not in ``total``).
        public var piggybackedAcknowledgements = 0
        /// REQUEST_SYNCs.
        public var syncRequests = 0
        /// Announces (relays and sync responses included).
        public var announces = 0
        /// Anything else.
        public var other = 0
        /// Transmissions lost on the link.
        public var lost = 0
        /// Frames that arrived at a node that was offline.
        public var droppedOffline = 0
        /// Events processed.
        public var events = 0

        /// Every transmission.
        public var total: Int {
            broadcastData + broadcastSyncResponses + directedData + acknowledgements + syncRequests + announces + other
        }
    }

    /// Creates a simulation with every node online and every link up at time 0.
    public init(graph: GeometricGraph, parameters: SimulationParameters) {
        self.graph = graph
        self.parameters = parameters
        var random = MeshRandom(seed: parameters.seed ^ 0x5EED_0F51_3B1A_7E00)
        var ids: [PeerID] = []
        var used = Set<UInt64>()
        while ids.count < graph.count {
            let value = random.next()
            if value != PeerID.broadcast.rawValue, used.insert(value).inserted { ids.append(PeerID(rawValue: value)) }
        }
        peerIDs = ids
        routers = (0..<graph.count).map { node in
            {
                var derived = random.derived(UInt64(node))
                return MeshRouter(localID: ids[node], configuration: parameters.router, seed: derived.next())
            }()
        }
        self.random = random
        threadActions = [[MeshRouter.Action]](repeating: [], count: max(1, parameters.threads))
        online = [Bool](repeating: true, count: graph.count)
        pendingWake = [UInt64](repeating: .max, count: graph.count)
        now = epoch
        links = (0..<graph.count).map { node in
            graph.neighbours[node].enumerated().map { index, neighbour in
                SimulatedLink(id: LinkID(UInt32(index)), peer: ids[Int(neighbour)], node: Int32(node), simulation: self)
            }
        }
        reverseLink = (0..<graph.count).map { node in
            graph.neighbours[node].map { neighbour in
                UInt32(graph.neighbours[Int(neighbour)].firstIndex(of: Int32(node))!)
            }
        }
        for node in 0..<graph.count {
            edgeStart.append(Int32(edges.count))
            for (index, neighbour) in graph.neighbours[node].enumerated() {
                edges.append((neighbour, reverseLink[node][index]))
            }
        }
        let start = MeshTime(milliseconds: now)
        for node in 0..<graph.count {
            for link in links[node] {
                perform(routers[node].linkUp(link.id, peer: link.peer, now: start), at: node)
            }
        }
    }

    // MARK: - Workload

    /// Schedules an announce from `node` at `time` milliseconds after the start (background
    /// traffic that teaches routes; not a workload message).
    public func announce(node: Int, atMillisecond time: Int64) {
        let packet = MeshPacket(
            type: .announce, ttl: 7, timestamp: epoch + UInt64(time), senderID: peerIDs[node],
            payload: [UInt8](repeating: 0xA5, count: 70))
        addMessage(SimulatedMessage(origin: node, atMillisecond: time, kind: .announce), packet: packet)
    }

    /// Schedules a workload message. Its packet is a public message (broadcast) or a Noise
    /// message to the recipient (direct), with a 100-byte payload.
    public func schedule(_ message: SimulatedMessage) {
        var payload = [UInt8](repeating: 0, count: 100)
        let serial = UInt64(messages.count)
        for index in 0..<8 { payload[index] = UInt8(truncatingIfNeeded: serial >> (8 * UInt64(index))) }
        let packet: MeshPacket
        switch message.kind {
        case .broadcast, .announce:
            packet = MeshPacket(
                type: .message, ttl: 7, timestamp: epoch + UInt64(message.time), senderID: peerIDs[message.origin],
                payload: payload)
        case .direct(let recipient):
            packet = MeshPacket(
                type: .noiseEncrypted, ttl: 7, timestamp: epoch + UInt64(message.time),
                senderID: peerIDs[message.origin], recipientID: peerIDs[recipient], payload: payload)
        }
        addMessage(message, packet: packet)
    }

    /// Takes `node` offline at `from` and back online at `until` (milliseconds after the
    /// start): its links go down at both ends, frames to it are lost, its timers wait.
    public func setOffline(node: Int, fromMillisecond from: Int64, untilMillisecond until: Int64) {
        queue.insert(.setOnline(node: Int32(node), online: false), at: epoch + UInt64(from))
        queue.insert(.setOnline(node: Int32(node), online: true), at: epoch + UInt64(until))
    }

    private var pendingPackets: [Int32: MeshPacket] = [:]

    private func addMessage(_ message: SimulatedMessage, packet: MeshPacket) {
        let index = Int32(messages.count)
        let id = PacketID(packet)
        messages.append(
            MessageRecord(
                kind: message.kind, origin: Int32(message.origin), sentAt: packet.timestamp, id: id, hops: [], shortest: []))
        messageIndex[id.dedupKey] = index
        pendingPackets[index] = packet
        queue.insert(.originate(message: index), at: packet.timestamp)
    }

    /// REQUEST_SYNCs sent before ``markWorkloadStart()``.
    var syncRequestsBeforeWorkload = 0

    /// Marks the end of a warm-up: REQUEST_SYNCs sent so far (which spread announces) are
    /// not charged to the broadcasts.
    public func markWorkloadStart() {
        syncRequestsBeforeWorkload = counters.syncRequests
    }

    // MARK: - Running

    /// Processes events up to `time` milliseconds after the start.
    public func run(untilMillisecond time: Int64) {
        let limit = epoch + UInt64(max(0, time))
        while let (time, first) = queue.popFirst(notAfter: limit) {
            now = time
            // Everything queued for this millisecond. Events it causes for the same
            // millisecond are queued after these, so they come in the next round, as they
            // would one at a time.
            batch.removeAll(keepingCapacity: true)
            batchFrames.removeAll(keepingCapacity: true)
            addToBatch(first)
            while let (_, next) = queue.popFirst(notAfter: time) { addToBatch(next) }
            var index = 0
            while index < batch.count {
                var end = index
                while end < batch.count, batch[end].isRouterInput { end += 1 }
                if end > index {
                    runRouterInputs(index..<end)
                    index = end
                    continue
                }
                counters.events += 1
                switch batch[index] {
                case .originate(let message): originate(Int(message))
                case .setOnline(let node, let isOnline): setOnline(Int(node), isOnline)
                case .frame, .wake: break
                }
                index += 1
            }
        }
        now = max(now, limit)
    }

    private func addToBatch(_ event: consuming Event) {
        switch consume event {
        case .frame(let node, let link, let hops, let message, let frame):
            batch.append(.frame(node: node, link: link, hops: hops, message: message))
            batchFrames.append(frame)
        case .wake(let node):
            batch.append(.wake(node: node))
            batchFrames.append(nil)
        case .originate(let message):
            batch.append(.originate(message: message))
            batchFrames.append(nil)
        case .setOnline(let node, let online):
            batch.append(.setOnline(node: node, online: online))
            batchFrames.append(nil)
        }
    }

    /// Frames and timers of the batch that take no action outside their router: the routers
    /// take them (on several threads if asked), then their actions are carried out in order.
    private func runRouterInputs(_ range: Range<Int>) {
        let time = MeshTime(milliseconds: now)
        let threads = range.count >= 8 ? threadActions.count : 1
        batchActions.removeAll(keepingCapacity: true)
        batchActions.append(contentsOf: repeatElement((thread: 0, start: 0, end: 0), count: range.count))
        // The events in groups of nodes (`node % groups`), each group in queue order: a thread
        // claims a group at a time, so a router is only touched by one thread, and a thread
        // that the machine holds back delays one group, not half the batch.
        let groups = threads > 1 ? Self.groups : 1
        groupStart.removeAll(keepingCapacity: true)
        groupStart.append(contentsOf: repeatElement(0, count: groups + 1))
        if groups > 1 {
            for index in range { groupStart[batch[index].node % groups + 1] += 1 }
            for group in 0..<groups { groupStart[group + 1] += groupStart[group] }
        } else {
            groupStart[1] = range.count
        }
        groupOrder.removeAll(keepingCapacity: true)
        groupOrder.append(contentsOf: repeatElement(0, count: range.count))
        var filled = Array(groupStart.dropLast())
        for index in range {
            let group = groups > 1 ? batch[index].node % groups : 0
            groupOrder[filled[group]] = Int32(index)
            filled[group] += 1
        }
        routers.withUnsafeMutableBufferPointer { routers in
            batchFrames.withUnsafeMutableBufferPointer { frames in
                batchActions.withUnsafeMutableBufferPointer { spans in
                    threadActions.withUnsafeMutableBufferPointer { buffers in
                        let work = RouterInputs(
                            routers: routers, frames: frames, spans: spans, buffers: buffers, events: batch,
                            online: online, groupStart: groupStart, groupOrder: groupOrder,
                            firstEvent: range.lowerBound, time: time)
                        if threads > 1 {
                            DispatchQueue.concurrentPerform(iterations: threads) { work.run(thread: $0) }
                        } else {
                            work.run(thread: 0)
                        }
                    }
                }
            }
        }
        threadActions.withUnsafeMutableBufferPointer { buffers in
            for index in range {
                counters.events += 1
                let span = batchActions[index - range.lowerBound]
                let node: Int
                switch batch[index] {
                case .frame(let target, _, let hops, let message):
                    node = Int(target)
                    guard online[node] else {
                        counters.droppedOffline += 1
                        continue
                    }
                    // Only packet frames carry a message (see `transmit`).
                    if message >= 0 {
                        let record = Int(message)
                        if !messages[record].hops.isEmpty, messages[record].hops[node] == .max {
                            messages[record].hops[node] = hops
                        }
                    }
                case .wake(let target):
                    node = Int(target)
                    if pendingWake[node] == now { pendingWake[node] = .max }
                    guard online[node] else { continue }
                case .originate, .setOnline:
                    continue
                }
                buffers[Int(span.thread)].withUnsafeMutableBufferPointer { actions in
                    performMovingOut(
                        UnsafeMutableBufferPointer(rebasing: actions[Int(span.start)..<Int(span.end)]), at: node)
                }
            }
        }
    }

    private func originate(_ index: Int) {
        guard let packet = pendingPackets.removeValue(forKey: Int32(index)) else { return }
        let origin = Int(messages[index].origin)
        if messages[index].kind != .announce {
            // Announces are not followed per node (see `transmit`).
            var hops = [UInt16](repeating: .max, count: graph.count)
            hops[origin] = 0
            messages[index].hops = hops
        }
        switch messages[index].kind {
        case .broadcast:
            messages[index].shortest = graph.hopDistances(from: origin)
        case .direct(let recipient):
            messages[index].shortest = [graph.hopDistances(from: origin)[recipient]]
            messages[index].routeKnown = routers[origin].nextHop(to: peerIDs[recipient]) != nil
        case .announce:
            break
        }
        guard online[origin] else { return }
        actions.removeAll(keepingCapacity: true)
        routers[origin].originate(packet, id: messages[index].id, now: MeshTime(milliseconds: now), into: &actions)
        perform(actions, at: origin)
    }

    /// Node groups a batch is split into when it runs on several threads.
    static let groups = 64

    /// One millisecond's router inputs, shared by the threads that run them.
    ///
    /// `@unchecked Sendable` because of the pointers: a thread claims a group of nodes with
    /// `nextGroup` (atomic) and touches only those nodes' routers and frames, its own action
    /// buffer and the spans of that group's events; the arrays are not changed meanwhile, and
    /// `concurrentPerform` returns only when every thread is done.
    private final class RouterInputs: @unchecked Sendable {
        let routers: UnsafeMutableBufferPointer<MeshRouter>
        let frames: UnsafeMutableBufferPointer<MeshFrame?>
        let spans: UnsafeMutableBufferPointer<(thread: Int32, start: Int32, end: Int32)>
        let buffers: UnsafeMutableBufferPointer<[MeshRouter.Action]>
        let events: [BatchEvent]
        let online: [Bool]
        /// Group g's events are `groupOrder[groupStart[g] ..< groupStart[g + 1]]`.
        let groupStart: [Int]
        let groupOrder: [Int32]
        let firstEvent: Int
        let time: MeshTime
        let nextGroup = Atomic<Int>(0)

        init(
            routers: UnsafeMutableBufferPointer<MeshRouter>, frames: UnsafeMutableBufferPointer<MeshFrame?>,
            spans: UnsafeMutableBufferPointer<(thread: Int32, start: Int32, end: Int32)>,
            buffers: UnsafeMutableBufferPointer<[MeshRouter.Action]>, events: [BatchEvent], online: [Bool],
            groupStart: [Int], groupOrder: [Int32], firstEvent: Int, time: MeshTime
        ) {
            self.routers = routers
            self.frames = frames
            self.spans = spans
            self.buffers = buffers
            self.events = events
            self.online = online
            self.groupStart = groupStart
            self.groupOrder = groupOrder
            self.firstEvent = firstEvent
            self.time = time
        }

        /// Claims groups until none is left, and hands their nodes their frames and timers,
        /// in queue order.
        func run(thread: Int) {
            buffers[thread].removeAll(keepingCapacity: true)
            while true {
                let group = nextGroup.wrappingAdd(1, ordering: .relaxed).oldValue
                guard group < groupStart.count - 1 else { return }
                for position in groupStart[group]..<groupStart[group + 1] {
                    let index = Int(groupOrder[position])
                    let start = buffers[thread].count
                    switch events[index] {
                    case .frame(let target, let link, _, _):
                        guard online[Int(target)], let frame = frames[index].take() else { continue }
                        routers[Int(target)].receive(frame, on: LinkID(link), now: time, into: &buffers[thread])
                    case .wake(let target):
                        guard online[Int(target)] else { continue }
                        routers[Int(target)].tick(now: time, into: &buffers[thread])
                    case .originate, .setOnline:
                        continue
                    }
                    spans[index - firstEvent] = (Int32(thread), Int32(start), Int32(buffers[thread].count))
                }
            }
        }
    }

    private func setOnline(_ node: Int, _ isOnline: Bool) {
        guard online[node] != isOnline else { return }
        let time = MeshTime(milliseconds: now)
        if !isOnline {
            online[node] = false
            for (index, neighbour) in graph.neighbours[node].enumerated() {
                let other = Int(neighbour)
                perform(routers[node].linkDown(LinkID(UInt32(index)), now: time), at: node)
                if online[other] { perform(routers[other].linkDown(LinkID(reverseLink[node][index]), now: time), at: other) }
            }
        } else {
            online[node] = true
            for (index, neighbour) in graph.neighbours[node].enumerated() where online[Int(neighbour)] {
                let other = Int(neighbour)
                perform(routers[node].linkUp(LinkID(UInt32(index)), peer: peerIDs[other], now: time), at: node)
                perform(routers[other].linkUp(LinkID(reverseLink[node][index]), peer: peerIDs[node], now: time), at: other)
            }
            perform(routers[node].tick(now: time), at: node)
        }
    }

    /// Carries out a router's actions at `node`.
    func perform(_ actions: [MeshRouter.Action], at node: Int) {
        for action in actions { perform(action, at: node) }
    }

    /// Carries out the actions in `actions` at `node`, moving each out and leaving a trivial
    /// one in its place (so the packets they hold are not retained once more to be read).
    private func performMovingOut(_ actions: UnsafeMutableBufferPointer<MeshRouter.Action>, at node: Int) {
        guard let base = actions.baseAddress else { return }
        for index in actions.indices {
            let action = (base + index).move()
            (base + index).initialize(to: .report(Self.placeholderID, .flooded))
            perform(action, at: node)
        }
    }

    /// What `performMovingOut` leaves behind.
    private static let placeholderID = PacketID(high: 0, low: 0, syncHash: 0)

    /// Carries out one of a router's actions at `node`.
    private func perform(_ action: consuming MeshRouter.Action, at node: Int) {
        switch action {
        // What `SimulatedLink.send` does, without going through the link objects.
        case .transmit(let packet, let id, let links, let hops):
            for link in links { transmit(.packet(packet, id: id, hops: hops), from: Int32(node), link: link.rawValue) }
        case .transmitWithAcknowledgements(let packet, let id, let link, let hops, let acknowledgements):
            transmit(
                .packet(packet, id: id, hops: hops, acknowledgements: acknowledgements), from: Int32(node),
                link: link.rawValue)
        case .sendSyncRequest(let request, let link):
            transmit(.syncRequest(request), from: Int32(node), link: link.rawValue)
        case .sendAcknowledgement(let acknowledgement, let link):
            transmit(.acknowledgement(acknowledgement), from: Int32(node), link: link.rawValue)
        case .deliver(let packet, let id):
            if packet.type != .announce { recordDelivery(id, at: node) }
        case .report:
            break
        case .schedule(let time):
            if time.milliseconds < pendingWake[node] {
                pendingWake[node] = time.milliseconds
                queue.insert(.wake(node: Int32(node)), at: time.milliseconds)
            }
        }
    }

    /// One transmission on one link (called by ``SimulatedLink/send(_:)``).
    func transmit(_ frame: consuming MeshFrame, from node: Int32, link: UInt32) {
        var hops: UInt16 = 0
        var carried: Int32 = -1
        switch frame {
        case .packet(let packet, let id, _, let acknowledgements):
            for acknowledgement in acknowledgements where lookup(acknowledgement.packetID) != nil {
                counters.piggybackedAcknowledgements += 1
            }
            if packet.type == .announce {
                // Only the warm-up makes announces: background traffic, counted but not
                // followed per message.
                counters.announces += 1
            } else if let message = lookup(id) {
                carried = message
                let record = Int(message)
                messages[record].transmissions += 1
                let senderHops = messages[record].hops.isEmpty ? 0 : messages[record].hops[Int(node)]
                hops = senderHops == .max ? 0 : senderHops &+ 1
                switch messages[record].kind {
                case .broadcast: if packet.isRSR { counters.broadcastSyncResponses += 1 } else { counters.broadcastData += 1 }
                case .direct: counters.directedData += 1
                case .announce: counters.announces += 1
                }
            } else {
                counters.other += 1
            }
        case .syncRequest:
            counters.syncRequests += 1
        case .acknowledgement(let acknowledgement):
            if let message = lookup(acknowledgement.packetID) {
                messages[Int(message)].transmissions += 1
                messages[Int(message)].acknowledgements += 1
                counters.acknowledgements += 1
            } else {
                counters.other += 1
            }
        }
        if random.unit() < parameters.loss {
            counters.lost += 1
            return
        }
        let latency = UInt64(random.int(in: parameters.latencyMilliseconds))
        let edge = edges[Int(edgeStart[Int(node)]) + Int(link)]
        queue.insert(
            .frame(node: edge.neighbour, link: edge.reverse, hops: hops, message: carried, frame: frame), at: now + latency)
    }

    /// The workload message with this packet ID, if any.
    private func lookup(_ id: PacketID) -> Int32? {
        if let last = lastLookup, last.id == id { return last.message }
        guard let message = messageIndex[id.dedupKey], messages[Int(message)].id == id else { return nil }
        lastLookup = (id, message)
        return message
    }

    private func recordDelivery(_ id: PacketID, at node: Int) {
        guard let message = lookup(id) else { return }
        let record = Int(message)
        let latency = now - messages[record].sentAt
        let shortest: Int32
        switch messages[record].kind {
        case .broadcast: shortest = messages[record].shortest[node]
        case .direct(let recipient):
            guard recipient == node else { return }
            shortest = messages[record].shortest[0]
        case .announce: return
        }
        let hops = Int(messages[record].hops[node])
        guard latency <= UInt64(parameters.deadlineMilliseconds) else {
            messages[record].deliveredLate += 1
            return
        }
        messages[record].delivered += 1
        messages[record].latencies.append(UInt32(latency))
        messages[record].hopSum += hops
        if shortest > 0 { messages[record].stretchSum += Double(hops) / Double(shortest) }
    }
}

/// A message of a simulated workload.
public struct SimulatedMessage: Sendable, Hashable {
    /// What kind of message it is.
    public enum Kind: Sendable, Hashable {
        /// A public broadcast to every node.
        case broadcast
        /// A directed message to the node with this index.
        case direct(to: Int)
        /// An announce (background, not a workload message).
        case announce
    }

    /// The sending node's index.
    public var origin: Int
    /// When it is sent, in milliseconds after the start.
    public var time: Int64
    /// What kind of message it is.
    public var kind: Kind

    /// Creates a message.
    public init(origin: Int, atMillisecond time: Int64, kind: Kind) {
        self.origin = origin
        self.time = time
        self.kind = kind
    }
}
