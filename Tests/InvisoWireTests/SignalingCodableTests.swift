import Foundation
import InvisoWire
import Testing

@Suite("Signaling messages with Codable, and typed relay payloads")
struct SignalingCodableTests {
    /// The value with every object's keys sorted (decoders need not keep key order).
    static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            .object(JSONObject(object.members.sorted { $0.key < $1.key }.map { ($0.key, canonical($0.value)) }))
        case .array(let elements): .array(elements.map(canonical))
        default: value
        }
    }

    static let payloads: [any RelayPayload] = [
        WebRTCOffer(sdp: "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\n"),
        WebRTCAnswer(sdp: "v=0\r\n"),
        ICECandidateMessage(candidate: .init(candidate: "candidate:842163049 1 udp 1677729535 203.0.113.7 3478 typ srflx", sdpMLineIndex: 0, sdpMid: "0")),
        ICECandidateMessage(candidate: .init(candidate: "candidate:1 1 tcp 1 198.51.100.1 9 typ host", sdpMLineIndex: nil, sdpMid: nil)),
        KeyExchange(publicKey: "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=", sessionId: "room", timestamp: 1_763_700_000.125),
        KeyExchange(publicKey: "AA==", sessionId: "room"),
        KeyExchangeComplete(sessionId: "room", timestamp: 1_763_700_001),
        TransportCandidates(candidates: [.init(host: "192.168.1.20", port: 50_123), .init(host: "fe80::1", port: 50_123)]),
    ]

    @Test("every client message round-trips through JSONEncoder and JSONDecoder")
    func clientMessages() throws {
        var messages: [ClientMessage] = [
            .joinRoom(roomID: "r", deviceID: "d"), .leaveRoom, .ping, .pingPeer, .watchCode(joinID: "123456", client1: "c"),
        ]
        messages += Self.payloads.map(\.message)
        for message in messages {
            let data = try JSONEncoder().encode(message)
            let decoded = try JSONDecoder().decode(ClientMessage.self, from: data)
            #expect(Self.canonical(.object(decoded.object)) == Self.canonical(.object(message.object)))
            // What JSONEncoder wrote is what the server parses.
            #expect(Self.canonical(.object(try ClientMessage.parse(Array(data)).object)) == Self.canonical(.object(message.object)))
        }
    }

    @Test("every server message round-trips, relayed ones with unknown fields kept")
    func serverMessages() throws {
        var extra = KeyExchange(publicKey: "AA==", sessionId: "room").message.object
        extra["x-future"] = .array([.number("1.5"), .object(JSONObject([("deep", .bool(true))]))])
        let messages: [ServerMessage] = [
            .connected(clientID: "c-1", server: ServerMessage.serverName),
            .roomJoined(roomID: "r", userCount: 1, isInitiator: true, ready: false),
            .roomReady(roomID: "r", isInitiator: false), .roomFull(roomID: "r"), .peerLeft, .peerDisconnected,
            .leftRoom(roomID: "r"), .leftRoom(roomID: nil), .error("Invalid roomId"), .pong, .pingSent,
            .roomAccepted(joinID: "123456", roomID: "ab"), ServerMessage.relay(extra, from: "c-2", roomID: "r"),
        ]
        for message in messages {
            let decoded = try JSONDecoder().decode(ServerMessage.self, from: try JSONEncoder().encode(message))
            #expect(Self.canonical(.object(decoded.object)) == Self.canonical(.object(message.object)))
        }
    }

    @Test("a refused client message is a DecodingError carrying the server's error text")
    func refused() throws {
        for (text, reason) in [
            (#"{"type":"join_room","deviceId":"d"}"#, "Invalid roomId"),
            (#"{"type":"nope"}"#, "Unknown message type: nope"),
            (#"{"type":"key_exchange","publicKey":"AA=="}"#, "Missing or invalid field: sessionId"),
            (#"{"sdp":"x"}"#, "Missing message type"),
        ] {
            do {
                _ = try JSONDecoder().decode(ClientMessage.self, from: Data(text.utf8))
                Issue.record("decoded \(text)")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.debugDescription == reason)
            }
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ClientMessage.self, from: Data("[1]".utf8)) }
    }

    @Test("each payload survives message → relay by the server → typed payload on the other side")
    func payloadsThroughRelay() throws {
        for payload in Self.payloads {
            try Self.check(payload)
        }
    }

    private static func check<P: RelayPayload>(_ payload: P) throws {
        let frame = payload.message.object.serialized()
        guard case .relay(let kind, let object) = try ClientMessage.parse(frame) else {
            Issue.record("not a relay")
            return
        }
        #expect(kind == P.kind)
        let forwarded = try ServerMessage.parse(ServerMessage.relay(object, from: "c-9", roomID: "r").serialized())
        #expect(forwarded.relayedKind == P.kind && forwarded.relayedFrom == "c-9")
        #expect(try forwarded.payload(as: P.self) == payload)
        // The payload struct's own Codable form carries the same fields.
        #expect(try JSONDecoder().decode(P.self, from: JSONEncoder().encode(payload)) == payload)
    }

    @Test("the app's key_exchange frames (seconds with a fraction, room id as session) read as KeyExchange")
    func appKeyExchange() throws {
        let text = #"{"type":"key_exchange","publicKey":"3p2cJ8oPq0u6jMxCk7Ow5Q0mT1eX4yZ8A9bCdEfGh1I=","sessionId":"5c1e0f","timestamp":1763717054.739211}"#
        let forwarded = try ServerMessage.parse(Array(text.utf8))
        let exchange = try forwarded.payload(as: KeyExchange.self)
        #expect(exchange.sessionId == "5c1e0f" && exchange.timestamp == 1_763_717_054.739211)
        #expect(throws: SignalingError.self) { try forwarded.payload(as: KeyExchangeComplete.self) }
        #expect(throws: SignalingError.self) { try ServerMessage.pong.payload(as: KeyExchange.self) }
    }

    @Test(
        "malformed payloads are refused with the field's error",
        arguments: [
            (#"{"type":"ice_candidate","candidate":{"candidate":"c","sdpMLineIndex":"0"}}"#, "sdpMLineIndex"),
            (#"{"type":"ice_candidate","candidate":{"candidate":"c","sdpMid":7}}"#, "sdpMid"),
            (#"{"type":"key_exchange","publicKey":"AA==","sessionId":"s","timestamp":"now"}"#, "timestamp"),
            (#"{"type":"transport_candidates","candidates":[{"transport":"tcp","host":"h","port":0}]}"#, "candidates"),
            (#"{"type":"transport_candidates","candidates":[{"transport":"tcp","host":"h","port":65536}]}"#, "candidates"),
            (#"{"type":"transport_candidates","candidates":[{"transport":"tcp","host":"","port":1}]}"#, "candidates"),
            (#"{"type":"transport_candidates","candidates":["tcp:h:1"]}"#, "candidates"),
            (#"{"type":"transport_candidates","candidates":[{"transport":6,"host":"h","port":1}]}"#, "candidates"),
        ])
    func malformed(text: String, field: String) {
        #expect(throws: SignalingError.missingField(field)) { try ClientMessage.parse(Array(text.utf8)) }
    }

    @Test("a transport candidate without a transport is tcp")
    func defaultTransport() throws {
        let text = #"{"type":"transport_candidates","candidates":[{"host":"192.0.2.1","port":4000}]}"#
        let candidates = try ServerMessage.parse(Array(text.utf8)).payload(as: TransportCandidates.self).candidates
        #expect(candidates == [.init(transport: "tcp", host: "192.0.2.1", port: 4000)])
        let decoded = try JSONDecoder().decode(TransportCandidates.Candidate.self, from: Data(#"{"host":"h","port":1}"#.utf8))
        #expect(decoded.transport == "tcp")
    }

    @Test("more than 32 transport candidates are refused")
    func tooManyCandidates() {
        let many = TransportCandidates(candidates: (1...33).map { .init(host: "10.0.0.\($0)", port: 1000 + $0) })
        #expect(throws: SignalingError.missingField("candidates")) { try ClientMessage.parse(many.message.object.serialized()) }
    }

    @Test("JSONValue decodes and encodes every kind of value with JSONDecoder and JSONEncoder")
    func jsonValueCodable() throws {
        let text = #"{"n":null,"t":true,"f":false,"i":-42,"big":9007199254740993,"x":1.5,"e":2.5e-3,"s":"é\n","a":[1,[],{}],"o":{"k":"v"}}"#
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        let parsed = try JSONValue.parse(Array(text.utf8))
        #expect(Self.canonical(decoded).objectValue?["big"]?.integerValue == 9_007_199_254_740_993)
        #expect(decoded.objectValue?["x"] == .number("1.5") && decoded.objectValue?["e"] == .number("0.0025"))
        #expect(decoded.objectValue?["s"] == parsed.objectValue?["s"] && decoded.objectValue?["n"] == .null)
        let again = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(decoded))
        #expect(Self.canonical(again) == Self.canonical(decoded))
    }
}
