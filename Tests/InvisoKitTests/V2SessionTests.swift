import InvisoCrypto
@testable import InvisoKit
import InvisoTesting
import Testing

@Suite("Inviso v2 sessions")
struct V2SessionTests {
    /// Two established sessions and generators for their DH ratchet steps.
    struct Pair {
        var creator: V2Session
        var joiner: V2Session
        var creatorGenerator = SeededGenerator(seed: 101)
        var joinerGenerator = SeededGenerator(seed: 202)

        init(creatorSeed: UInt64 = 1, joinerSeed: UInt64 = 2) throws {
            let link = V2Link.paired(creatorSeed: creatorSeed, joinerSeed: joinerSeed)
            creator = try #require(link.creator.session)
            joiner = try #require(link.joiner.session)
        }

        mutating func toJoiner(_ frame: [UInt8]) throws(V2Error) -> [UInt8] {
            try joiner.open(frame, using: &joinerGenerator)
        }

        mutating func toCreator(_ frame: [UInt8]) throws(V2Error) -> [UInt8] {
            try creator.open(frame, using: &creatorGenerator)
        }
    }

    @Test("messages flow both ways across DH ratchet steps, out of order, replays refused")
    func conversation() throws {
        var pair = try Pair()
        var generator = SeededGenerator(seed: 9)
        for round in 0..<6 {
            // A burst from the creator, opened in a shuffled order.
            let burst = (0..<5).map { index in (Array("c\(round).\(index)".utf8), pair.creator.seal(Array("c\(round).\(index)".utf8))) }
            for (plaintext, frame) in burst.shuffled(using: &generator) {
                #expect(try pair.toJoiner(frame) == plaintext)
            }
            for (_, frame) in burst {
                #expect(throws: V2Error.duplicateMessage) { try pair.toJoiner(frame) }
            }
            // A reply burst, one message held back until after the next round trip.
            let replies = (0..<3).map { index in (Array("j\(round).\(index)".utf8), pair.joiner.seal(Array("j\(round).\(index)".utf8))) }
            #expect(try pair.toCreator(replies[0].1) == replies[0].0)
            #expect(try pair.toCreator(replies[2].1) == replies[2].0)
            let ping = pair.creator.seal([0xAA])
            #expect(try pair.toJoiner(ping) == [0xAA])
            #expect(try pair.toCreator(pair.joiner.seal([0xBB])) == [0xBB])
            #expect(try pair.toCreator(replies[1].1) == replies[1].0)  // from the previous chain
            #expect(throws: V2Error.duplicateMessage) { try pair.toCreator(replies[1].1) }
        }
        // An empty message and a large one.
        #expect(try pair.toJoiner(pair.creator.seal([])) == [])
        let large = [UInt8](repeating: 0x5A, count: 100_000)
        #expect(try pair.toCreator(pair.joiner.seal(large)) == large)
    }

    @Test("a tampered, reflected or foreign ratchet frame is refused and changes nothing")
    func tamper() throws {
        var pair = try Pair()
        let frame = pair.creator.seal(Array("integrity".utf8))
        for index in frame.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var flipped = frame
                flipped[index] ^= mask
                #expect(throws: V2Error.self) { try pair.toJoiner(flipped) }
            }
        }
        var creator = pair.creator
        #expect(throws: V2Error.self) { try creator.open(frame) }  // our own frame sent back
        var stranger = try Pair(creatorSeed: 3, joinerSeed: 4)
        #expect(throws: V2Error.authenticationFailed) { try stranger.toJoiner(frame) }
        #expect(throws: V2Error.unexpectedFrame) { try pair.toJoiner([0x02] + frame.dropFirst()) }
        #expect(throws: V2Error.malformedFrame) { try pair.toJoiner([0x03]) }
        #expect(throws: V2Error.malformedFrame) { try pair.toJoiner([]) }
        #expect(try pair.toJoiner(frame) == Array("integrity".utf8))
    }

    @Test("the counter may not jump more than 25,000 ahead")
    func tooFar() throws {
        var pair = try Pair()
        var frames: [[UInt8]] = []
        for _ in 0...25_001 { frames.append(pair.creator.seal([1])) }
        #expect(throws: V2Error.tooFarIntoFuture) { try pair.toJoiner(frames[25_001]) }
        #expect(try pair.toJoiner(frames[25_000]) == [1])
    }

    @Test("safety numbers: 60 digits, equal on both sides, different with another key")
    func safetyNumbers() throws {
        let pair = try Pair()
        let number = pair.creator.safetyNumber
        #expect(number.count == 60 && number.allSatisfy(\.isNumber))
        #expect(pair.joiner.safetyNumber == number)
        let other = try Pair(creatorSeed: 1, joinerSeed: 3)  // the same creator, another joiner key
        #expect(other.creator.safetyNumber == other.joiner.safetyNumber)
        #expect(other.creator.safetyNumber != number)
        // Each half belongs to one side's key: the creator's half is in both numbers.
        let halves = Set([number.prefix(30), number.suffix(30)])
        #expect(!halves.isDisjoint(with: [other.creator.safetyNumber.prefix(30), other.creator.safetyNumber.suffix(30)]))
    }

    @Test("a serialized session continues the conversation; malformed bytes are refused")
    func serialization() throws {
        var pair = try Pair()
        #expect(try pair.toJoiner(pair.creator.seal([1])) == [1])
        let pending = pair.joiner.seal([2])
        let storedCreator = pair.creator.serialized()
        let storedJoiner = pair.joiner.serialized()
        pair.creator = try V2Session(serialized: storedCreator)
        pair.joiner = try V2Session(serialized: storedJoiner)
        #expect(pair.creator.role == .creator && pair.joiner.role == .joiner)
        #expect(pair.creator.safetyNumber == pair.joiner.safetyNumber)
        #expect(try pair.toCreator(pending) == [2])
        #expect(throws: V2Error.duplicateMessage) { try pair.toCreator(pending) }
        for _ in 0..<3 {
            #expect(try pair.toJoiner(pair.creator.seal([3])) == [3])
            #expect(try pair.toCreator(pair.joiner.seal([4])) == [4])
        }
        #expect(pair.creator.serialized() != storedCreator)

        let bytes = storedCreator.withUnsafeBytes { Array($0) }
        var broken: [[UInt8]] = [[], [0x01], [0x01, 0x01], [0x02] + bytes.dropFirst(), [0x01, 0x03] + bytes.dropFirst(2)]
        broken.append(Array(bytes.dropLast(1)))
        for bytes in broken {
            #expect(throws: V2Error.invalidSession) { try V2Session(serialized: SecretBytes(bytes)) }
        }
    }
}
