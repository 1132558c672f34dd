import Foundation
@testable import InvisoKit
import InvisoNoise
import InvisoStore
import InvisoTesting
import InvisoTime
import InvisoWire

/// Two ``ChatSessionMachine``s wired together in memory on a virtual clock: a stand-in for
/// the server (room seats, relayed signals) and for every path, with seeded loss, delay,
/// reorder and duplication. Nothing sleeps and nothing touches a socket: ``run(until:)``
/// jumps from one scheduled moment (a delivery or a timer) to the next, so a 30-second
/// timeout costs nothing and every run with the same seed is the same run.
///
/// Side 0 is the creator ("alice"), side 1 the joiner ("bob").
final class SessionSimulation {
    /// How a path treats frames.
    struct Network {
        /// The chance a frame is lost.
        var loss = 0.0
        /// The chance a frame is delivered twice.
        var duplication = 0.0
        /// The fixed delay.
        var delay: Duration = .milliseconds(5)
        /// Up to this much extra delay, uniformly (frames then overtake each other).
        var jitter: Duration = .zero
        /// A bottleneck: each frame takes this long to get through, one after the other in
        /// each direction (a slow receiver, or a thin pipe); frames queue behind it in order.
        var serviceTime: Duration = .zero

        static let perfect = Network()
    }

    fileprivate struct Scheduled {
        var at: ClockInstant
        var order: Int
        var side: Int
        var event: ChatSessionMachine.Event
        /// Dropped when the path it travels on went down meanwhile.
        var path: ChatSessionMachine.PathID?
        var pathEpoch = 0
    }

    var machines: [ChatSessionMachine]
    private(set) var now = ClockInstant.origin
    let startDate = Date(timeIntervalSince1970: 1_800_000_000)
    var random: SeededGenerator

    /// Per side: what it reported.
    private(set) var events: [[ChatEvent]] = [[], []]
    /// Per side: how it ended.
    private(set) var closings: [ChatSessionMachine.Closing?] = [nil, nil]
    /// Per side: armed timers.
    private(set) var timers: [[ChatSessionMachine.Timer: ClockInstant]] = [[:], [:]]
    /// Per side: the room it sits in (`joinRoom`).
    private(set) var seated: [Bool] = [false, false]
    /// Per side: whether its signaling socket is up (frames and signals on the relay pass).
    var relayUp: [Bool] = [true, true]
    /// The networks of the paths (the relay, and the direct path once up).
    var networks: [ChatSessionMachine.PathID: Network] = [.relay: .perfect]
    /// Whether the direct path is reachable at all (otherwise its connects fail).
    var directReachable = true
    /// Frames each side sent, by path (for "which path carried it").
    private(set) var framesSent: [[ChatSessionMachine.PathID: Int]] = [[:], [:]]
    /// Frames each side's store saved (counted), and snapshot saves.
    private(set) var snapshotSaves = [0, 0]

    /// Per receiving side: when its bottleneck (``Network/serviceTime``) is free again.
    private var bottleneckFree: [ClockInstant] = [.origin, .origin]

    private var queue = ScheduleHeap()
    private var order = 0
    private var directRequests: Set<Int> = []
    private var directUp = false
    private var pathEpochs: [ChatSessionMachine.PathID: Int] = [:]
    static let direct = ChatSessionMachine.PathID(1)

    /// A v2 pair (or v1 when `v1Joiner`: the joiner has the six digits only).
    init(
        seed: UInt64, v1Joiner: Bool = false, joinerWords: Invite? = nil,
        configure: (inout ChatSessionMachine.Configuration) -> Void = { _ in },
        configureJoiner: (inout ChatSessionMachine.Configuration) -> Void = { _ in }
    ) {
        random = SeededGenerator(seed: seed)
        var configuration = ChatSessionMachine.Configuration()
        configuration.triesDirectPath = false
        configure(&configuration)
        var joinerConfiguration = configuration
        configureJoiner(&joinerConfiguration)
        let invite = try! Invite.generate(joinCode: "123456", using: &random)
        let creator = ChatSessionMachine(
            role: .creator, invite: invite, roomID: nil, deviceID: "ALICE", staticKey: Self.key(&random),
            lifetime: .thirtyDays, configuration: configuration, random: SeededGenerator(seed: random.next()))
        let joiner = ChatSessionMachine(
            role: .joiner, invite: v1Joiner ? nil : (joinerWords ?? invite), roomID: "room-1", deviceID: "BOB",
            staticKey: Self.key(&random), lifetime: .thirtyDays, configuration: joinerConfiguration,
            random: SeededGenerator(seed: random.next()))
        machines = [creator, joiner]
    }

