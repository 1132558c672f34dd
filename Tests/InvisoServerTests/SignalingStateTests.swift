import Foundation
@testable import InvisoServer
import InvisoWire
import NIOCore
import Testing

/// The room state machine, without sockets: single-instance rules and two instances
/// linked by their bus events.
@Suite("Signaling state machine")
struct SignalingStateTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let a = ConnectionID(1)
    let b = ConnectionID(2)
    let c = ConnectionID(3)

    func machine(clustered: Bool = false) -> SignalingState {
        SignalingState(limits: SignalingLimits(), clustered: clustered)
    }

    func sends(_ actions: [SignalingAction], to id: ConnectionID) -> [ServerMessage] {
        actions.compactMap { if case .send(id, let message) = $0 { message } else { nil } }
    }

    @Test("the creator is the initiator whichever side joins first")
    func creatorInitiates() {
        var state = machine()
        _ = state.open(a, clientID: "ca")
        _ = state.open(b, clientID: "cb")
        let first = state.join(b, roomID: "r", deviceID: "j", role: .joiner)
        #expect(sends(first, to: b) == [.roomJoined(roomID: "r", userCount: 1, isInitiator: false, ready: false)])
        let second = state.join(a, roomID: "r", deviceID: "c", role: .creator)
        #expect(sends(second, to: a) == [
            .roomJoined(roomID: "r", userCount: 2, isInitiator: true, ready: true), .roomReady(roomID: "r", isInitiator: true),
        ])
        #expect(sends(second, to: b) == [.roomReady(roomID: "r", isInitiator: false)])
        #expect(!second.contains { if case .publish = $0 { true } else { false } })
    }

    @Test("relay only to the other member, only when both are present")
    func relayRules() {
        var state = machine()
        _ = state.open(a, clientID: "ca")
        _ = state.open(b, clientID: "cb")
        #expect(state.route(from: a, now: now) == .refused([.send(a, .error(SignalingState.notInRoomText))]))
        _ = state.join(a, roomID: "r", deviceID: "c", role: .creator)
        #expect(state.route(from: a, now: now) == .refused([.send(a, .error(SignalingState.peerAbsentText))]))
        _ = state.join(b, roomID: "r", deviceID: "j", role: .joiner)
        #expect(state.route(from: a, now: now) == .local(b, roomID: "r", from: "ca"))
        #expect(state.route(from: b, now: now) == .local(a, roomID: "r", from: "cb"))
        let left = state.leave(b)
        #expect(sends(left, to: a) == [.peerLeft] && sends(left, to: b) == [.leftRoom(roomID: "r")])
        #expect(state.leave(b) == [.send(b, .leftRoom(roomID: nil))])
        _ = state.join(b, roomID: "r", deviceID: "j", role: .joiner)
        #expect(sends(state.close(b), to: a) == [.peerDisconnected])
        #expect(state.close(b).isEmpty)
        #expect(state.rooms["r"]?.local == [.creator: a])
    }

    @Test("a rejoin replaces the old socket without telling the peer it left")
    func replacement() {
        var state = machine()
        for (id, name) in [(a, "ca"), (b, "cb"), (c, "cc")] { _ = state.open(id, clientID: name) }
        _ = state.join(a, roomID: "r", deviceID: "c", role: .creator)
        _ = state.join(b, roomID: "r", deviceID: "j", role: .joiner)
        let actions = state.join(c, roomID: "r", deviceID: "c", role: .creator)
        #expect(actions.contains(.close(a, code: 4000, reason: "replaced by a newer connection")))
        #expect(sends(actions, to: b) == [.roomReady(roomID: "r", isInitiator: false)])
        #expect(state.seat(of: a) == nil)
        // The replaced socket closing later changes nothing.
        #expect(state.close(a).isEmpty)
        #expect(state.route(from: b, now: now) == .local(c, roomID: "r", from: "cb"))
    }

    @Test("watchers get room_accepted once")
    func watchers() {
        var state = machine()
        _ = state.open(a, clientID: "ca")
        #expect(state.watch(a, joinID: "123456").isEmpty)
        #expect(state.codeAccepted(joinID: "123456", roomID: "r") == [.send(a, .roomAccepted(joinID: "123456", roomID: "r"))])
        #expect(state.codeAccepted(joinID: "123456", roomID: "r").isEmpty)
        for code in 0..<8 { _ = state.watch(a, joinID: "\(code)") }
        #expect(state.watch(a, joinID: "x") == [.send(a, .error("Too many watched codes"))])
    }

    /// Delivers publishes between the two machines in one FIFO queue (a bus keeps each
    /// publisher's order) until quiet; returns the actions each side produced.
    func exchange(
        _ first: inout SignalingState, _ second: inout SignalingState, _ pending: [SignalingAction], from origin: String,
        and more: [SignalingAction] = [], from moreOrigin: String = "two"
    ) -> (first: [SignalingAction], second: [SignalingAction]) {
        func published(_ actions: [SignalingAction], _ origin: String) -> [(event: BusEvent, origin: String)] {
            actions.compactMap { if case .publish(let event) = $0 { (event, origin) } else { nil } }
        }
        var queue = published(pending, origin) + published(more, moreOrigin)
        var toFirst: [SignalingAction] = []
        var toSecond: [SignalingAction] = []
        while !queue.isEmpty {
            let (event, from) = queue.removeFirst()
            let produced = from == "one" ? second.received(event, from: from) : first.received(event, from: from)
            if from == "one" { toSecond += produced } else { toFirst += produced }
            queue += published(produced, from == "one" ? "two" : "one")
        }
        return (toFirst, toSecond)
    }

    @Test("two instances: room_ready on both, relays cross, leave and disconnect propagate")
    func clustered() {
        var one = machine(clustered: true)
        var two = machine(clustered: true)
        _ = one.open(a, clientID: "ca")
        _ = two.open(b, clientID: "cb")
        let creatorJoin = one.join(a, roomID: "r", deviceID: "c", role: .creator)
        #expect(sends(creatorJoin, to: a) == [.roomJoined(roomID: "r", userCount: 1, isInitiator: true, ready: false)])
        _ = exchange(&one, &two, creatorJoin, from: "one")  // nobody on two yet: ignored
        let joinerJoin = two.join(b, roomID: "r", deviceID: "j", role: .joiner)
        #expect(sends(joinerJoin, to: b) == [.roomJoined(roomID: "r", userCount: 1, isInitiator: false, ready: false)])
        // Published after the local answer: the other side's reply must not overtake it.
        #expect(joinerJoin.last == .publish(.seated(roomID: "r", role: .joiner)))
        let (onOne, onTwo) = exchange(&one, &two, joinerJoin, from: "two")
        #expect(sends(onOne, to: a) == [.roomReady(roomID: "r", isInitiator: true)])
        #expect(sends(onTwo, to: b) == [.roomReady(roomID: "r", isInitiator: false)])
        #expect(one.route(from: a, now: now) == .remote(roomID: "r", role: .joiner, from: "ca"))
        #expect(two.route(from: b, now: now) == .remote(roomID: "r", role: .creator, from: "cb"))
        #expect(one.localMember(roomID: "r", role: .creator) == a)

        let leave = two.leave(b)
        let (afterLeave, _) = exchange(&one, &two, leave, from: "two")
        #expect(sends(afterLeave, to: a) == [.peerLeft])
        #expect(one.route(from: a, now: now) == .refused([.send(a, .error(SignalingState.peerAbsentText))]))

        let rejoin = two.join(b, roomID: "r", deviceID: "j", role: .joiner)
        _ = exchange(&one, &two, rejoin, from: "two")
        let gone = one.close(a)
        let (_, afterClose) = exchange(&one, &two, gone, from: "one")
        #expect(sends(afterClose, to: b) == [.peerDisconnected])
    }

    @Test("two instances: simultaneous joins give exactly one room_ready each")
    func simultaneousJoins() {
        var one = machine(clustered: true)
        var two = machine(clustered: true)
        _ = one.open(a, clientID: "ca")
        _ = two.open(b, clientID: "cb")
        let fromOne = one.join(a, roomID: "r", deviceID: "c", role: .creator)
        let fromTwo = two.join(b, roomID: "r", deviceID: "j", role: .joiner)
        let (onOne, onTwo) = exchange(&one, &two, fromOne, from: "one", and: fromTwo, from: "two")
        #expect(sends(onOne, to: a) == [.roomReady(roomID: "r", isInitiator: true)])
        #expect(sends(onTwo, to: b) == [.roomReady(roomID: "r", isInitiator: false)])
    }

    @Test("a rejoin on another instance replaces the old socket")
    func crossInstanceReplacement() {
        var one = machine(clustered: true)
        var two = machine(clustered: true)
        _ = one.open(a, clientID: "ca")
        _ = two.open(c, clientID: "cc")
        _ = one.join(a, roomID: "r", deviceID: "c", role: .creator)
        let moved = two.join(c, roomID: "r", deviceID: "c", role: .creator)
        let (onOne, _) = exchange(&one, &two, moved, from: "two")
        #expect(onOne.contains(.close(a, code: 4000, reason: "replaced by a newer connection")))
        #expect(one.rooms["r"] == nil)
    }

    @Test("bus events round-trip; malformed bytes are refused", arguments: [
        BusEvent.seated(roomID: "r", role: .creator), .present(roomID: "room", role: .joiner),
        .left(roomID: "r", role: .joiner, disconnected: true), .text(roomID: "r", to: .creator, frame: Array("{}".utf8)),
        .binary(roomID: "r", to: .joiner, frame: [0, 255]), .accepted(joinID: "123456", roomID: "r"),
        .roomDeleted(roomID: "r"), .purged(deviceIDs: ["a", "b"]),
    ])
    func busEvents(event: BusEvent) {
        let bytes = event.encoded()
        #expect(BusEvent.decode(bytes) == event)
        for cut in 0..<bytes.count { #expect(BusEvent.decode(Array(bytes[..<cut])) == nil) }
        #expect(BusEvent.decode(bytes + [0]) == nil)
        var corrupt = bytes
        corrupt[0] = 99
        #expect(BusEvent.decode(corrupt) == nil)
    }
}

