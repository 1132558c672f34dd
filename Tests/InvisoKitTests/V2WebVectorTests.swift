import Foundation
import InvisoCrypto
@testable import InvisoKit
import InvisoNoise
import InvisoTesting
import Testing

/// The v2 session vector the browser client replays (`web/test/vectors/v2-session.json`,
/// `docs/web.md`): a whole pairing and a conversation between two `V2Pairing`s on seeded
/// generators, with everything each side drew from its generator, so that the page can
/// play either side and must produce the same frames byte for byte.
///
/// The file is generated here and committed; this test fails when the Swift side no
/// longer produces it (set `INVISO_WRITE_WEB_VECTORS=1` to write it after a deliberate
/// change of the protocol).
@Suite("v2 session vector for the browser client")
struct V2WebVectorTests {
    /// A generator that remembers every byte it gave (each `next()` as 8 bytes, little
    /// endian: the order `SecretBytes(randomCount:using:)` takes them in).
    struct RecordingGenerator: RandomNumberGenerator {
        var inner: SeededGenerator
        var drawn: [UInt8] = []

        mutating func next() -> UInt64 {
            let value = inner.next()
            withUnsafeBytes(of: value.littleEndian) { drawn += $0 }
            return value
        }
    }

    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web/test/vectors/v2-session.json")

    static func vector() throws -> [String: Any] {
        var setup = SeededGenerator(seed: 0x1d_2005)
        let creatorStaticBytes = setup.bytes(32)
        let joinerStaticBytes = setup.bytes(32)
        let creatorStatic = try NoiseKeyPair(rawPrivateKey: creatorStaticBytes)
        let joinerStatic = try NoiseKeyPair(rawPrivateKey: joinerStaticBytes)
        var creatorRandom = RecordingGenerator(inner: SeededGenerator(seed: 0xC4EA_7012))
        var joinerRandom = RecordingGenerator(inner: SeededGenerator(seed: 0x101E_4E12))
        var creator = try V2Pairing(
            role: .creator, invite: V2Fixture.invite, roomID: V2Fixture.roomID, staticKey: creatorStatic,
            using: &creatorRandom)
        var joiner = try V2Pairing(
            role: .joiner, invite: V2Fixture.invite, roomID: V2Fixture.roomID, staticKey: joinerStatic,
            using: &joinerRandom)
        var frames: [[String: Any]] = []
        var creatorSession: V2Session?
        var joinerSession: V2Session?
        // Frames go in the order they were sent; each side answers at once.
        var queue: [(toCreator: Bool, frame: [UInt8])] = []
        func take(_ actions: [V2Pairing.Action], fromCreator: Bool) {
            for action in actions {
                switch action {
                case .send(let frame):
                    frames.append(["from": fromCreator ? "creator" : "joiner", "frame": Hex.encode(frame)])
                    queue.append((!fromCreator, frame))
                case .established(let session):
                    if fromCreator { creatorSession = session } else { joinerSession = session }
                case .received, .failed:
                    break
                }
            }
        }
        take(creator.start(), fromCreator: true)
        take(joiner.start(), fromCreator: false)
        while !queue.isEmpty {
            let (toCreator, frame) = queue.removeFirst()
            if toCreator {
                take(try creator.receive(frame, using: &creatorRandom), fromCreator: true)
            } else {
                take(try joiner.receive(frame, using: &joinerRandom), fromCreator: false)
            }
        }
        guard var creatorSession, var joinerSession else { throw V2Error.notEstablished }
        // A conversation with two DH ratchet turns and a message out of order.
        var messages: [[String: Any]] = []
        func send(_ text: String, fromCreator: Bool) -> [UInt8] {
            let frame = fromCreator ? creatorSession.seal(Array(text.utf8)) : joinerSession.seal(Array(text.utf8))
            messages.append(["from": fromCreator ? "creator" : "joiner", "frame": Hex.encode(frame), "text": text])
            return frame
        }
        let c1 = send("hello from the creator", fromCreator: true)
        let c2 = send("a second one", fromCreator: true)
        #expect(try joinerSession.open(c2, using: &joinerRandom) == Array("a second one".utf8))
        #expect(try joinerSession.open(c1, using: &joinerRandom) == Array("hello from the creator".utf8))
        let j1 = send("hello from the joiner", fromCreator: false)
        #expect(try creatorSession.open(j1, using: &creatorRandom) == Array("hello from the joiner".utf8))
        let c3 = send("after a turn", fromCreator: true)
        #expect(try joinerSession.open(c3, using: &joinerRandom) == Array("after a turn".utf8))
        let j2 = send("and back ✓", fromCreator: false)
        #expect(try creatorSession.open(j2, using: &creatorRandom) == Array("and back ✓".utf8))
        #expect(creatorSession.safetyNumber == joinerSession.safetyNumber)
        return [
            "description": "Inviso v2 pairing and conversation from Tests/InvisoKitTests/V2WebVectorTests.swift. "
                + "Each side's generator output is given in the order drawn (32-byte draws: CPace scalar, Noise "
                + "ephemeral, ratchet keys); frames are listed in the order sent. Messages are delivered as listed, "
                + "except that the joiner opens the creator's second message before its first.",
            "room_id": V2Fixture.roomID,
            "invite": V2Fixture.invite.text,
            "creator_static_private": Hex.encode(creatorStaticBytes),
            "joiner_static_private": Hex.encode(joinerStaticBytes),
            "creator_random": Hex.encode(creatorRandom.drawn),
            "joiner_random": Hex.encode(joinerRandom.drawn),
            "pairing_frames": frames,
            "messages": messages,
            "open_order": ["creator#0 → joiner after creator#1", "joiner#0", "creator#2", "joiner#1"],
            "safety_number": creatorSession.safetyNumber,
        ]
    }

    @Test("the committed vector is what the Swift side produces")
    func vectorIsCurrent() throws {
        let vector = try Self.vector()
        if ProcessInfo.processInfo.environment["INVISO_WRITE_WEB_VECTORS"] == "1" {
            let data = try JSONSerialization.data(withJSONObject: vector, options: [.prettyPrinted, .sortedKeys])
            try (data + Data("\n".utf8)).write(to: Self.file)
        }
        // Compared as JSON values, not bytes: pretty-printing differs between Foundations.
        let committed = try JSONSerialization.jsonObject(with: try Data(contentsOf: Self.file)) as? NSDictionary
        #expect(
            committed == vector as NSDictionary,
            "web/test/vectors/v2-session.json is stale: run INVISO_WRITE_WEB_VECTORS=1 swift test --filter V2WebVectorTests")
    }
}