    static func key(_ random: inout SeededGenerator) -> NoiseKeyPair {
        try! NoiseKeyPair(rawPrivateKey: random.bytes(32))
    }

    var time: ChatTime {
        ChatTime(now: now, date: startDate.addingTimeInterval(Double(now.sinceOrigin.components.seconds)))
    }

    // MARK: Driving

    /// Starts both sides; the creator's code is accepted at once.
    func start() {
        for side in 0..<2 { perform(machines[side].start(at: time), side: side) }
        feed(.codeAccepted(roomID: "room-1"), to: 0)
    }

    /// Feeds an event to a side now.
    func feed(_ event: ChatSessionMachine.Event, to side: Int) {
        perform(machines[side].handle(event, at: time), side: side)
    }

    /// A user request on a side.
    func request(_ side: Int, _ body: (inout ChatSessionMachine, ChatTime) throws -> [ChatSessionMachine.Action]) rethrows {
        let actions = try body(&machines[side], time)
        perform(actions, side: side)
    }

    /// Sends a text from a side; returns its id.
    @discardableResult
    func send(_ side: Int, _ text: String) throws -> UInt64 {
        let (id, actions) = try machines[side].send(.text(text), at: time)
        perform(actions, side: side)
        return id
    }

    /// Runs scheduled deliveries and timers in time order until `condition` holds or
    /// nothing is left before `limit` (virtual time).
    @discardableResult
    func run(for limit: Duration = .seconds(600), until condition: (SessionSimulation) -> Bool = { _ in false }) -> Bool {
        let end = now.advanced(by: limit)
        while !condition(self) {
            guard let next = nextMoment(), next <= end else {
                now = max(now, end)
                return condition(self)
            }
            now = max(now, next)
            step()
        }
        return true
    }

    private func nextMoment() -> ClockInstant? {
        let delivery = queue.first?.at
        let timer = timers.flatMap(\.values).min()
        return [delivery, timer].compactMap { $0 }.min()
    }

    /// One delivery (earliest, then first scheduled) or, when none is due, one timer.
    private func step() {
        refreshRelay()
        if let first = queue.first, first.at <= now {
            let item = queue.removeFirst()
            if let path = item.path, (pathEpochs[path] ?? 0) != item.pathEpoch { return }
            if case .frame(_, let path) = item.event, path == .relay, !relayUp[item.side] { return }
            feed(item.event, to: item.side)
            return
        }
        for side in 0..<2 {
            if let (timer, _) = timers[side].filter({ $0.value <= now }).min(by: { $0.value < $1.value }) {
                timers[side][timer] = nil
                feed(.timerFired(timer), to: side)
                return
            }
        }
    }

    private func schedule(_ event: ChatSessionMachine.Event, to side: Int, after delay: Duration = .zero, path: ChatSessionMachine.PathID? = nil) {
        order += 1
        queue.insert(
            Scheduled(
                at: now.advanced(by: delay), order: order, side: side, event: event, path: path,
                pathEpoch: path.map { pathEpochs[$0] ?? 0 } ?? 0))
    }

    // MARK: The network and the server

    /// Takes a path down on both sides (frames on it are lost).
    func dropDirectPath() {
        guard directUp else { return }
        directUp = false
        pathEpochs[Self.direct, default: 0] += 1
        for side in 0..<2 { schedule(.pathDown(Self.direct), to: side) }
    }

    /// The relay drops for `side`: its signaling socket is down for `downtime`, then both
    /// sides see `room_ready` again.
    func dropRelay(_ side: Int, for downtime: Duration) {
        relayUp[side] = false
        feed(.relayDisconnected, to: side)
        feed(.peerDisconnected, to: 1 - side)
        pendingRelayUps.append((now.advanced(by: downtime), side))
        schedule(.roomReady, to: side, after: downtime)
        schedule(.roomReady, to: 1 - side, after: downtime)
    }

    private var pendingRelayUps: [(ClockInstant, Int)] = []

    private func refreshRelay() {
        pendingRelayUps.removeAll { item in
            guard item.0 <= now else { return false }
            relayUp[item.1] = true
            return true
        }
    }

