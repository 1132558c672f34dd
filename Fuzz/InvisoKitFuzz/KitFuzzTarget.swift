internal import Foundation
internal import InvisoCrypto
internal import InvisoFuzzSupport
internal import InvisoKit
internal import InvisoNoise
internal import InvisoTesting
internal import InvisoTime
internal import InvisoWire
internal import NIOCore

/// The client's decoders and state machines under arbitrary input. The first byte picks one:
///
/// 0. The JSON parser (what parses serializes and parses back to the same value), server
///    messages and relayed payloads (`ServerMessage.parse`, every `RelayPayload`).
/// 1. v1 frames: `V1Frame(json:)` round-trips what it accepts; a `V1Channel` refuses
///    garbage without changing (a genuine frame still opens afterwards).
/// 2. The direct path's `DirectFrameDecoder` over a stream cut anywhere: no body above the
///    limit, handshake bodies tiny.
/// 3. The direct handshake: arbitrary messages never authenticate.
/// 4. `ChatSessionSnapshot`: what parses serializes back to itself.
/// 5. `SignalingMachine` under arbitrary frames, timers and requests: nothing after it
///    finished, only greeted connections count as connected.
/// 6. `ChatSessionMachine`: an established pair over a network the input controls (loss,
///    duplication, reordering, path changes, send failures, timers, forged frames and
///    signals): messages arrive exactly once and in order, forged input delivers nothing.
/// 7. Files and contacts (`FileFuzz`): chunk frames, file and contact messages, and the
///    file machine's windows under arbitrary reports.
enum KitFuzzTarget {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        switch input.byte() % 8 {
        case 0: serverMessages(input.rest())
        case 1: v1(&input)
        case 2: directDecoder(&input)
        case 3: directHandshake(&input)
        case 4: snapshot(input.rest())
        case 5: signalingMachine(&input)
        case 6: SessionFuzz.run(&input)
        default: FileFuzz.run(&input)
        }
    }

    static func serverMessages(_ bytes: [UInt8]) {
        _ = try? ServerMessage.parse(bytes)
        guard let value = try? JSONValue.parse(bytes) else { return }
        let serialized = value.serialized()
        let again = mustSucceed("re-parsing serialized JSON") { try JSONValue.parse(serialized) }
        invariant(again == value, "JSON does not round-trip through serialization")
        invariant(again.serialized() == serialized, "serialization is not stable")
        guard case .object(let object) = value else { return }
        _ = ServerMessage.parse(object)
        _ = try? WebRTCOffer(json: object)
        _ = try? WebRTCAnswer(json: object)
        _ = try? ICECandidateMessage(json: object)
        _ = try? KeyExchange(json: object)
        _ = try? KeyExchangeComplete(json: object)
        if let candidates = try? TransportCandidates(json: object) {
            invariant(candidates.candidates.count <= TransportCandidates.maxCandidates, "too many candidates")
            invariant(candidates.candidates.allSatisfy { (1...65_535).contains($0.port) }, "a port out of range")
        }
    }

    /// A fixed v1 session key and a genuine frame from the peer.
    static let v1Key = SecretBytes([UInt8](repeating: 7, count: 32))

    static func v1(_ input: inout FuzzInput) {
        let bytes = input.rest()
        if let frame = try? V1Frame(json: bytes) {
            let again = mustSucceed("re-parsing an encoded v1 frame") { () throws(V1Error) in try V1Frame(json: frame.json()) }
            invariant(again == frame, "a v1 frame does not round-trip")
        }
        var sender = V1Channel(sessionKey: v1Key, role: .initiator)
        var receiver = V1Channel(sessionKey: v1Key, role: .responder)
        let genuine = mustSucceed("sealing") { () throws(V1Error) in try sender.seal([1, 2, 3]) }
        // Another encoding of the genuine frame may open (JSON allows several); other
        // content cannot.
        let opened = try? receiver.open(bytes)
        invariant(opened == nil || opened == [1, 2, 3], "a forged v1 frame opened")
        if opened == nil {
            let plaintext = mustSucceed("opening the genuine frame after garbage") { () throws(V1Error) in
                try receiver.open(genuine)
            }
            invariant(plaintext == [1, 2, 3], "the genuine frame opened to something else")
        }
    }

    static func directDecoder(_ input: inout FuzzInput) {
        let side: DirectHandshake.Side = input.byte() & 1 == 0 ? .dialer : .acceptor
        let maxBody = 256
        var decoder = DirectFrameDecoder(side: side, maxBodyBytes: maxBody)
        var buffer = ByteBuffer()
        var frames = 0
        while !input.isEmpty {
            var chunk = ByteBuffer(bytes: input.chunk())
            buffer.writeBuffer(&chunk)
            do {
                while let body = try decoder.decode(buffer: &buffer) {
                    let handshake = frames < (side == .acceptor ? 2 : 1)
                    invariant(body.readableBytes <= (handshake ? DirectWire.maxHandshakeBody : maxBody), "an oversize body")
                    frames += 1
                }
            } catch {
                return
            }
        }
    }

    static func directHandshake(_ input: inout FuzzInput) {
        var acceptor = DirectHandshake(key: v1Key, role: .joiner, side: .acceptor, nonce: [UInt8](repeating: 1, count: 32))
        var dialer = DirectHandshake(key: v1Key, role: .creator, side: .dialer, nonce: [UInt8](repeating: 2, count: 32))
        _ = acceptor.start()
        _ = dialer.start()
        while !input.isEmpty {
            let body = input.chunk()
            let toAcceptor = input.byte() & 1 == 0
            let output = toAcceptor ? try? acceptor.receive(body) : try? dialer.receive(body)
            // Without the key nothing authenticates.
            invariant(output?.established != true, "a forged handshake authenticated")
        }
    }

    static func snapshot(_ bytes: [UInt8]) {
        guard let snapshot = try? ChatSessionSnapshot(serialized: SecretBytes(bytes)) else { return }
        let serialized = snapshot.serialized()
        let again = mustSucceed("re-parsing a serialized snapshot") { () throws(ChatSnapshotError) in
            try ChatSessionSnapshot(serialized: serialized)
        }
        invariant(again.serialized() == serialized, "a snapshot does not serialize back to itself")
    }

    static func signalingMachine(_ input: inout FuzzInput) {
        var configuration = SignalingMachine.Configuration()
        configuration.maxMessageBytes = 128
        configuration.reconnect = ReconnectPolicy(base: .milliseconds(10), factor: 2, cap: .seconds(1), maxAttempts: 5)
        var machine = SignalingMachine(configuration: configuration, random: SeededGenerator(seed: 1))
        var now = ClockInstant.origin
        var finished = false
        var actions = machine.start(at: now)
        while !input.isEmpty {
            if actions.contains(.finish) { finished = true }
            let operation = input.byte()
            now = now.advanced(by: .milliseconds(Int64(input.byte())))
            let connection = UInt64(input.byte() % 4)
            switch operation % 8 {
            case 0: actions = machine.opened(connection, at: now)
            case 1: actions = machine.ended(connection, at: now)
            case 2:
                let opcodes: [SignalingMachine.Frame.Opcode] = [.text, .binary, .continuation, .ping, .pong, .close, .other]
                let frame = SignalingMachine.Frame(
                    opcode: opcodes[Int(operation >> 3) % opcodes.count], fin: operation & 0x80 != 0, payload: input.chunk())
                actions = machine.received(frame, on: connection, at: now)
            case 3: actions = machine.timerFired(SignalingMachine.Timer.allCases[Int(operation >> 3) % 4], at: now)
            case 4: actions = machine.join(roomID: "room", deviceID: "device")
            case 5: actions = machine.watch(joinID: "123456", deviceID: "device")
            case 6: actions = machine.close()
            default: actions = machine.leave(at: now)
            }
            if finished { invariant(actions.isEmpty, "actions after the machine finished") }
            invariant(!machine.isConnected || machine.phase == .open(greeted: true), "connected without a greeting")
        }
    }

    /// `selector ‖ length ‖ text`.
    static func lengthPrefixed(_ selector: UInt8, _ text: String) -> [UInt8] {
        [selector, UInt8(text.utf8.count)] + Array(text.utf8)
    }

    static func seeds() -> [[UInt8]] {
        [
            [0] + Array(#"{"type":"room_ready","roomId":"r","isInitiator":true}"#.utf8),
            [0] + Array(#"{"type":"transport_candidates","candidates":[{"host":"10.0.0.1","port":7000}]}"#.utf8),
            [1] + Array(#"{"v":1,"c":0,"n":"AAAAAAAAAAAAAAAA","d":"","t":"AAAAAAAAAAAAAAAAAAAAAA=="}"#.utf8),
            [2, 1, 4, 0, 0, 0, 2, 2, 0xAB, 0xCD, 8, 0, 0, 1, 0, 1, 2, 3, 4, 5],
            [3, 16, 0] + [UInt8](repeating: 9, count: 16) + [1],
            [4, 0x49, 0x56, 0x53, 0x53, 0x01, 0x02, 0x01],
            [5, 0, 0, 1, 2, 0, 1, 2] + Array(#"{"type":"connected","clientId":"c","server":"s"}"#.utf8),
            [6, 1, 5, 0x41, 0x42, 0x43, 0x44, 0x45, 0, 0, 0, 1, 0],
            [6, 1, 1, 0x61, 1, 1, 0x62, 1, 1, 0x63, 0, 2, 0, 1, 0, 0, 2, 1],
            Self.lengthPrefixed(7, #"{"type":"file_request","id":"01010101010101010101010101010101","from":3}"#)
                + [0, 1, 0, 0, 0, 1, 4, 1, 5, 2, 8, 0, 9, 3, 7],
            Self.lengthPrefixed(7, #"{"type":"contact","identity":"00","nonce":"11"}"#) + [1, 3, 1, 12, 2],
        ]
    }
}
