import Foundation
import InvisoServer
import NIOCore
import Synchronization
import Testing

/// The signaling socket at the frame level: fragments, pipelined messages, the close
/// handshake, and a peer that stops reading.
@Suite("Signaling sockets, frame by frame")
struct SignalingSocketTests {
    /// Pairs a room and joins both raw sockets; returns them after both have `room_ready`.
    static func joined(
        _ server: TestServer, code: String, receiveBuffer: Int? = nil
    ) async throws -> (creator: RawWebSocket, joiner: RawWebSocket, roomID: String) {
        let roomID = try await server.pair(code: code, creator: "c-\(code)", joiner: "j-\(code)")
        let creator = try await RawWebSocket.connect(port: server.port)
        let joiner = try await RawWebSocket.connect(port: server.port, receiveBuffer: receiveBuffer)
        for (socket, device) in [(creator, "c-\(code)"), (joiner, "j-\(code)")] {
            try await socket.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"\#(device)"}"#)
            #expect(try await socket.nextText().contains(#""type":"room_joined""#))
        }
        for socket in [creator, joiner] {
            #expect(try await socket.nextText().contains(#""type":"room_ready""#))
        }
        return (creator, joiner, roomID)
    }

    @Test("a text message in three fragments is relayed as one message")
    func fragments() async throws {
        try await TestServer.with { server, _ in
            let (creator, joiner, roomID) = try await Self.joined(server, code: "310001")
            let text = #"{"type":"webrtc_offer","sdp":"v=0 fragmented offer"}"#
            let bytes = Array(text.utf8)
            let parts = [bytes[0..<10], bytes[10..<30], bytes[30...]]
            try await creator.sendRaw(
                RawWebSocket.frame(opcode: 0x1, Array(parts[0]), fin: false)
                    + RawWebSocket.frame(opcode: 0x0, Array(parts[1]), fin: false)
                    + RawWebSocket.frame(opcode: 0x0, Array(parts[2])))
            let relayed = try await joiner.nextText()
            #expect(relayed.hasPrefix(#"{"type":"webrtc_offer","sdp":"v=0 fragmented offer","from":""#))
            #expect(relayed.hasSuffix(#""roomId":"\#(roomID)"}"#))
            await creator.close()
            await joiner.close()
        }
    }

    @Test("join_room and a relay in one TCP write: the relay waits for the join")
    func pipelinedJoin() async throws {
        try await TestServer.with { server, _ in
            let roomID = try await server.pair(code: "310002", creator: "c-2", joiner: "j-2")
            let joiner = try await RawWebSocket.connect(port: server.port)
            try await joiner.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"j-2"}"#)
            #expect(try await joiner.nextText().contains(#""type":"room_joined""#))
            let creator = try await RawWebSocket.connect(port: server.port)
            // The join needs a store lookup; the offer and the ping behind it must be handled
            // after it, in order.
            try await creator.sendRaw(
                RawWebSocket.text(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"c-2"}"#)
                    + RawWebSocket.text(#"{"type":"webrtc_offer","sdp":"first"}"#)
                    + RawWebSocket.text(#"{"type":"ping"}"#))
            #expect(try await creator.nextText().contains(#""type":"room_joined""#))
            #expect(try await creator.nextText().contains(#""type":"room_ready""#))
            #expect(try await creator.nextText() == #"{"type":"pong"}"#)
            #expect(try await joiner.nextText().contains(#""type":"room_ready""#))
            #expect(try await joiner.nextText().contains(#""sdp":"first""#))
            await creator.close()
            await joiner.close()
        }
    }

    @Test("a room deleted between join_room's lookup and the seat: the device is told (left_room), not seated in a room that is gone")
    func deleteRacingAJoin() async throws {
        let store = LookupRacingStore(try SQLiteRoomStore.inMemory())
        try await TestServer.with(store: store) { server, _ in
            let roomID = try await server.pair(code: "310003", creator: "c-3", joiner: "j-3")
            // The creator's REST delete lands after the server looked the room up for the
            // joiner's join_room and before it seated the joiner.
            store.afterNextLookup {
                let deleted = try? await server.request("DELETE", "/api/rooms", #"{"roomid":"\#(roomID)","deviceId":"c-3"}"#)
                #expect(deleted?.status == 200)
            }
            let joiner = try await RawWebSocket.connect(port: server.port)
            try await joiner.send(#"{"type":"join_room","roomId":"\#(roomID)","deviceId":"j-3"}"#)
            #expect(try await joiner.nextText().contains(#""type":"room_joined""#))
            #expect(try await joiner.nextText() == #"{"type":"left_room","roomId":"\#(roomID)"}"#)
            // Not seated: a relay is refused.
            try await joiner.send(#"{"type":"webrtc_offer","sdp":"late"}"#)
            #expect(try await joiner.nextText().contains("Not in a valid room"))
            await joiner.close()
        }
    }

    @Test("a close frame is answered with the same code, then the socket closes; the peer is told")
    func closeHandshake() async throws {
        try await TestServer.with { server, _ in
            let (creator, joiner, _) = try await Self.joined(server, code: "310003")
            try await creator.sendRaw(RawWebSocket.frame(opcode: 0x8, [0x03, 0xE8]))  // 1000
            let answer = try await creator.nextFrame()
            #expect(answer.opcode == 0x8 && Array(answer.payload.prefix(2)) == [0x03, 0xE8])
            #expect(try await joiner.nextText().contains(#""type":"peer_disconnected""#))
            await joiner.close()
        }
    }

    @Test("a control ping is answered with a pong carrying the same data")
    func controlPing() async throws {
        try await TestServer.with { server, _ in
            let socket = try await RawWebSocket.connect(port: server.port)
            try await socket.sendRaw(RawWebSocket.frame(opcode: 0x9, Array("are you there".utf8)))
            #expect(try await socket.nextFrame() == RawWebSocket.Frame(opcode: 0xA, payload: Array("are you there".utf8)))
            await socket.close()
        }
    }

    @Test("fragments adding up to more than 64 KiB close the socket with 1009")
    func oversizeFragments() async throws {
        try await TestServer.with { server, _ in
            let socket = try await RawWebSocket.connect(port: server.port)
            let chunk = [UInt8](repeating: 0x61, count: 40_000)
            try await socket.sendRaw(
                RawWebSocket.frame(opcode: 0x1, chunk, fin: false) + RawWebSocket.frame(opcode: 0x0, chunk))
            let answer = try await socket.nextFrame()
            #expect(answer.opcode == 0x8 && Array(answer.payload.prefix(2)) == [0x03, 0xF1])  // 1009
            await socket.close()
        }
    }
}

/// The two tests that push megabytes through a peer that does not read. They run one at a
/// time: every test server and raw client shares NIO's two singleton event loops, and two
/// such floods at once (debug builds, a loaded host) held those loops long enough for
/// other suites' connections to time out.
extension SignalingSocketTests {
    @Suite("Signaling sockets: a peer that does not read", .serialized)
    struct SlowPeer {
        /// Limits that let megabytes through one room: the relay budgets lifted, no stall
        /// timeout to speak of, and the given silence timeout.
        static func floodLimits(silence: Duration) -> ServerLimits {
            var limits = ServerLimits()
            limits.roomRelayByteBurst = 1e9
            limits.roomRelayBytesPerSecond = 1e9
            limits.socketMessageBurst = 10_000
            limits.silenceTimeout = silence
            limits.stallTimeout = .seconds(600)
            return limits
        }

        @Test("a peer that stops reading pauses the sender; nothing is lost or reordered when it reads again")
        func backpressure() async throws {
            // Backpressure, not timeouts, is tested here: on a loaded host reading 24 MiB in a
            // debug build takes long enough for the default silence (the joiner sends nothing)
            // and stall timeouts to close a socket.
            try await TestServer.with(limits: Self.floodLimits(silence: .seconds(600))) { server, _ in
                let (creator, joiner, _) = try await SignalingSocketTests.joined(server, code: "310004", receiveBuffer: 8_192)
                try await joiner.setReading(false)
                // 24 MiB to a reader that takes nothing: more than the kernel's buffers and the
                // server's 1 MiB high-water mark, so the server must stop reading the sender.
                let frames = 384
                let size = 65_536 - 16
                for index in 0..<frames {
                    var payload = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
                    payload[0] = UInt8(index >> 8)
                    payload[1] = UInt8(index & 0xFF)
                    creator.sendRawWithoutWaiting(RawWebSocket.frame(opcode: 0x2, payload))
                }
                creator.sendRawWithoutWaiting(RawWebSocket.text(#"{"type":"ping"}"#))
                // Paused behind the slow peer, the sender's ping is not answered yet.
                #expect(await creator.isQuiet(for: 0.5))
                try await joiner.setReading(true)
                for index in 0..<frames {
                    let frame = try await joiner.nextFrame(timeout: 30)
                    #expect(frame.opcode == 0x2 && frame.payload.count == size)
                    #expect(Int(frame.payload[0]) << 8 | Int(frame.payload[1]) == index)
                    #expect(frame.payload[2] == UInt8(truncatingIfNeeded: index))
                }
                #expect(try await creator.nextText(timeout: 30) == #"{"type":"pong"}"#)
                await creator.close()
                await joiner.close()
            }
        }

        @Test("a sender the server stopped reading (its peer does not read) is not closed for silence")
        func pausedSenderIsNotSilent() async throws {
            // Long enough that the joiner's pings (every 200 ms) keep it open on a loaded host:
            // a closed joiner would end the pause, and the creator would then be silent.
            try await TestServer.with(limits: Self.floodLimits(silence: .seconds(5))) { server, _ in
                let (creator, joiner, _) = try await SignalingSocketTests.joined(server, code: "310005", receiveBuffer: 8_192)
                try await joiner.setReading(false)
                // The joiner is not silent (control pings, remembered while it does not read).
                let keepAlive = joiner.repeatOnEventLoop(RawWebSocket.frame(opcode: 0x9, []), every: .milliseconds(200))
                defer { keepAlive.cancel() }
                // More than the kernel's buffers (a few MiB), the server's high-water mark and
                // one queued message: the server stops reading the creator.
                for index in 0..<256 {
                    creator.sendRawWithoutWaiting(RawWebSocket.frame(opcode: 0x2, [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 65_520)))
                }
                // More than one and a half silence timeouts later the creator (which sent
                // everything it had, and waits for the server) is still connected.
                #expect(await !creator.closes(within: 8))
                #expect(await !joiner.closes(within: 0))
                await creator.close()
                await joiner.close()
            }
        }
    }
}

/// A store that runs a step (a REST call of the test) right after its next `room(id:)`
/// lookup returned, before the caller uses the answer: the window a concurrent request
/// can fall into.
final class LookupRacingStore: RoomStore {
    private let base: any RoomStore
    private let hook = Mutex<(@Sendable () async -> Void)?>(nil)

    init(_ base: any RoomStore) { self.base = base }

    func afterNextLookup(_ step: @escaping @Sendable () async -> Void) { hook.withLock { $0 = step } }

    func room(id roomID: String) async throws -> Room? {
        let room = try await base.room(id: roomID)
        if let step = hook.withLock({ hook in defer { hook = nil }; return hook }) { await step() }
        return room
    }

    func migrate() async throws { try await base.migrate() }
    func insertPending(_ pending: PendingRoom, now: Date) async throws { try await base.insertPending(pending, now: now) }
    func accept(
        joinID: String, client2: String, client2Token: String?, client2Platform: String?, roomID: String, now: Date
    ) async throws -> AcceptOutcome {
        try await base.accept(
            joinID: joinID, client2: client2, client2Token: client2Token, client2Platform: client2Platform, roomID: roomID,
            now: now)
    }
    func check(joinID: String, client1: String, now: Date) async throws -> CheckOutcome {
        try await base.check(joinID: joinID, client1: client1, now: now)
    }
    func pending(joinID: String, now: Date) async throws -> PendingRoom? { try await base.pending(joinID: joinID, now: now) }
    func deleteRoom(id roomID: String, deviceID: String) async throws -> DeleteOutcome {
        try await base.deleteRoom(id: roomID, deviceID: deviceID)
    }
    func hasRoom(member deviceID: String) async throws -> Bool { try await base.hasRoom(member: deviceID) }
    func purge(deviceIDs: [String]) async throws -> PurgeCounts { try await base.purge(deviceIDs: deviceIDs) }
    func recordFailedGuess(joinID: String, limit: Int, now: Date) async throws -> Bool {
        try await base.recordFailedGuess(joinID: joinID, limit: limit, now: now)
    }
    func deleteExpired(now: Date) async throws -> Int { try await base.deleteExpired(now: now) }
    func counts(now: Date) async throws -> StoreCounts { try await base.counts(now: now) }
}
