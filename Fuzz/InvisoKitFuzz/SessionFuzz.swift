internal import Foundation
internal import InvisoFuzzSupport
internal import InvisoKit
internal import InvisoNoise
internal import InvisoStore
internal import InvisoTesting
internal import InvisoTime
internal import InvisoWire

/// Mode 6 of ``KitFuzzTarget``: two established ``ChatSessionMachine``s (paired once per
/// process, copied per input: they are values) exchange messages over a network the input
/// drives. Each step picks: a side sends a message; a frame in flight is delivered, dropped
/// or duplicated (any of them, so frames reorder); a forged frame or signal arrives; a timer
/// fires; a path reports sends, refuses, comes up or goes down; the relay drops and comes
/// back. After every step: each side's received ids are exactly 1, 2, 3, … with the
/// payloads sent, and delivery reports only name sent ids, in order.
enum SessionFuzz {
    struct Side {
        var machine: ChatSessionMachine
        var sent: [String] = []
        var received: [UInt64] = []
        var receivedTexts: [String] = []
        var delivered: [UInt64] = []
        var closed = false
    }

    /// Frames in flight to a side, by path.
    struct Flight {
        var to: Int
        var event: ChatSessionMachine.Event
    }

    static let time = ChatTime(now: .origin, date: Date(timeIntervalSince1970: 1_800_000_000))

