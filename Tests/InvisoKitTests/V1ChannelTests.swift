import Crypto
import Foundation
import InvisoCrypto
@testable import InvisoKit
import InvisoStore
import InvisoTesting
import Testing

/// The shipped iOS app's own v1 frames (`shared/vectors/inviso-v1/app-v1.json`, made by
/// apptrackit/chat-ios @ 9040385's encryption code; see that folder's README).
private struct AppVectors {
    struct Message {
        var sender: String
        var counter: UInt64
        var plaintext: String
        var messageKey: [UInt8]
        var wire: [UInt8]
    }

    var alicePrivate: Curve25519.KeyAgreement.PrivateKey
    var bobPrivate: Curve25519.KeyAgreement.PrivateKey
    var alicePublicBase64: String
    var bobPublic: [UInt8]
    var sessionKey: [UInt8]
    var messages: [Message]

    static func load() throws -> AppVectors? {
        guard let url = SharedVectors.url("inviso-v1/app-v1.json") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/inviso-v1/app-v1.json is missing under CI=true") }
            print(SharedVectors.skipMessage("Inviso v1 app vectors"))
            return nil
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        func hex(_ key: String, in object: [String: Any] = root) throws -> [UInt8] {
            let text = try #require(object[key] as? String, "\(key)")
            return try #require([UInt8](hex: text), "\(key)")
        }
        let messages = try #require(root["messages"] as? [[String: Any]]).map { object in
            Message(
                sender: try #require(object["sender"] as? String), counter: UInt64(try #require(object["counter"] as? Int)),
                plaintext: try #require(object["plaintext"] as? String), messageKey: try hex("message_key", in: object),
                wire: Array(try #require(object["wire_json"] as? String).utf8))
        }
        return AppVectors(
            alicePrivate: try .init(rawRepresentation: try hex("alice_private")),
            bobPrivate: try .init(rawRepresentation: try hex("bob_private")),
            alicePublicBase64: try #require(root["alice_public_b64"] as? String), bobPublic: try hex("bob_public"),
            sessionKey: try hex("session_key"), messages: messages)
    }
}

@Suite("Inviso v1 (the iOS app's format)")
struct V1ChannelTests {
    @Test("the session key, every message key and every app frame match, from both sides", .enabled(if: SharedVectors.present("inviso-v1/app-v1.json"), SharedVectors.skipComment))
    func appVectors() throws {
        guard let vectors = try AppVectors.load() else { return }
        let alicePublic = try #require(Base64.decode(vectors.alicePublicBase64))
        let fromAlice = try V1Channel.sessionKey(privateKey: vectors.alicePrivate, peerPublicKey: vectors.bobPublic)
        let fromBob = try V1Channel.sessionKey(privateKey: vectors.bobPrivate, peerPublicKey: alicePublic)
        #expect(fromAlice == SecretBytes(vectors.sessionKey))
        #expect(fromBob == fromAlice)

        var alice = V1Channel(sessionKey: fromAlice, role: .initiator)
        var bob = V1Channel(sessionKey: fromBob, role: .responder)
        var ran = 0
        for message in vectors.messages {
            let key = alice.messageKey(message.counter).withUnsafeBytes { Array($0) }
            #expect(key == message.messageKey, "message key \(message.sender) \(message.counter)")
            let plaintext = message.sender == "alice" ? try bob.open(message.wire) : try alice.open(message.wire)
            #expect(String(decoding: plaintext, as: UTF8.self) == message.plaintext)
            ran += 1
        }
        #expect(ran == vectors.messages.count && ran == 6)
    }