@Suite("Relayed frames")
struct RelayedFrameTests {
    @Test("the fast path keeps the sender's bytes and equals re-serializing", arguments: [
        #"{"type":"webrtc_offer","sdp":"v=0\r\n"}"#,
        #"{"type":"ice_candidate","candidate":{"candidate":"c","sdpMLineIndex":0,"sdpMid":"0"}} "#,
        #"{ "type" : "key_exchange", "publicKey":"k", "sessionId":"s", "n": 1.50 }"#,
        #"{"type":"webrtc_answer","sdp":"x","from":"spoofed"}"#,
        #"{"type":"webrtc_answer","sdp":"x","roomId":"other-room"}"#,
        #"{"type":"webrtc_answer","sdp":"x","fr\u006fm":"escaped spoof"}"#,
    ])
    func forwarded(text: String) throws {
        guard case .object(let object) = try JSONValue.parse(text) else { throw TestFailure("not an object") }
        let frame = SignalingHub.forwarded(object, text: text.utf8, from: "client-1", roomID: "room\"1")
        guard case .object(let result) = try JSONValue.parse(Array(buffer: frame)) else { throw TestFailure("bad output") }
        guard case .relayed(let expected) = ServerMessage.relay(object, from: "client-1", roomID: "room\"1") else {
            throw TestFailure("not relayed")
        }
        #expect(result == expected)
        #expect(result["from"]?.stringValue == "client-1" && result["roomId"]?.stringValue == "room\"1")
        if !text.contains("from") && !text.contains("roomId") && !text.contains("\\u") {
            #expect(String(buffer: frame).hasPrefix(String(text.trimmingCharacters(in: .whitespaces).dropLast())))
        }
    }
}
