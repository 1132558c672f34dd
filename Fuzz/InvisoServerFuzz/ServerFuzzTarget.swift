internal import InvisoFuzzSupport
internal import InvisoServer
internal import InvisoWire
internal import NIOCore
internal import NIOWebSocket

/// The server's decoders and bounded state machines under arbitrary input. The first byte
/// picks one:
///
/// 0. WebSocket frames into `WebSocketMessageAssembler`: never more than its byte bound
///    held or delivered, nothing but `.ignore` after a failure, deadlines honoured.
/// 1. `UTF8Validation` agrees with the standard library.
/// 2. Signaling text through `ClientMessage.parse`: parsed or a typed error.
/// 3. REST bodies through `JSONValue.parse` and every request type's validation.
/// 4. `ConnectionLedger` operations: counts exact, caps never exceeded.
enum ServerFuzzTarget {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        switch input.byte() % 5 {
        case 0: assembler(&input)
        case 1: utf8(input.rest())
        case 2: _ = try? ClientMessage.parse(input.rest())
        case 3: rest(input.rest())
        default: ledger(&input)
        }
    }

    static func assembler(_ input: inout FuzzInput) {
        let maxBytes = 64
        var assembler = WebSocketMessageAssembler(
            limits: .init(maxMessageBytes: maxBytes, maxFragments: 4, assemblyTimeout: .milliseconds(100)))
        var now = NIODeadline.uptimeNanoseconds(1_000_000)
        var failed = false
        while !input.isEmpty {
            let header = input.byte()
            let step = input.byte()
            let payload = input.chunk()
            now = now + .milliseconds(Int64(step % 64))
            let mask = header & 0x40 == 0 ? WebSocketMaskingKey([1, 2, 3, 4]) : nil
            var data = ByteBuffer(bytes: payload)
            if let mask { data.webSocketMask(mask) }
            let frame = WebSocketFrame(
                fin: header & 0x80 != 0, rsv1: header & 0x20 != 0 && header & 0x10 != 0, rsv2: false, rsv3: false,
                opcode: WebSocketOpcode(encodedWebSocketOpcode: header & 0x0F)!, maskKey: mask, data: data)
            let output = header & 0x30 == 0x30 ? assembler.checkDeadline(now: now) : assembler.receive(frame, now: now)
            invariant(assembler.bufferedBytes <= maxBytes, "assembler holds \(assembler.bufferedBytes) bytes")
            switch output {
            case .text(let message), .binary(let message):
                invariant(!failed, "a message delivered after a failure")
                invariant(message.readableBytes <= maxBytes, "a message of \(message.readableBytes) bytes")
            case .ping, .close:
                invariant(!failed, "a control frame handled after a failure")
            case .fail:
                invariant(!failed, "failed twice")
                failed = true
            case .ignore:
                break
            }
            if case .close = output { failed = true }  // closed: nothing more is handled
        }
    }

    static func utf8(_ bytes: [UInt8]) {
        invariant(
            UTF8Validation.isValid(bytes) == (String(validating: bytes, as: UTF8.self) != nil),
            "UTF-8 validation disagrees with the standard library")
    }

    static func rest(_ bytes: [UInt8]) {
        guard case .object(let object)? = try? JSONValue.parse(bytes) else { return }
        _ = try? CreateRoomRequest(json: object)
        _ = try? AcceptRoomRequest(json: object)
        _ = try? CheckRoomRequest(json: object)
        _ = try? DeleteRoomRequest(json: object)
        _ = try? PurgeRequest(json: object)
        _ = try? DeviceRequest(json: object)
        if let purge = try? PurgeRequest(json: object) {
            invariant((1...PurgeRequest.maxDeviceIDs).contains(purge.deviceIds.count), "purge list size")
        }
        if let create = try? CreateRoomRequest(json: object) {
            invariant((1...CreateRoomRequest.maxExpiresInSeconds).contains(create.expiresInSeconds), "expiry")
        }
    }

    static func ledger(_ input: inout FuzzInput) {
        let total = Int(input.byte() % 8) + 1
        var ledger = ConnectionLedger(limits: .init(total: total, perSource: 4, pendingPerSource: 2))
        var open: [UInt64] = []
        while !input.isEmpty {
            let operation = input.byte()
            let index = Int(input.byte())
            switch operation % 4 {
            case 0:
                if case .admitted(let id, let evicted) = ledger.admit(source: "s\(operation >> 2 & 3)") {
                    if let evicted {
                        invariant(open.contains(evicted), "evicted an unknown connection")
                        open.removeAll { $0 == evicted }
                    }
                    open.append(id)
                }
            case 1 where !open.isEmpty: ledger.settle(open[index % open.count])
            case 2 where !open.isEmpty: ledger.markPending(open[index % open.count])
            case 3 where !open.isEmpty: ledger.remove(open.remove(at: index % open.count))
            default: break
            }
            invariant(ledger.openCount == open.count, "ledger counts \(ledger.openCount), \(open.count) open")
            invariant(ledger.openCount <= total, "more than \(total) open")
            invariant(ledger.pendingTotal <= ledger.openCount, "more pending than open")
        }
    }

    /// One seed per mode, including every violation the assembler must catch.
    static func seeds() -> [[UInt8]] {
        [
            [0, 0x81, 0, 2, 0x7B, 0x7D],  // a text frame
            [0, 0x01, 0, 1, 0x61, 0x80, 1, 1, 0x62],  // two fragments
            [0, 0xC1, 0, 1, 0x61],  // unmasked
            [0, 0x83, 0, 0],  // reserved opcode
            [0, 0x88, 0, 1, 0x03],  // one-byte close
            [0, 0x01, 0, 1, 0x61, 0x30, 200, 0],  // a deadline passes
            [1] + Array("naïve ☃".utf8) + [0xED, 0xA0, 0x80],
            [2] + Array(#"{"type":"join_room","roomId":"r","deviceId":"d"}"#.utf8),
            [3] + Array(#"{"client1":"a","expiresInSeconds":"05","deviceIds":["x"],"deviceId":"y"}"#.utf8),
            [4, 3, 0, 0, 4, 0, 0, 1, 1, 0, 3, 0, 0, 0],
        ]
    }
}