    private func perform(_ actions: [ChatSessionMachine.Action], side: Int) {
        refreshRelay()
        for action in actions {
            switch action {
            case .send(let item, let path):
                send(item, on: path, from: side)
            case .emit(let event):
                events[side].append(event)
                switch event {
                case .message(let id, let payload): messageLog[side].append((id, payload))
                case .delivered(let id): deliveredLog[side].append(id)
                default: break
                }
            case .arm(let timer, let at):
                timers[side][timer] = at
            case .cancel(let timer):
                timers[side][timer] = nil
            case .joinRoom:
                seated[side] = true
                if seated[0], seated[1], !roomReadySent {
                    roomReadySent = true
                    schedule(.roomReady, to: 0, after: .milliseconds(1))
                    schedule(.roomReady, to: 1, after: .milliseconds(1))
                }
            case .saveSnapshot:
                snapshotSaves[side] += 1
            case .storeReceived(let id, let payload):
                feed(.receivedStored(id: id, payload: payload, isNew: true), to: side)
            case .openDirectListener:
                schedule(.directListening([.init(host: "10.0.0.\(side + 1)", port: 7000)]), to: side, after: .milliseconds(1))
            case .connectDirect:
                directRequests.insert(side)
                if directRequests.count == 2 {
                    for other in 0..<2 {
                        schedule(directReachable ? .pathUp(Self.direct, .direct) : .directFailed, to: other, after: .milliseconds(3))
                    }
                    if directReachable { directUp = true }
                }
            case .finish(let closing):
                closings[side] = closing
                // `leave_room` travels on the same socket as the frames before it.
                if closing.leavesRoom, closings[1 - side] == nil {
                    let relay = networks[.relay] ?? .perfect
                    schedule(.peerLeft, to: 1 - side, after: relay.delay + relay.jitter + .milliseconds(1))
                }
            case .updateSession, .snapshotChanged, .storeSent, .markDelivered, .pinIdentity, .setLifetime,
                .closeDirectListener:
                break
            }
        }
    }

    private var roomReadySent = false

    private func send(_ item: ChatSessionMachine.Outgoing, on path: ChatSessionMachine.PathID, from side: Int) {
        let other = 1 - side
        let pathIsUp = path == .relay ? relayUp[side] : (path == Self.direct && directUp)
        guard pathIsUp else {
            schedule(.sendFailed(path: path, sent: 0), to: side)
            return
        }
        schedule(.sent(path: path, count: 1), to: side)
        switch item {
        case .signal(let message):
            guard relayUp[other] else { return }
            schedule(.signal(message.object), to: other, after: .milliseconds(2))
        case .frame(let frame):
            framesSent[side][path, default: 0] += 1
            // The relay drops frames for an absent peer.
            if path == .relay, !relayUp[other] { return }
            let network = networks[path] ?? .perfect
            guard !random.chance(network.loss) else { return }
            let copies = random.chance(network.duplication) ? 2 : 1
            for _ in 0..<copies {
                var delay = network.delay + random.jitter(upTo: network.jitter)
                if network.serviceTime > .zero {
                    let through = max(now.advanced(by: delay), bottleneckFree[other]).advanced(by: network.serviceTime)
                    bottleneckFree[other] = through
                    delay = now.duration(to: through)
                }
                schedule(.frame(frame, path: path), to: other, after: delay, path: path)
            }
        }
    }

    // MARK: Reading

    private var messageLog: [[(id: UInt64, payload: ChatPayload)]] = [[], []]
    private var deliveredLog: [[UInt64]] = [[], []]

    func messages(_ side: Int) -> [(id: UInt64, payload: ChatPayload)] { messageLog[side] }

    func delivered(_ side: Int) -> [UInt64] { deliveredLog[side] }

    func security(_ side: Int) -> ChatSecurity? {
        events[side].lazy.compactMap { if case .secured(let security) = $0 { security } else { nil } }.first
    }

    func closeReason(_ side: Int) -> ChatCloseReason? {
        events[side].lazy.compactMap { if case .closed(let reason) = $0 { reason } else { nil } }.first
    }

    func errors(_ side: Int) -> [ChatError] {
        events[side].compactMap { if case .error(let error) = $0 { error } else { nil } }
    }

    func paths(_ side: Int) -> [ChatPath] {
        events[side].compactMap { if case .path(let path) = $0 { path } else { nil } }
    }

    var bothActive: Bool { machines.allSatisfy { $0.state == .active } }
}

/// A binary min-heap of scheduled deliveries by (instant, order).
private struct ScheduleHeap {
    private var items: [SessionSimulation.Scheduled] = []

    var first: SessionSimulation.Scheduled? { items.first }

    private func less(_ a: Int, _ b: Int) -> Bool {
        (items[a].at, items[a].order) < (items[b].at, items[b].order)
    }

    mutating func insert(_ item: SessionSimulation.Scheduled) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() -> SessionSimulation.Scheduled {
        items.swapAt(0, items.count - 1)
        let first = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, less(left, smallest) { smallest = left }
            if right < items.count, less(right, smallest) { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
