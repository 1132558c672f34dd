import Foundation
@testable import InvisoServer
import InvisoTesting
import InvisoWire
import NIOCore
import NIOWebSocket
import Testing

/// The pure parts of the hardening: the frame assembler, the connection ledger, the
/// per-source keys and limiters, and UTF-8 validation — driven directly, time passed in.
@Suite("Hardening: state machines and limiters")
struct HardeningUnitTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    // MARK: - WebSocketMessageAssembler

    static let mask = WebSocketMaskingKey([1, 2, 3, 4])!

    /// A client frame as the decoder hands it over: masked data (unless `masked` is false).
    static func frame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true, masked: Bool = true, rsv1: Bool = false) -> WebSocketFrame {
        var data = ByteBuffer(bytes: bytes)
        if masked { data.webSocketMask(mask) }
        return WebSocketFrame(fin: fin, rsv1: rsv1, opcode: opcode, maskKey: masked ? mask : nil, data: data)
    }

    static func assembler(maxBytes: Int = 1_000, maxFragments: Int = 8, timeout: TimeAmount = .seconds(5)) -> WebSocketMessageAssembler {
        WebSocketMessageAssembler(limits: .init(maxMessageBytes: maxBytes, maxFragments: maxFragments, assemblyTimeout: timeout))
    }

    @Test("assembler: whole messages, fragments with control frames between, pings")
    func assemblerMessages() {
        var assembler = Self.assembler()
        #expect(assembler.receive(Self.frame(.text, Array("hello".utf8)), now: t0) == .text(ByteBuffer(string: "hello")))
        #expect(assembler.receive(Self.frame(.binary, [1, 2], fin: false), now: t0) == .ignore)
        #expect(assembler.bufferedBytes == 2)
        #expect(assembler.receive(Self.frame(.ping, [9]), now: t0) == .ping(ByteBuffer(bytes: [9])))
        #expect(assembler.receive(Self.frame(.pong, []), now: t0) == .ignore)
        #expect(assembler.receive(Self.frame(.continuation, [3], fin: false), now: t0) == .ignore)
        #expect(assembler.receive(Self.frame(.continuation, [4]), now: t0) == .binary(ByteBuffer(bytes: [1, 2, 3, 4])))
        #expect(assembler.assemblyDeadline == nil)
        #expect(assembler.receive(Self.frame(.text, Array("again".utf8)), now: t0) == .text(ByteBuffer(string: "again")))
    }

    @Test("assembler: every RFC 6455 violation fails with its code, and nothing is accepted after", arguments: [
        ("unmasked", [frame(.text, [0x61], masked: false)], UInt16(1002)),
        ("RSV1 without an extension", [frame(.text, [0x61], rsv1: true)], 1002),
        ("reserved opcode 3", [frame(WebSocketOpcode(encodedWebSocketOpcode: 3)!, [0x61])], 1002),
        ("reserved opcode 0xB", [frame(WebSocketOpcode(encodedWebSocketOpcode: 0xB)!, [])], 1002),
        ("continuation first", [frame(.continuation, [0x61])], 1002),
        ("new message inside one", [frame(.text, [0x61], fin: false), frame(.text, [0x62])], 1002),
        ("too large at once", [frame(.binary, [UInt8](repeating: 0, count: 1_001))], 1009),
        ("too large in fragments", [frame(.binary, [UInt8](repeating: 0, count: 600), fin: false), frame(.continuation, [UInt8](repeating: 0, count: 401))], 1009),
        ("too many fragments", [frame(.text, [0x61], fin: false)] + (0..<8).map { _ in frame(.continuation, [0x61], fin: false) }, 1009),
        ("close with one byte", [frame(.connectionClose, [0x03])], 1002),
        ("close code 999", [frame(.connectionClose, [0x03, 0xE7])], 1002),
        ("close code 1005", [frame(.connectionClose, [0x03, 0xED])], 1002),
        ("close code 2000", [frame(.connectionClose, [0x07, 0xD0])], 1002),
        ("close reason not UTF-8", [frame(.connectionClose, [0x03, 0xE8, 0xC3, 0x28])], 1007),
    ] as [(String, [WebSocketFrame], UInt16)])
    func assemblerViolations(name: String, frames: [WebSocketFrame], code: UInt16) {
        var assembler = Self.assembler()
        var outputs = frames.map { assembler.receive($0, now: t0) }
        guard case .fail(let failed, _)? = outputs.popLast() else {
            Issue.record("\(name): no failure")
            return
        }
        #expect(failed == code, "\(name)")
        #expect(outputs.allSatisfy { $0 == .ignore }, "\(name)")
        #expect(assembler.receive(Self.frame(.text, [0x61]), now: t0) == .ignore, "\(name): accepted after failing")
        #expect(assembler.bufferedBytes == 0)
    }

    @Test("assembler: close codes echoed as RFC 6455 §7.4 allows; an empty close is answered with 1000")
    func assemblerClose() {
        for (payload, code) in [([UInt8](), UInt16(1000)), ([0x03, 0xE8], 1000), ([0x03, 0xF3, 0x62, 0x79, 0x65], 1011), ([0x0F, 0xA0], 4000)] {
            var assembler = Self.assembler()
            #expect(assembler.receive(Self.frame(.connectionClose, payload), now: t0) == .close(code: code))
        }
        #expect(!WebSocketMessageAssembler.isValidCloseCode(1015))
        #expect(!WebSocketMessageAssembler.isValidCloseCode(5000))
        #expect(WebSocketMessageAssembler.isValidCloseCode(3000))
    }

    @Test("assembler: an unfinished message fails with 1008 at its deadline, not before")
    func assemblerDeadline() {
        var assembler = Self.assembler(timeout: .seconds(2))
        #expect(assembler.receive(Self.frame(.text, [0x61], fin: false), now: t0) == .ignore)
        #expect(assembler.assemblyDeadline == t0 + .seconds(2))
        #expect(assembler.checkDeadline(now: t0 + .milliseconds(1_999)) == .ignore)
        #expect(assembler.receive(Self.frame(.continuation, [0x62], fin: false), now: t0 + .seconds(1)) == .ignore)
        guard case .fail(1008, _) = assembler.checkDeadline(now: t0 + .seconds(2)) else {
            Issue.record("no failure at the deadline")
            return
        }
        #expect(assembler.bufferedBytes == 0)
        // A late fragment is refused the same way.
        var late = Self.assembler(timeout: .seconds(2))
        _ = late.receive(Self.frame(.text, [0x61], fin: false), now: t0)
        guard case .fail(1008, _) = late.receive(Self.frame(.continuation, [0x62]), now: t0 + .seconds(3)) else {
            Issue.record("late fragment accepted")
            return
        }
    }

    @Test("assembler: seeded random frames never crash and never exceed the byte bound")
    func assemblerRandom() {
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            var assembler = Self.assembler(maxBytes: 64, maxFragments: 4)
            for step in 0..<16 {
                let opcode = WebSocketOpcode(encodedWebSocketOpcode: UInt8.random(in: 0...15, using: &random))!
                let bytes = random.bytes(Int.random(in: 0...40, using: &random))
                let frame = Self.frame(opcode, bytes, fin: Bool.random(using: &random), masked: Int.random(in: 0..<20, using: &random) > 0)
                let output = assembler.receive(frame, now: t0 + .milliseconds(Int64(step)))
                #expect(assembler.bufferedBytes <= 64)
                if case .text(let buffer) = output { #expect(buffer.readableBytes <= 64) }
                if case .binary(let buffer) = output { #expect(buffer.readableBytes <= 64) }
            }
        }
    }

    // MARK: - UTF-8

    @Test("UTF-8 validation agrees with the standard library on seeded random and edge inputs")
    func utf8() {
        let edges: [[UInt8]] = [
            [], [0x41], [0xC2, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0xA0, 0x80], [0xED, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
            [0xE2, 0x82], [0x80], [0xFF], Array("naïve ☃ 𝄞".utf8),
        ]
        var random = SeededGenerator(seed: 11)
        let samples = edges + (0..<20_000).map { _ in random.bytes(Int.random(in: 0...8, using: &random)) }
        for bytes in samples {
            #expect(UTF8Validation.isValid(bytes) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
    }

    // MARK: - ConnectionLedger

    @Test("connection ledger: per-source caps, eviction of the longest-pending connection, settled ones kept")
    func ledger() {
        var ledger = ConnectionLedger(limits: .init(total: 4, perSource: 3, pendingPerSource: 2))
        guard case .admitted(let a1, nil) = ledger.admit(source: "a"), case .admitted(let a2, nil) = ledger.admit(source: "a") else {
            Issue.record("not admitted")
            return
        }
        #expect(ledger.admit(source: "a") == .refused)  // two pending from "a" already
        ledger.settle(a1)  // a1 became a WebSocket
        guard case .admitted(let a3, nil) = ledger.admit(source: "a") else {
            Issue.record("a3")
            return
        }
        #expect(ledger.admit(source: "a") == .refused)  // three open from "a"
        guard case .admitted(let b1, nil) = ledger.admit(source: "b") else {
            Issue.record("b1")
            return
        }
        #expect(ledger.openCount == 4)
        // Full: the longest-pending connection (a2) makes room; a1 (settled) is never chosen.
        guard case .admitted(let c1, let evicted) = ledger.admit(source: "c") else {
            Issue.record("c1")
            return
        }
        #expect(evicted == a2)
        ledger.settle(a3)
        ledger.markPending(a3)  // pending again: now the newest pending
        guard case .admitted(_, let evicted2) = ledger.admit(source: "d") else {
            Issue.record("d1")
            return
        }
        #expect(evicted2 == b1)
        ledger.settle(c1)
        ledger.settle(a3)
        ledger.remove(a1)
        guard case .admitted(_, nil) = ledger.admit(source: "e") else {
            Issue.record("e1")
            return
        }
        // All four settled or pending from others: with nothing pending left to evict, refuse.
        var full = ConnectionLedger(limits: .init(total: 1, perSource: 5, pendingPerSource: 5))
        guard case .admitted(let only, nil) = full.admit(source: "x") else {
            Issue.record("only")
            return
        }
        full.settle(only)
        #expect(full.admit(source: "y") == .refused)
        full.remove(only)
        #expect(full.openCount == 0 && full.pendingTotal == 0 && full.count(source: "x") == (0, 0))
    }

    @Test("connection ledger: 100,000 churned connections keep the eviction queue small and counts exact")
    func ledgerChurn() {
        var ledger = ConnectionLedger(limits: .init(total: 100, perSource: 1_000, pendingPerSource: 1_000))
        var random = SeededGenerator(seed: 3)
        var open: [UInt64] = []
        for _ in 0..<100_000 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !open.isEmpty: ledger.remove(open.remove(at: Int.random(in: 0..<open.count, using: &random)))
            case 1 where !open.isEmpty: ledger.settle(open[Int.random(in: 0..<open.count, using: &random)])
            case 2 where !open.isEmpty: ledger.markPending(open[Int.random(in: 0..<open.count, using: &random)])
            default:
                if case .admitted(let id, let evict) = ledger.admit(source: "s\(Int.random(in: 0..<5, using: &random))") {
                    if let evict { open.removeAll { $0 == evict } }
                    open.append(id)
                }
            }
            #expect(ledger.openCount == open.count)
            #expect(ledger.openCount <= 100)
        }
    }

    // MARK: - Source keys and limiters

    @Test("source keys: IPv4 as is, IPv6 on its /64 (configurable), IPv4-mapped IPv6 as IPv4")
    func sourceKeys() throws {
        let a = try SocketAddress(ipAddress: "2001:db8:1:2:aaaa::1", port: 1)
        let b = try SocketAddress(ipAddress: "2001:db8:1:2:ffff:ffff:ffff:ffff", port: 2)
        let c = try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 3)
        #expect(SourceKey.of(a) == SourceKey.of(b))
        #expect(SourceKey.of(a) != SourceKey.of(c))
        #expect(SourceKey.of(a) == "2001:0db8:0001:0002:0000:0000:0000:0000/64")
        #expect(SourceKey.of(a, ipv6PrefixLength: 128) != SourceKey.of(b, ipv6PrefixLength: 128))
        #expect(SourceKey.of(a, ipv6PrefixLength: 48) == SourceKey.of(c, ipv6PrefixLength: 48))
        #expect(SourceKey.of(a, ipv6PrefixLength: 56) == "2001:0db8:0001:0000:0000:0000:0000:0000/56")
        #expect(SourceKey.of(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 4)) == "192.0.2.7")
        #expect(SourceKey.of(try SocketAddress(ipAddress: "192.0.2.7", port: 5)) == "192.0.2.7")
        #expect(SourceKey.of(nil) == "unknown")
    }

    @Test("attempt limiter: checking and counting are one step — attempts in flight count until they succeed")
    func attemptsInFlight() {
        let limiter = AttemptLimiter(limit: 3, window: 60)
        let attempts = (0..<3).compactMap { _ in limiter.begin("a", now: start) }
        #expect(attempts.count == 3)
        #expect(limiter.begin("a", now: start) == nil)  // three in flight: a fourth is refused
        attempts[0].succeeded()
        #expect(limiter.begin("a", now: start) != nil)
        #expect(limiter.begin("a", now: start) == nil)
        #expect(limiter.begin("a", now: start.addingTimeInterval(60)) != nil)  // aged out
        #expect(limiter.begin("b", now: start) != nil)
    }

    @Test("keyed rate limiter: a bucket per key, bounded keys")
    func keyedRate() {
        let limiter = KeyedRateLimiter(rate: 1, burst: 2, maxKeys: 2)
        #expect(limiter.take("a", now: start) && limiter.take("a", now: start))
        #expect(!limiter.take("a", now: start))
        #expect(limiter.take("b", now: start))
        #expect(limiter.take("a", now: start.addingTimeInterval(1)))
        #expect(limiter.take("c", now: start.addingTimeInterval(1)))
        #expect(limiter.trackedKeys <= 2)
        limiter.prune(now: start.addingTimeInterval(100))
        #expect(limiter.trackedKeys == 0)
    }

    @Test("live-code ledger: reserve, commit, release on accept, forget at expiry, cancel")
    func liveCodes() {
        let ledger = LiveCodeLedger(limit: 2)
        let first = ledger.reserve("a", now: start)
        let second = ledger.reserve("a", now: start)
        #expect(first != nil && second != nil)
        #expect(ledger.reserve("a", now: start) == nil)
        first?.commit(code: "111111", expiresAt: start.addingTimeInterval(100))
        second?.cancel()
        let third = ledger.reserve("a", now: start)
        third?.commit(code: "222222", expiresAt: start.addingTimeInterval(10))
        #expect(ledger.reserve("a", now: start) == nil)
        ledger.release(code: "111111")
        #expect(ledger.count("a", now: start) == 1)
        #expect(ledger.reserve("b", now: start) != nil)
        #expect(ledger.count("a", now: start.addingTimeInterval(11)) == 0)
        #expect(ledger.reserve("a", now: start.addingTimeInterval(11)) != nil)
    }
}
