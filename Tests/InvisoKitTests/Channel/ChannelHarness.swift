import Crypto
import InvisoCrypto
@testable import InvisoKit
import InvisoTesting
import InvisoWire

/// Runs secure channels against each other in memory: every action's frame or signaling
/// message goes to the party `routes` names, first in first out. A middle party (a
/// relay that substitutes keys) is just another channel in the routing.
struct ChannelHarness {
    enum Item {
        case frame([UInt8])
        case signal(JSONObject)
    }

    var parties: [any SecureChannel]
    let routes: [Int]
    var queue: [(to: Int, item: Item)] = []
    var established: [Bool]
    var failures: [SecureChannelError?]
    var received: [[ReliableRecord]]
    /// Every frame and signaling message carried, as bytes (what a relay sees).
    var carried: [[UInt8]] = []

    init(_ parties: [any SecureChannel], routes: [Int]) {
        self.parties = parties
        self.routes = routes
        established = Array(repeating: false, count: parties.count)
        failures = Array(repeating: nil, count: parties.count)
        received = Array(repeating: [], count: parties.count)
    }

    /// Starts every party (room_ready) and runs until nothing is in flight.
    mutating func startAll() {
        for index in parties.indices { apply(parties[index].start(), from: index) }
        run()
    }

    mutating func run() {
        var steps = 0
        while !queue.isEmpty, steps < 10_000 {
            steps += 1
            let (to, item) = queue.removeFirst()
            let actions: [SecureChannelAction]
            switch item {
            case .frame(let frame): actions = (try? parties[to].receive(frame: frame)) ?? []
            case .signal(let object): actions = (try? parties[to].receive(signal: object)) ?? []
            }
            apply(actions, from: to)
        }
    }

    mutating func apply(_ actions: [SecureChannelAction], from index: Int) {
        for action in actions {
            switch action {
            case .sendFrame(let frame):
                carried.append(frame)
                queue.append((routes[index], .frame(frame)))
            case .sendSignal(let message):
                carried.append(message.object.serialized())
                queue.append((routes[index], .signal(message.object)))
            case .established: established[index] = true
            case .received(let record): received[index].append(record)
            case .failed(let error): failures[index] = error
            }
        }
    }

    /// Seals a record at `from` and delivers it.
    mutating func send(_ record: ReliableRecord, from index: Int) throws {
        let frame = try parties[index].seal(record)
        carried.append(frame)
        queue.append((routes[index], .frame(frame)))
        run()
    }
}

enum ChannelFixture {
    static let roomID = V2Fixture.roomID

    static func v2(_ role: V2Pairing.Role, invite: Invite = V2Fixture.invite, seed: UInt64) -> V2SecureChannel {
        var generator = SeededGenerator(seed: seed)
        let key = V2Fixture.keyPair(using: &generator)
        return try! V2SecureChannel(role: role, invite: invite, roomID: roomID, staticKey: key, random: generator)
    }

    static func v1(_ role: V1Channel.Role, seed: UInt64) -> V1SecureChannel {
        var generator = SeededGenerator(seed: seed)
        let key = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: generator.bytes(32))
        return V1SecureChannel(role: role, roomID: roomID, privateKey: key, timestamp: { 1_800_000_000.5 })
    }
}
