import InvisoWire
import Testing

@Suite("Signaling messages: the Node server's field names and order, relays untouched")
struct SignalingMessageTests {
    /// The frames the Node server (apptrackit/chat-server, index.js) writes with
    /// `JSON.stringify`, whose key order is the order of its object literals.
    @Test(
        "Server frames are byte-identical to the Node server's",
        arguments: [
            (ServerMessage.connected(clientID: "c-1", server: "S"), #"{"type":"connected","clientId":"c-1","server":"S"}"#),
            (
                .roomJoined(roomID: "r", userCount: 1, isInitiator: true, ready: false),
                #"{"type":"room_joined","roomId":"r","userCount":1,"isInitiator":true,"ready":false}"#
            ),
            (
                .roomReady(roomID: "r", isInitiator: false),
                #"{"type":"room_ready","roomId":"r","message":"Both users connected. Ready for WebRTC handshake.","userCount":2,"isInitiator":false}"#
            ),
            (.roomFull(roomID: "r"), #"{"type":"room_full","error":"Room is full (max 2 users)","roomId":"r"}"#),
            (.peerLeft, #"{"type":"peer_left","message":"Other user left the room"}"#),
            (.peerDisconnected, #"{"type":"peer_disconnected","message":"Other user disconnected"}"#),
            (.leftRoom(roomID: "r"), #"{"type":"left_room","roomId":"r"}"#),
            (.leftRoom(roomID: nil), #"{"type":"left_room","roomId":null}"#),
            (.error("Invalid roomId"), #"{"type":"error","error":"Invalid roomId"}"#),
            (.pong, #"{"type":"pong"}"#),
            (.pingSent, #"{"type":"ping_sent"}"#),
            (.roomAccepted(joinID: "123456", roomID: "ab"), #"{"type":"room_accepted","joinid":"123456","roomid":"ab"}"#),
        ])
    func serverFrames(message: ServerMessage, text: String) throws {
        #expect(String(decoding: message.serialized(), as: UTF8.self) == text)
        #expect(try ServerMessage.parse(Array(text.utf8)) == message)
    }

    @Test("Relayed messages keep every field, nested objects and numbers, plus from and roomId")
    func relayKeepsFields() throws {
        let text = #"{"type":"ice_candidate","candidate":{"candidate":"candidate:842163049 1 udp 1677729535 203.0.113.7 3478 typ srflx","sdpMLineIndex":0,"sdpMid":"0"},"x-new-field":[1.50,{"deep":true}]}"#
        guard case .relay(let kind, let object) = try ClientMessage.parse(Array(text.utf8)) else {
            Issue.record("not a relay")
            return
        }
        #expect(kind == .iceCandidate)
        let forwarded = ServerMessage.relay(object, from: "client-a", roomID: "room-1")
        let expected = String(text.dropLast()) + #","from":"client-a","roomId":"room-1"}"#
        #expect(String(decoding: forwarded.serialized(), as: UTF8.self) == expected)
    }

    @Test("A client cannot spoof from/roomId: the server's values replace them in place")
    func spoofedFrom() throws {
        let text = #"{"type":"key_exchange","from":"someone-else","publicKey":"pk","sessionId":"s","timestamp":1763743200123,"roomId":"other"}"#
        guard case .relay(_, let object) = try ClientMessage.parse(Array(text.utf8)) else {
            Issue.record("not a relay")
            return
        }
        let forwarded = ServerMessage.relay(object, from: "me", roomID: "mine").serialized()
        #expect(
            String(decoding: forwarded, as: UTF8.self)
                == #"{"type":"key_exchange","from":"me","publicKey":"pk","sessionId":"s","timestamp":1763743200123,"roomId":"mine"}"#)
    }

    @Test("Client messages parse into their cases")
    func clientMessages() throws {
        #expect(
            try ClientMessage.parse(Array(#"{"type":"join_room","roomId":"r1","deviceId":"d1"}"#.utf8))
                == .joinRoom(roomID: "r1", deviceID: "d1"))
        #expect(try ClientMessage.parse(Array(#"{"type":"leave_room"}"#.utf8)) == .leaveRoom)
        #expect(try ClientMessage.parse(Array(#"{"type":"ping"}"#.utf8)) == .ping)
        #expect(try ClientMessage.parse(Array(#"{"type":"ping_peer"}"#.utf8)) == .pingPeer)
        #expect(
            try ClientMessage.parse(Array(#"{"type":"watch_code","joinid":"123456","client1":"d"}"#.utf8))
                == .watchCode(joinID: "123456", client1: "d"))
        for kind in RelayKind.allCases {
            let fields: String
            switch kind {
            case .webrtcOffer, .webrtcAnswer: fields = #""sdp":"v=0""#
            case .iceCandidate: fields = #""candidate":{"candidate":"c","sdpMLineIndex":0,"sdpMid":"0"}"#
            case .keyExchange: fields = #""publicKey":"p","sessionId":"s""#
            case .keyExchangeComplete: fields = #""sessionId":"s""#
            case .transportCandidates: fields = #""candidates":[]"#
            }
            let parsed = try ClientMessage.parse(Array(#"{"type":"\#(kind.rawValue)",\#(fields)}"#.utf8))
            guard case .relay(let parsedKind, _) = parsed else {
                Issue.record("\(kind) did not parse as a relay")
                continue
            }
            #expect(parsedKind == kind)
        }
    }

    @Test(
        "Bad client frames give the documented error text",
        arguments: [
            ("not json", "Invalid JSON format"),
            ("[1,2]", "Invalid JSON format"),
            (#"{"roomId":"r"}"#, "Missing message type"),
            (#"{"type":7}"#, "Missing message type"),
            (#"{"type":"join_room","deviceId":"d"}"#, "Invalid roomId"),
            (#"{"type":"join_room","roomId":"","deviceId":"d"}"#, "Invalid roomId"),
            (#"{"type":"join_room","roomId":5,"deviceId":"d"}"#, "Invalid roomId"),
            (#"{"type":"join_room","roomId":"r"}"#, "Invalid deviceId"),
            (#"{"type":"webrtc_offer"}"#, "Missing or invalid field: sdp"),
            (#"{"type":"ice_candidate","candidate":"c"}"#, "Missing or invalid field: candidate"),
            (#"{"type":"key_exchange","sessionId":"s"}"#, "Missing or invalid field: publicKey"),
            (#"{"type":"transport_candidates","candidates":{}}"#, "Missing or invalid field: candidates"),
            (#"{"type":"teleport"}"#, "Unknown message type: teleport"),
            (#"{"type":"\u0001\u0002"}"#, "Unknown message type"),
        ])
    func badFrames(text: String, error: String) {
        #expect(throws: SignalingError(error)) { try ClientMessage.parse(Array(text.utf8)) }
    }

    @Test("Identifiers longer than 128 bytes are refused")
    func longIdentifiers() {
        let long = String(repeating: "a", count: 129)
        #expect(throws: SignalingError.invalidRoomID) {
            try ClientMessage.parse(Array(#"{"type":"join_room","roomId":"\#(long)","deviceId":"d"}"#.utf8))
        }
    }
}
