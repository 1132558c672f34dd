import Foundation
import InvisoServer
import InvisoWire
import NIOWebSocket
import ServiceLifecycle
import Testing

/// The iOS app's sequence against a real server on 127.0.0.1, over real sockets.
@Suite("Server integration")
struct ServerIntegrationTests {
    static let creator = "A1B2C3D4-0000-4000-8000-00000000C001"
    static let joiner = "A1B2C3D4-0000-4000-8000-00000000C002"

    @Test("the app's sequence: create, accept, check, join, room_ready, relay, ping, leave, close, rejoin, purge")
    func appSequence() async throws {
        try await TestServer.with { server, _ async throws in
            // REST: create, check (pending), accept, check (accepted).
            let created = try await server.post(
                "/api/rooms", #"{"joinid":"482913","client1":"\#(Self.creator)","expiresInSeconds":300,"platform":"ios"}"#)
            #expect(created.status == 201)
            #expect(created.json?["ok"] == .bool(true))
            #expect(created.json?["joinid"]?.stringValue == "482913")
            #expect(created.json?["exp"]?.stringValue == "2027-01-15T08:05:00.000Z")
            #expect(try await server.post("/api/rooms/check", #"{"joinid":"482913","client1":"\#(Self.creator)"}"#).status == 204)
            let accepted = try await server.post("/api/rooms/accept", #"{"joinid":"482913","client2":"\#(Self.joiner)"}"#)
            #expect(accepted.status == 200)
            let roomID = try #require(accepted.json?["roomid"]?.stringValue)
            #expect(roomID.count == 48 && roomID.allSatisfy(\.isHexDigit))
            let checked = try await server.post("/api/rooms/check", #"{"joinid":"482913","client1":"\#(Self.creator)"}"#)
            #expect(checked.status == 200 && checked.json?["roomid"]?.stringValue == roomID)
            let lookup = try await server.request("GET", "/api/rooms?roomid=\(roomID)")
            #expect(lookup.status == 200 && lookup.json?.keys == ["roomid"])

            // The joiner connects first; the creator is still the initiator.
            let (joiner, joinerHello) = try await TestSocket.connect(server)
            let (creator, creatorHello) = try await TestSocket.connect(server)
            #expect(joinerHello["clientId"]?.stringValue != creatorHello["clientId"]?.stringValue)
            #expect(creatorHello["server"]?.stringValue == ServerMessage.serverName)
            try await joiner.send(.joinRoom(roomID: roomID, deviceID: Self.joiner))
            let joinedAlone = try await joiner.next()
            #expect(joinedAlone["type"]?.stringValue == "room_joined")
            #expect(joinedAlone["userCount"] == .integer(1))
            #expect(joinedAlone["isInitiator"] == .bool(false))
            #expect(joinedAlone["ready"] == .bool(false))
            try await creator.send(.joinRoom(roomID: roomID, deviceID: Self.creator))
            let creatorJoined = try await creator.next()
            #expect(creatorJoined["type"]?.stringValue == "room_joined")
            #expect(creatorJoined["userCount"] == .integer(2) && creatorJoined["ready"] == .bool(true))
            #expect(creatorJoined["isInitiator"] == .bool(true))
            let creatorReady = try await creator.next()
            #expect(creatorReady["type"]?.stringValue == "room_ready" && creatorReady["isInitiator"] == .bool(true))
            #expect(creatorReady["userCount"] == .integer(2) && creatorReady["roomId"]?.stringValue == roomID)
            let joinerReady = try await joiner.next()
            #expect(joinerReady["type"]?.stringValue == "room_ready" && joinerReady["isInitiator"] == .bool(false))

            // Offer, answer, nested ICE candidate and key exchange, all fields kept.
            let offer = #"{"type":"webrtc_offer","sdp":"v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n","extra":{"n":[1,2]}}"#
            try await creator.send(offer)
            let relayedOffer = try await joiner.next()
            #expect(relayedOffer["sdp"]?.stringValue == "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n")
            #expect(relayedOffer["extra"] == .object(JSONObject([("n", .array([.integer(1), .integer(2)]))])))
            #expect(relayedOffer["from"]?.stringValue == creatorHello["clientId"]?.stringValue)
            #expect(relayedOffer["roomId"]?.stringValue == roomID)
            try await joiner.send(#"{"type":"webrtc_answer","sdp":"v=0 answer"}"#)
            #expect(try await creator.next()["sdp"]?.stringValue == "v=0 answer")
            try await creator.send(
                #"{"type":"ice_candidate","candidate":{"candidate":"candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host","sdpMLineIndex":0,"sdpMid":"0"}}"#)
            let candidate = try await joiner.next()
            let nested = try #require(candidate["candidate"]?.objectValue)
            #expect(nested["sdpMLineIndex"] == .integer(0) && nested["sdpMid"]?.stringValue == "0")
            #expect(nested["candidate"]?.stringValue?.hasPrefix("candidate:1") == true)
            try await joiner.send(#"{"type":"key_exchange","publicKey":"BASE64KEY==","sessionId":"s-1","timestamp":1763700000}"#)
            let keys = try await creator.next()
            #expect(keys["type"]?.stringValue == "key_exchange" && keys["publicKey"]?.stringValue == "BASE64KEY==")
            #expect(keys["sessionId"]?.stringValue == "s-1" && keys["timestamp"] == .integer(1_763_700_000))
            try await creator.send(#"{"type":"key_exchange_complete","sessionId":"s-1"}"#)
            #expect(try await joiner.nextType() == "key_exchange_complete")
            try await creator.send(#"{"type":"transport_candidates","candidates":[{"host":"192.0.2.1","port":4000}]}"#)
            #expect(try await joiner.next()["candidates"]?.arrayValue?.count == 1)
            // Binary frames go through untouched.
            try await joiner.send(binary: [0, 1, 2, 255])
            guard case .binary(let bytes)? = try await creator.nextEvent() else { throw TestFailure("no binary") }
            #expect(bytes == [0, 1, 2, 255])

            // Application ping and a control-frame ping.
            try await creator.send(#"{"type":"ping"}"#)
            #expect(try await creator.nextType() == "pong")
            try await creator.sendPing()
            try await creator.send(#"{"type":"ping_peer"}"#)
            #expect(try await creator.nextType() == "ping_sent")

            // Leave → peer_left; left_room back.
            try await joiner.send(#"{"type":"leave_room"}"#)
            #expect(try await creator.nextType() == "peer_left")
            let left = try await joiner.next()
            #expect(left["type"]?.stringValue == "left_room" && left["roomId"]?.stringValue == roomID)
            try await creator.send(offer)
            #expect(try await creator.next()["error"]?.stringValue == "Room must have exactly 2 users for WebRTC")

            // Rejoin, then the joiner's socket closes → peer_disconnected.
            try await joiner.send(.joinRoom(roomID: roomID, deviceID: Self.joiner))
            #expect(try await joiner.nextType() == "room_joined")
            #expect(try await joiner.nextType() == "room_ready")
            #expect(try await creator.nextType() == "room_ready")
            try await joiner.close()
            #expect(try await creator.nextType() == "peer_disconnected")

            // The joiner comes back on a new socket (a reinstall would too): the creator
            // stays the initiator.
            let (again, _) = try await TestSocket.connect(server)
            try await again.send(.joinRoom(roomID: roomID, deviceID: Self.joiner))
            #expect(try await again.next()["isInitiator"] == .bool(false))
            #expect(try await again.next()["isInitiator"] == .bool(false))
            #expect(try await creator.next()["isInitiator"] == .bool(true))

            // Purge: the room goes, its members are told, the code is free again.
            let purged = try await server.post("/api/user/purge", #"{"deviceIds":["\#(Self.creator)","\#(Self.creator)"]}"#)
            #expect(purged.status == 200)
            #expect(purged.json?["success"] == .bool(true) && purged.json?["deviceIdCount"] == .integer(1))
            #expect(purged.json?["roomsDeleted"] == .integer(1) && purged.json?["pendingsDeleted"] == .integer(1))
            #expect(try await creator.next()["type"]?.stringValue == "left_room")
            #expect(try await again.next()["type"]?.stringValue == "left_room")
            #expect(try await server.request("GET", "/api/rooms?roomid=\(roomID)").status == 404)
            try await creator.close()
            try await again.close()
        }
    }

    @Test("watch_code pushes room_accepted to the creator; only the creator may watch")
    func watchCode() async throws {
        try await TestServer.with { server, _ async throws in
            #expect(try await server.post("/api/rooms", #"{"joinid":"100200","client1":"c-1","expiresInSeconds":60}"#).status == 201)
            let (creator, _) = try await TestSocket.connect(server)
            try await creator.send(#"{"type":"watch_code","joinid":"100200","client1":"someone-else"}"#)
            #expect(try await creator.next()["error"]?.stringValue == "Code not found or expired")
            try await creator.send(#"{"type":"watch_code","joinid":"100200","client1":"c-1"}"#)
            try await creator.expectSilence()
            let accepted = try await server.post("/api/rooms/accept", #"{"joinid":"100200","client2":"j-1"}"#)
            let push = try await creator.next()
            #expect(push["type"]?.stringValue == "room_accepted" && push["joinid"]?.stringValue == "100200")
            #expect(push["roomid"] == accepted.json?["roomid"])
            // Watching an accepted code answers at once.
            try await creator.send(#"{"type":"watch_code","joinid":"100200","client1":"c-1"}"#)
            #expect(try await creator.next()["roomid"] == accepted.json?["roomid"])
            try await creator.close()
        }
    }

    @Test("join_room only for the room's two devices; a rejoin replaces the old socket")
    func membership() async throws {
        try await TestServer.with { server, _ async throws in
            let roomID = try await server.pair(code: "300400", creator: "c-1", joiner: "j-1")
            let (stranger, _) = try await TestSocket.connect(server)
            try await stranger.send(.joinRoom(roomID: roomID, deviceID: "intruder"))
            #expect(try await stranger.next()["error"]?.stringValue == "Not a member of this room")
            try await stranger.send(.joinRoom(roomID: String(repeating: "0", count: 48), deviceID: "c-1"))
            #expect(try await stranger.next()["error"]?.stringValue == "Room not found")
            try await stranger.send(#"{"type":"webrtc_offer","sdp":"x"}"#)
            #expect(try await stranger.next()["error"]?.stringValue == "Not in a valid room for WebRTC signaling")

            let (first, _) = try await TestSocket.connect(server)
            try await first.send(.joinRoom(roomID: roomID, deviceID: "c-1"))
            #expect(try await first.nextType() == "room_joined")
            let (second, _) = try await TestSocket.connect(server)
            try await second.send(.joinRoom(roomID: roomID, deviceID: "c-1"))
            #expect(try await second.next()["userCount"] == .integer(1))
            #expect(try await first.next()["error"]?.stringValue == "Replaced by a newer connection")
            #expect(try await first.closeCode() == .unknown(4000))
            try await stranger.close()
            try await second.close()
        }
    }

    @Test("graceful shutdown closes sockets with 1001")
    func gracefulShutdown() async throws {
        try await TestServer.with { server, group in
            let (socket, _) = try await TestSocket.connect(server)
            await group.triggerGracefulShutdown()
            #expect(try await socket.closeCode() == .goingAway)
        }
    }
}