    @Test("our frames have the app's shape and open on the other side")
    func ourFrames() throws {
        var (alice, bob) = Self.pair()
        for text in ["hello", "", String(repeating: "ünïcødé ", count: 200)] {
            let frame = try alice.seal(Array(text.utf8))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any])
            #expect(Set(object.keys) == ["v", "c", "n", "d", "t"])
            #expect(object["v"] as? Int == 1)
            #expect(Data(base64Encoded: try #require(object["n"] as? String))?.count == 12)
            #expect(Data(base64Encoded: try #require(object["t"] as? String))?.count == 16)
            #expect(try bob.open(frame) == Array(text.utf8))
        }
        // Both directions: bob's counter 0 shares alice's key 0 but not her nonce.
        let reply = try bob.seal(Array("reply".utf8))
        #expect(try alice.open(reply) == Array("reply".utf8))
    }

    @Test("a replayed frame is refused and changes nothing; out-of-order frames still open")
    func replay() throws {
        var (alice, bob) = Self.pair()
        let frames = try (0..<4).map { try alice.seal(Array("m\($0)".utf8)) }
        #expect(try bob.open(frames[2]) == Array("m2".utf8))
        #expect(throws: V1Error.replayed) { try bob.open(frames[2]) }
        #expect(try bob.open(frames[0]) == Array("m0".utf8))
        #expect(throws: V1Error.replayed) { try bob.open(frames[0]) }
        #expect(try bob.open(frames[3]) == Array("m3".utf8))
        #expect(try bob.open(frames[1]) == Array("m1".utf8))
    }

    @Test("our own frame sent back to us is refused (both directions share each key in v1)")
    func reflection() throws {
        var (alice, _) = Self.pair()
        let frame = try alice.seal(Array("mine".utf8))
        #expect(throws: V1Error.reflected) { try alice.open(frame) }
    }

    @Test("a tampered frame fails authentication and the genuine one still opens")
    func tamper() throws {
        var (alice, bob) = Self.pair()
        let frame = try alice.seal(Array("integrity".utf8))
        let text = String(decoding: frame, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any])
        let data = try #require(object["d"] as? String)
        var flipped = try #require(Data(base64Encoded: data))
        flipped[0] ^= 0x01
        let forged = text.replacingOccurrences(of: data, with: flipped.base64EncodedString())
        #expect(throws: V1Error.authenticationFailed) { try bob.open(Array(forged.utf8)) }
        let otherKey = V1Channel(sessionKey: SecretBytes([UInt8](repeating: 7, count: 32)), role: .responder)
        var stranger = otherKey
        #expect(throws: V1Error.authenticationFailed) { try stranger.open(frame) }
        #expect(try bob.open(frame) == Array("integrity".utf8))
    }

    @Test("low-order and malformed peer keys are refused")
    func peerKeys() throws {
        let mine = Curve25519.KeyAgreement.PrivateKey()
        for lowOrder in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31)] {
            #expect(throws: V1Error.allZeroSharedSecret) { try V1Channel.sessionKey(privateKey: mine, peerPublicKey: lowOrder) }
        }
        #expect(throws: V1Error.invalidPublicKey) { try V1Channel.sessionKey(privateKey: mine, peerPublicKey: [1, 2, 3]) }
    }

    @Test("frames that are not the app's are refused with a typed error")
    func malformed() {
        let nonce = "AAAAAAAAAAAAAAAA", tag = "AAAAAAAAAAAAAAAAAAAAAA=="
        let cases: [(String, V1Error)] = [
            ("", .malformedFrame), ("[]", .malformedFrame), ("{}", .malformedFrame),
            (#"{"v":2,"c":0,"n":"\#(nonce)","d":"","t":"\#(tag)"}"#, .unsupportedVersion),
            (#"{"v":1,"c":-1,"n":"\#(nonce)","d":"","t":"\#(tag)"}"#, .malformedFrame),
            (#"{"v":1,"c":9007199254740992,"n":"\#(nonce)","d":"","t":"\#(tag)"}"#, .malformedFrame),
            (#"{"v":1,"c":0,"n":"AAAA","d":"","t":"\#(tag)"}"#, .malformedFrame),
            (#"{"v":1,"c":0,"n":"\#(nonce)","d":"Zh==","t":"\#(tag)"}"#, .malformedFrame),
            (#"{"v":1,"c":0,"n":"\#(nonce)","d":"","t":"AAAA"}"#, .malformedFrame),
            (#"{"v":1,"c":0,"n":"\#(nonce)","t":"\#(tag)"}"#, .malformedFrame),
            (#"{"v":1,"c":"0","n":"\#(nonce)","d":"","t":"\#(tag)"}"#, .malformedFrame),
        ]
        var (_, bob) = Self.pair()
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try bob.open(Array(text.utf8)) }
        }
    }

    static func pair() -> (V1Channel, V1Channel) {
        let key = SecretBytes((0..<32).map { UInt8($0) })
        return (V1Channel(sessionKey: key, role: .initiator), V1Channel(sessionKey: key, role: .responder))
    }
}

@Suite("Chat payloads (the app's message kinds)")
struct ChatPayloadTests {
    @Test("the app's lifetime proposal vector decodes")
    func appProposal() throws {
        let text = #"{"lifetime":"1h","type":"lifetime_proposal","sessionId":"0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778","proposedAt":1763700000.25}"#
        #expect(
            ChatPayload(plaintext: Array(text.utf8))
                == .lifetimeProposal(
                    sessionID: "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778", lifetime: .oneHour, proposedAt: 1_763_700_000.25))
    }

    @Test("every kind round-trips; unknown or incomplete objects are text")
    func roundTrip() {
        let payloads: [ChatPayload] = [
            .text("plain"), .text(#"{"type":"nonsense"}"#), .text("{not json"),
            .location(latitude: 47.5, longitude: 19.04, accuracy: 5, timestamp: 1_763_700_000_123),
            .location(latitude: -33.9, longitude: 151.2, accuracy: nil, timestamp: 1),
            .voice(duration: 2.5, waveform: [0, 0.25, 1], audioData: "AAAA", timestamp: 1_763_700_000_000),
            .lifetimeProposal(sessionID: "s", lifetime: .sevenDays, proposedAt: 1_763_700_000),
            .lifetimeAccept(sessionID: "s", lifetime: .ephemeral, acceptedAt: 1_763_700_001.5),
            .lifetimeReject(sessionID: "s", reason: "no"), .lifetimeReject(sessionID: "s", reason: nil),
            .profile(name: "Zoë 👋"), .profile(name: String(repeating: "n", count: ChatPayload.maxProfileName)),
        ]
        for payload in payloads {
            #expect(ChatPayload(plaintext: payload.plaintext) == payload)
        }
        #expect(ChatPayload(plaintext: Array(#"{"type":"location","latitude":91,"longitude":0,"timestamp":1}"#.utf8))
            == .text(#"{"type":"location","latitude":91,"longitude":0,"timestamp":1}"#))
        // A name that is empty or too long is text, not a profile.
        for name in ["", String(repeating: "n", count: ChatPayload.maxProfileName + 1)] {
            let text = #"{"type":"profile","name":"\#(name)"}"#
            #expect(ChatPayload(plaintext: Array(text.utf8)) == .text(text))
        }
        #expect(MessageLifetime.allCases.map(\.rawValue) == ["ephemeral", "1h", "6h", "1d", "7d", "30d"])
    }
}
