import InvisoCrypto
@testable import InvisoKit
import InvisoNoise
import InvisoTesting
import Testing

/// Fixed inputs of the v2 tests.
enum V2Fixture {
    /// A room id in the server's format (48 lowercase hex characters).
    static let roomID = "6f1c2a9e0b7d4c3e8f5a6b2c1d0e9f8a7b6c5d4e3f2a1b0c"

    /// The invite both honest parties hold.
    static let invite = try! Invite(joinCode: "271828", words: ["orbit", "violin", "quantum"])

    /// Another invite with the same join code (a wrong guess of the words).
    static let wrongInvite = try! Invite(joinCode: "271828", words: ["orbit", "violin", "quarter"])

    /// A Noise key pair drawn from `generator`.
    static func keyPair(using generator: inout SeededGenerator) -> NoiseKeyPair {
        try! NoiseKeyPair(rawPrivateKey: generator.bytes(32))
    }
}

/// One side of a simulated pairing: the state machine, its seeded generator, and what its
/// actions produced.
struct V2Side {
    var pairing: V2Pairing
    var generator: SeededGenerator
    let staticKey: NoiseKeyPair
    var session: V2Session?
    var failure: V2Error?
    var received: [[UInt8]] = []

    init(_ role: V2Pairing.Role, invite: Invite = V2Fixture.invite, roomID: String = V2Fixture.roomID, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let staticKey = V2Fixture.keyPair(using: &generator)
        self.pairing = try! V2Pairing(role: role, invite: invite, roomID: roomID, staticKey: staticKey, using: &generator)
        self.generator = generator
        self.staticKey = staticKey
    }

    var role: V2Pairing.Role { pairing.role }

    /// Starts the pairing; the frames to send.
    mutating func start() -> [[UInt8]] {
        apply(pairing.start())
    }

    /// Hands a frame to the pairing; the frames to send, or the refusal.
    mutating func receive(_ frame: [UInt8]) throws(V2Error) -> [[UInt8]] {
        apply(try pairing.receive(frame, using: &generator))
    }

    private mutating func apply(_ actions: [V2Pairing.Action]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for action in actions {
            switch action {
            case .send(let frame): frames.append(frame)
            case .established(let session): self.session = session
            case .received(let message): received.append(message)
            case .failed(let error): failure = error
            }
        }
        return frames
    }
}

/// A relay between two sides: frames in flight, delivered first in, first out. Frames
/// a side refuses are dropped, as a driver would, and recorded.
struct V2Link {
    struct Delivery {
        var to: V2Pairing.Role
        var frame: [UInt8]
    }

    var creator: V2Side
    var joiner: V2Side
    var inFlight: [Delivery] = []
    /// Every frame delivered, in order.
    var delivered: [Delivery] = []
    /// Every refusal, in order.
    var refused: [V2Error] = []

    init(creatorSeed: UInt64 = 1, joinerSeed: UInt64 = 2, joinerInvite: Invite = V2Fixture.invite) {
        creator = V2Side(.creator, seed: creatorSeed)
        joiner = V2Side(.joiner, invite: joinerInvite, seed: joinerSeed)
    }

    init(creator: V2Side, joiner: V2Side) {
        self.creator = creator
        self.joiner = joiner
    }

    /// Both sides start, the creator first.
    mutating func start() {
        inFlight += creator.start().map { Delivery(to: .joiner, frame: $0) }
        inFlight += joiner.start().map { Delivery(to: .creator, frame: $0) }
    }

    /// The next frame in flight.
    var next: Delivery? { inFlight.first }

    /// Delivers the next frame in flight (or `substitute` in its place); `nil` when
    /// nothing is in flight, else the refusal if there was one.
    @discardableResult
    mutating func deliverNext(substitute: [UInt8]? = nil) -> V2Error?? {
        guard !inFlight.isEmpty else { return nil }
        var delivery = inFlight.removeFirst()
        if let substitute { delivery.frame = substitute }
        return .some(deliver(delivery))
    }

    /// Delivers one frame to its side; the refusal, if any.
    @discardableResult
    mutating func deliver(_ delivery: Delivery) -> V2Error? {
        delivered.append(delivery)
        do {
            let replies =
                delivery.to == .creator ? try creator.receive(delivery.frame) : try joiner.receive(delivery.frame)
            let peer: V2Pairing.Role = delivery.to == .creator ? .joiner : .creator
            inFlight += replies.map { Delivery(to: peer, frame: $0) }
            return nil
        } catch {
            refused.append(error)
            return error
        }
    }

    /// Delivers until nothing is in flight.
    mutating func run() {
        while deliverNext() != nil {}
    }

    /// A fresh link run to completion: both sides established.
    static func paired(creatorSeed: UInt64 = 1, joinerSeed: UInt64 = 2) -> V2Link {
        var link = V2Link(creatorSeed: creatorSeed, joinerSeed: joinerSeed)
        link.start()
        link.run()
        return link
    }

    /// Checks that both sides are established with sessions that talk both ways.
    func expectWorkingSessions(sourceLocation: SourceLocation = #_sourceLocation) throws {
        var creatorSession = try #require(creator.session, sourceLocation: sourceLocation)
        var joinerSession = try #require(joiner.session, sourceLocation: sourceLocation)
        #expect(creator.pairing.state == .established && joiner.pairing.state == .established, sourceLocation: sourceLocation)
        #expect(try joinerSession.open(creatorSession.seal([1, 2, 3])) == [1, 2, 3], sourceLocation: sourceLocation)
        #expect(try creatorSession.open(joinerSession.seal([4, 5])) == [4, 5], sourceLocation: sourceLocation)
    }
}