    static let established: [ChatSessionMachine] = {
        var random = SeededGenerator(seed: 42)
        let invite = mustSucceed("an invite") { () throws(V2Error) in try Invite.generate(joinCode: "123456", using: &random) }
        var configuration = ChatSessionMachine.Configuration()
        configuration.persists = false
        configuration.triesDirectPath = false
        // Small windows, so that inputs of a few hundred steps reach every limit: a full
        // send window, a reorder window overrun, an ack due by count, a full outbox.
        configuration.reliable.sendWindow = 4
        configuration.reliable.reorderWindow = 6
        configuration.reliable.ackEvery = 3
        configuration.reliable.outboxLimit = 6
        func key() -> NoiseKeyPair {
            mustSucceed("a key") { () throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: random.bytes(32)) }
        }
        var machines = [
            ChatSessionMachine(
                role: .creator, invite: invite, roomID: nil, deviceID: "A", staticKey: key(), lifetime: .thirtyDays,
                configuration: configuration, random: SeededGenerator(seed: 1)),
            ChatSessionMachine(
                role: .joiner, invite: invite, roomID: "room", deviceID: "B", staticKey: key(), lifetime: .thirtyDays,
                configuration: configuration, random: SeededGenerator(seed: 2)),
        ]
        _ = machines[0].start(at: time)
        _ = machines[1].start(at: time)
        var queue: [(Int, ChatSessionMachine.Event)] = [(0, .codeAccepted(roomID: "room")), (0, .roomReady), (1, .roomReady)]
        while !queue.isEmpty {
            let (side, event) = queue.removeFirst()
            for action in machines[side].handle(event, at: time) {
                switch action {
                case .send(.frame(let frame), let path):
                    queue += [(1 - side, .frame(frame, path: .relay)), (side, .sent(path: path, count: 1))]
                case .send(.signal(let message), let path):
                    queue += [(1 - side, .signal(message.object)), (side, .sent(path: path, count: 1))]
                case .storeReceived(let id, let payload):
                    queue.append((side, .receivedStored(id: id, payload: payload, isNew: true)))
                default:
                    break
                }
            }
        }
        invariant(machines.allSatisfy { $0.state == .active }, "the fixture pair did not pair")
        return machines
    }()

    static let maxUnacknowledged = 8
    static let maxPathEvents = 16

    static func run(_ input: inout FuzzInput) {
        var sides = established.map { Side(machine: $0) }
        var flights: [Flight] = []
        var now = ClockInstant.origin
        var nextPath = 1
        var steps = 0
        var pathEvents = 0
        while !input.isEmpty, steps < 400 {
            steps += 1
            let operation = input.byte()
            let side = Int(operation & 1)
            now = now.advanced(by: .milliseconds(Int64(input.byte())))
            let time = ChatTime(now: now, date: Self.time.date)
            var actions: [ChatSessionMachine.Action] = []
            switch (operation >> 1) % 10 {
            case 0, 1:
                // At most `maxUnacknowledged` messages wait for an ack, and an input makes
                // at most `maxPathEvents` path changes: every switch seals the backlog
                // again, and unbounded, one input cost thousands of seals (the target ran
                // at ~350 inputs/s) without reaching code a small backlog does not.
                guard sides[side].sent.count - sides[side].delivered.count < maxUnacknowledged else { continue }
                let text = "m\(sides[side].sent.count)"
                guard let result = try? sides[side].machine.send(.text(text), at: time) else { continue }
                sides[side].sent.append(text)
                invariant(result.id == UInt64(sides[side].sent.count), "ids are not 1, 2, 3, …")
                actions = result.actions
            case 2, 3:
                guard !flights.isEmpty else { continue }
                let index = Int(input.byte()) % flights.count
                let flight = flights[index]
                switch input.byte() % 4 {
                case 0: flights.remove(at: index)  // lost
                case 1: break  // duplicated: delivered and kept
                default: flights.remove(at: index)
                }
                if !flights.indices.contains(index) || true {
                    let result = sides[flight.to].machine.handle(flight.event, at: time)
                    apply(result, side: flight.to, sides: &sides, flights: &flights, time: time)
                }
                continue
            case 4:
                // A forged frame: whatever the input says, it must deliver nothing.
                let before = sides[side].received.count
                actions = sides[side].machine.handle(.frame(input.chunk(), path: .relay), at: time)
                apply(actions, side: side, sides: &sides, flights: &flights, time: time)
                invariant(sides[side].received.count == before, "a forged frame delivered a message")
                continue
            case 5:
                if case .object(let object)? = try? JSONValue.parse(input.chunk()) {
                    actions = sides[side].machine.handle(.signal(object), at: time)
                }
            case 6:
                actions = sides[side].machine.handle(.timerFired(ChatSessionMachine.Timer.allCases[Int(input.byte()) % 4]), at: time)
            case 7...9 where pathEvents >= maxPathEvents:
                continue
            case 7:
                pathEvents += 1
                let path = ChatSessionMachine.PathID(Int(input.byte()) % (nextPath + 1))
                let count = Int(input.byte() % 8)
                let event: ChatSessionMachine.Event =
                    input.byte() & 1 == 0 ? .sent(path: path, count: count) : .sendFailed(path: path, sent: count)
                actions = sides[side].machine.handle(event, at: time)
            case 8:
                pathEvents += 1
                if input.byte() & 1 == 0 {
                    actions = sides[side].machine.handle(.pathUp(ChatSessionMachine.PathID(nextPath), .direct), at: time)
                    nextPath += 1
                } else {
                    actions = sides[side].machine.handle(.pathDown(ChatSessionMachine.PathID(Int(input.byte()) % (nextPath + 1))), at: time)
                }
            default:
                pathEvents += 1
                let event: ChatSessionMachine.Event = input.byte() & 1 == 0 ? .relayDisconnected : .roomReady
                actions = sides[side].machine.handle(event, at: time)
            }
            apply(actions, side: side, sides: &sides, flights: &flights, time: time)
        }
    }

    /// Carries out actions: sends enter the network (reported sent at once), stored
    /// messages come back as stored, emitted events are checked.
    static func apply(
        _ actions: [ChatSessionMachine.Action], side: Int, sides: inout [Side], flights: inout [Flight], time: ChatTime
    ) {
        var pending = actions
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .send(.frame(let frame), let path):
                flights.append(Flight(to: 1 - side, event: .frame(frame, path: path)))
                pending += sides[side].machine.handle(.sent(path: path, count: 1), at: time)
            case .send(.signal(let message), let path):
                flights.append(Flight(to: 1 - side, event: .signal(message.object)))
                pending += sides[side].machine.handle(.sent(path: path, count: 1), at: time)
            case .storeReceived(let id, let payload):
                pending += sides[side].machine.handle(.receivedStored(id: id, payload: payload, isNew: true), at: time)
            case .emit(.message(let id, let payload)):
                invariant(!sides[side].closed, "a message after the session closed")
                invariant(id == UInt64(sides[side].received.count + 1), "message \(id) after \(sides[side].received.count)")
                sides[side].received.append(id)
                if case .text(let text) = payload {
                    let expected = sides[1 - side].sent.indices.contains(Int(id) - 1) ? sides[1 - side].sent[Int(id) - 1] : nil
                    invariant(text == expected, "message \(id) is not what was sent")
                }
            case .emit(.delivered(let id)):
                invariant(id == UInt64(sides[side].delivered.count + 1), "delivered \(id) out of order")
                invariant(Int(id) <= sides[side].sent.count, "delivered \(id), never sent")
                sides[side].delivered.append(id)
            case .emit(.closed):
                sides[side].closed = true
            default:
                break
            }
        }
    }
}
