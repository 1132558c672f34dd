import InvisoKit
import InvisoTesting
import InvisoTime
import InvisoWire
import Testing

/// The signaling socket's logic with no socket and no clock.
@Suite("SignalingMachine")
struct SignalingMachineTests {
    static let t0 = ClockInstant.origin

    static func at(_ seconds: Double) -> ClockInstant {
        t0.advanced(by: .milliseconds(Int64(seconds * 1_000)))
    }

    static func text(_ json: String) -> SignalingMachine.Frame {
        SignalingMachine.Frame(opcode: .text, payload: Array(json.utf8))
    }

    static let greeting = text(#"{"type":"connected","clientId":"c1","server":"s"}"#)

    static func machine(maxAttempts: Int? = nil) -> SignalingMachine {
        var configuration = SignalingMachine.Configuration()
        configuration.reconnect = ReconnectPolicy(base: .seconds(1), factor: 2, cap: .seconds(8), maxAttempts: maxAttempts)
        return SignalingMachine(configuration: configuration, random: SeededGenerator(seed: 3))
    }

    /// A machine with an open, greeted connection (number 1).
    static func greeted() -> SignalingMachine {
        var machine = machine()
        _ = machine.start(at: t0)
        _ = machine.opened(1, at: t0)
        _ = machine.received(greeting, on: 1, at: t0)
        return machine
    }

    static func emitted(_ actions: [SignalingMachine.Action]) -> [SignalingEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    @Test func connectsAndResubscribesAfterTheGreeting() {
        var machine = Self.machine()
        #expect(machine.start(at: Self.t0) == [.connect(1), .arm(.connect, at: Self.at(10))])
        #expect(machine.join(roomID: "room", deviceID: "dev").isEmpty, "not connected yet: remembered")
        #expect(machine.watch(joinID: "222222", deviceID: "dev").isEmpty)
        _ = machine.watch(joinID: "111111", deviceID: "dev")
        #expect(machine.opened(1, at: Self.at(1)) == [.cancel(.connect), .arm(.ping, at: Self.at(26))])
        #expect(!machine.isConnected)
        let greeted = machine.received(Self.greeting, on: 1, at: Self.at(1))
        #expect(greeted == [
            .emit(.connected(clientID: "c1")), .send(.joinRoom(roomID: "room", deviceID: "dev")),
            .send(.watchCode(joinID: "111111", client1: "dev")), .send(.watchCode(joinID: "222222", client1: "dev")),
        ])
        #expect(machine.isConnected)
        // An accepted code is no longer watched.
        let accepted = machine.received(
            Self.text(#"{"type":"room_accepted","joinid":"111111","roomid":"r2"}"#), on: 1, at: Self.at(2))
        #expect(Self.emitted(accepted) == [.roomAccepted(joinID: "111111", roomID: "r2")])
        #expect(machine.watched == ["222222": "dev"])
    }

    @Test func aMissingPongEndsTheConnectionAndAnAnsweredOneDoesNot() {
        var machine = Self.greeted()
        let ping = machine.timerFired(.ping, at: Self.at(25))
        #expect(ping == [.sendPing([0, 0, 0, 0, 0, 0, 0, 1]), .arm(.pong, at: Self.at(35)), .arm(.ping, at: Self.at(50))])
        // A pong with another payload does not count.
        _ = machine.received(.init(opcode: .pong, payload: [0, 0, 0, 0, 0, 0, 0, 9]), on: 1, at: Self.at(26))
        _ = machine.received(.init(opcode: .pong, payload: [0, 0, 0, 0, 0, 0, 0, 1]), on: 1, at: Self.at(26))
        #expect(machine.timerFired(.pong, at: Self.at(35)).isEmpty)
        #expect(machine.timerFired(.ping, at: Self.at(50)).first == .sendPing([0, 0, 0, 0, 0, 0, 0, 2]))
        let timeout = machine.timerFired(.pong, at: Self.at(60))
        #expect(timeout.first == .closeConnection)
        #expect(Self.emitted(timeout).first == .disconnected(.pongTimeout))
        #expect(machine.phase == .backingOff)
    }

    @Test func aPongTimeoutLongerThanTheIntervalStandsAndNoPingIsSentMeanwhile() {
        var configuration = SignalingMachine.Configuration()
        configuration.pingInterval = .seconds(1)
        configuration.pongTimeout = .seconds(10)
        var machine = SignalingMachine(configuration: configuration, random: SeededGenerator(seed: 1))
        _ = machine.start(at: Self.t0)
        _ = machine.opened(1, at: Self.t0)
        #expect(machine.timerFired(.ping, at: Self.at(1)).first == .sendPing([0, 0, 0, 0, 0, 0, 0, 1]))
        // Still unanswered a second later: no second ping, the deadline stays at 11 s.
        #expect(machine.timerFired(.ping, at: Self.at(2)) == [.arm(.ping, at: Self.at(3))])
        _ = machine.received(.init(opcode: .pong, payload: [0, 0, 0, 0, 0, 0, 0, 1]), on: 1, at: Self.at(9))
        #expect(machine.timerFired(.pong, at: Self.at(11)).isEmpty)
        #expect(machine.phase == .open(greeted: false))
    }

    @Test func theServersCloseFrameIsEchoedAndReconnectFollows() {
        var machine = Self.greeted()
        let actions = machine.received(.init(opcode: .close, payload: [0x0F, 0xA0]), on: 1, at: Self.at(3))
        #expect(Array(actions.prefix(2)) == [.sendClose(code: 1000), .closeConnection])
        #expect(Self.emitted(actions).first == .disconnected(.serverClosed(code: 4000)))
        guard case .arm(.backoff, let at)? = actions.last else {
            Issue.record("no backoff armed")
            return
        }
        #expect(at <= Self.at(4))
        #expect(machine.timerFired(.backoff, at: at) == [.connect(2), .arm(.connect, at: at.advanced(by: .seconds(10)))])
        // Input about the old connection is ignored.
        #expect(machine.received(Self.greeting, on: 1, at: at).isEmpty)
        #expect(machine.ended(1, at: at).isEmpty)
    }

    @Test func fragmentsAreReassembledAndOversizeOrStrayOnesEndTheConnection() {
        var machine = Self.greeted()
        let json = Array(#"{"type":"peer_left"}"#.utf8)
        _ = machine.received(.init(opcode: .text, fin: false, payload: Array(json[..<5])), on: 1, at: Self.t0)
        _ = machine.received(.init(opcode: .continuation, fin: false, payload: Array(json[5..<10])), on: 1, at: Self.t0)
        let done = machine.received(.init(opcode: .continuation, payload: Array(json[10...])), on: 1, at: Self.t0)
        #expect(Self.emitted(done) == [.peerLeft])
        #expect(Self.emitted(machine.received(.init(opcode: .binary, payload: [1, 2]), on: 1, at: Self.t0)) == [.binary([1, 2])])
        // A continuation with nothing to continue.
        let stray = machine.received(.init(opcode: .continuation, payload: [1]), on: 1, at: Self.t0)
        #expect(Self.emitted(stray).first == .disconnected(.connectionLost))
        var big = Self.greeted()
        let oversize = big.received(.init(opcode: .binary, payload: [UInt8](repeating: 0, count: 64 * 1024 + 1)), on: 1, at: Self.t0)
        #expect(oversize.first == .closeConnection)
        // Unparseable text is dropped; a ping is answered with its payload.
        var other = Self.greeted()
        #expect(other.received(Self.text("{not json"), on: 1, at: Self.t0).isEmpty)
        #expect(other.received(.init(opcode: .ping, payload: [7]), on: 1, at: Self.t0) == [.sendPong([7])])
    }

    @Test func theBackoffGrowsWithinItsCeilingsAndGivesUp() {
        var machine = Self.machine(maxAttempts: 3)
        _ = machine.start(at: Self.t0)
        var now = Self.t0
        for attempt in 1...3 {
            let actions = machine.timerFired(.connect, at: now.advanced(by: .seconds(10)))
            now = now.advanced(by: .seconds(10))
            #expect(Self.emitted(actions).first == .disconnected(.connectFailed))
            guard case .reconnecting(let number, let delay)? = Self.emitted(actions).last else {
                Issue.record("attempt \(attempt): no reconnect")
                return
            }
            #expect(number == attempt)
            #expect(delay < .seconds(1 << (attempt - 1)))
            _ = machine.timerFired(.backoff, at: now.advanced(by: delay))
            now = now.advanced(by: delay)
        }
        let last = machine.ended(4, at: now)
        #expect(Self.emitted(last) == [.disconnected(.connectFailed), .disconnected(.gaveUp)])
        #expect(last.last == .finish)
        #expect(machine.phase == .closed)
    }

    @Test func aGreetingResetsTheAttempts() {
        var machine = Self.machine(maxAttempts: 2)
        _ = machine.start(at: Self.t0)
        _ = machine.ended(1, at: Self.t0)
        _ = machine.timerFired(.backoff, at: Self.at(1))
        _ = machine.opened(2, at: Self.at(1))
        _ = machine.received(Self.greeting, on: 2, at: Self.at(1))
        // Two more losses in a row are allowed again.
        let first = machine.ended(2, at: Self.at(2))
        #expect(Self.emitted(first).contains { if case .reconnecting(1, _) = $0 { true } else { false } })
    }

    @Test func leaveWaitsForLeftRoomThenClosesForGood() {
        var machine = Self.greeted()
        _ = machine.join(roomID: "room", deviceID: "dev")
        let actions = machine.leave(at: Self.at(1))
        #expect(actions == [.send(.leaveRoom), .cancel(.ping), .cancel(.pong), .arm(.leave, at: Self.at(6))])
        #expect(machine.phase == .leaving && machine.activeRoom == nil && !machine.isConnected)
        #expect(machine.leave(at: Self.at(2)).isEmpty)
        // The server confirms: everything sent before the leave was handled; now close.
        let closed = machine.received(Self.text(#"{"type":"left_room","roomId":"room"}"#), on: 1, at: Self.at(2))
        #expect(closed.suffix(4) == [.sendClose(code: 1000), .closeConnection, .emit(.disconnected(.closedByUser)), .finish])
        #expect(machine.phase == .closed)
        #expect(machine.join(roomID: "room", deviceID: "dev").isEmpty)
        #expect(machine.close().isEmpty)
        #expect(machine.timerFired(.ping, at: Self.at(30)).isEmpty)
    }

    @Test func leaveClosesAnywayWhenTheServerDoesNotConfirm() {
        var timedOut = Self.greeted()
        _ = timedOut.join(roomID: "room", deviceID: "dev")
        _ = timedOut.leave(at: Self.t0)
        #expect(timedOut.timerFired(.leave, at: Self.at(5)).last == .finish)
        // A connection that ends, or a close frame, while leaving ends it too: no reconnect.
        var dropped = Self.greeted()
        _ = dropped.join(roomID: "room", deviceID: "dev")
        _ = dropped.leave(at: Self.t0)
        #expect(dropped.ended(1, at: Self.at(1)) == [.emit(.disconnected(.closedByUser)), .finish])
        var kicked = Self.greeted()
        _ = kicked.join(roomID: "room", deviceID: "dev")
        _ = kicked.leave(at: Self.t0)
        let close = kicked.received(.init(opcode: .close, payload: [0x03, 0xE9]), on: 1, at: Self.at(1))
        #expect(close.last == .finish && kicked.phase == .closed)
        // Without a room there is nothing to confirm: it closes at once.
        var roomless = Self.greeted()
        #expect(roomless.leave(at: Self.t0).last == .finish)
    }

    @Test func aRoomClosedByTheServerIsNotRejoined() {
        var machine = Self.greeted()
        _ = machine.join(roomID: "room", deviceID: "dev")
        let closed = machine.received(Self.text(#"{"type":"left_room","roomId":"room"}"#), on: 1, at: Self.t0)
        #expect(Self.emitted(closed) == [.roomClosed(roomID: "room")])
        _ = machine.ended(1, at: Self.t0)
        _ = machine.timerFired(.backoff, at: Self.at(10))
        _ = machine.opened(2, at: Self.at(10))
        #expect(machine.received(Self.greeting, on: 2, at: Self.at(10)) == [.emit(.connected(clientID: "c1"))])
    }

    /// The room was deleted while this device was reconnecting: its `left_room` went
    /// nowhere, and the rejoin is refused. The room counts as closed, not retried.
    @Test(arguments: [ServerMessage.roomNotFoundText, ServerMessage.notMemberText])
    func aRefusedRejoinClosesTheRoom(_ refusal: String) {
        var machine = Self.greeted()
        _ = machine.join(roomID: "room", deviceID: "dev")
        _ = machine.ended(1, at: Self.t0)
        _ = machine.timerFired(.backoff, at: Self.at(10))
        _ = machine.opened(2, at: Self.at(10))
        #expect(machine.received(Self.greeting, on: 2, at: Self.at(10)).contains(.send(.joinRoom(roomID: "room", deviceID: "dev"))))
        let refused = machine.received(Self.text(#"{"type":"error","error":"\#(refusal)"}"#), on: 2, at: Self.at(10))
        #expect(Self.emitted(refused) == [.serverError(refusal), .roomClosed(roomID: "room")])
        #expect(machine.activeRoom == nil)
        // Another refusal (no room to close) is only reported; other errors never close.
        #expect(Self.emitted(machine.received(Self.text(#"{"type":"error","error":"\#(refusal)"}"#), on: 2, at: Self.at(11)))
            == [.serverError(refusal)])
        var other = Self.greeted()
        _ = other.join(roomID: "room", deviceID: "dev")
        let unrelated = other.received(Self.text(#"{"type":"error","error":"Relay quota exceeded"}"#), on: 1, at: Self.t0)
        #expect(Self.emitted(unrelated) == [.serverError("Relay quota exceeded")] && other.activeRoom != nil)
    }
}
