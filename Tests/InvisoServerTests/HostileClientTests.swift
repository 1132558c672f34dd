import Foundation
@testable import InvisoServer
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization
import Testing

/// The findings of the hostile probe of `inviso serve` (issue 16), one regression test
/// each, with raw sockets where a client library would not misbehave. Every attack runs
/// beside an honest pair that must keep exchanging messages, with nothing lost.
@Suite("Hostile clients")
struct HostileClientTests {
    // MARK: - Support

    /// Runs `attack` while an honest pair in room `code` relays messages both ways every
    /// 50 ms (well under the 50-a-second socket limit even when a loaded server reads them
    /// in bursts); afterwards checks that every one arrived, in order.
    static func besideHonestPair(_ server: TestServer, code: String, _ attack: () async throws -> Void) async throws {
        let (creator, joiner, _) = try await SignalingSocketTests.joined(server, code: code)
        let stop = Atomic<Bool>(false)
        // At most 150 each: below the socket's burst of 200, since the test server's clock
        // (a manual one) never refills the bucket, however long a loaded host makes the attack.
        let sender = Task { () -> Int in
            var sent = 0
            while !stop.load(ordering: .relaxed) && sent < 150 {
                try await creator.send(#"{"type":"webrtc_offer","sdp":"n=\#(sent)"}"#)
                try await joiner.send(#"{"type":"webrtc_offer","sdp":"n=\#(sent)"}"#)
                sent += 1
                try await Task.sleep(for: .milliseconds(50))
            }
            return sent
        }
        do {
            try await attack()
        } catch {
            sender.cancel()
            throw error
        }
        stop.store(true, ordering: .relaxed)
        let sent = try await sender.value
        #expect(sent > 0)
        for (receiver, name) in [(joiner, "joiner"), (creator, "creator")] {
            for index in 0..<sent {
                let text = try await receiver.nextText(timeout: 30)
                #expect(text.contains(#""sdp":"n=\#(index)""#), "\(name) got \(text) for \(index)")
            }
        }
        await creator.close()
        await joiner.close()
    }

    /// The close code in a close frame's payload.
    static func closeCode(_ frame: RawWebSocket.Frame) -> UInt16? {
        guard frame.opcode == 0x8, frame.payload.count >= 2 else { return nil }
        return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
    }

    /// The bytes of a client frame with every bit chosen by the caller.
    static func rawFrame(firstByte: UInt8, _ payload: [UInt8], masked: Bool = true) -> [UInt8] {
        precondition(payload.count < 126)
        guard masked else { return [firstByte, UInt8(payload.count)] + payload }
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        return [firstByte, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Limits that let a room relay as fast as the test sends (the attack is the reader).
    static var unthrottledRelay: ServerLimits {
        var limits = ServerLimits()
        limits.roomRelayByteBurst = 1e9
        limits.roomRelayBytesPerSecond = 1e9
        limits.socketMessageBurst = 1e6
        return limits
    }

    static let upgradeRequest =
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    // MARK: - HIGH 1: a ping flood from a socket that never reads

    @Test("a ping flood from a client that never reads: pongs wait for writability and only the last is answered")
    func pingFloodNeverRead() async throws {
        // The flooder reads nothing until all 15.9 MB are out, which took a debug build
        // under the stress script more than the 30 s after which the server (rightly)
        // closes a socket that reads nothing: this test is about the pongs.
        var limits = ServerLimits()
        limits.stallTimeout = .seconds(120)
        try await TestServer.with(limits: limits) { server, _ in
            try await Self.besideHonestPair(server, code: "410001") {
                let flooder = try await RawWebSocket.connect(port: server.port, receiveBuffer: 4_096)
                try await flooder.setReading(false)
                let ping = RawWebSocket.frame(opcode: 0x9, [UInt8](repeating: 0x70, count: 125))
                let batch = Array([[UInt8]](repeating: ping, count: 500).joined())
                // 120,000 pings (15.9 MB): far more pongs than the kernel's socket buffers take
                // (up to 4 MB here), so before the fix the rest piled up in the server's memory.
                for _ in 0..<240 { try await flooder.sendRaw(batch) }
                try await flooder.sendRaw(RawWebSocket.frame(opcode: 0x9, Array("last".utf8)))
                try await Task.sleep(for: .milliseconds(300))
                try await flooder.setReading(true)
                var pongs = 0
                var last: [UInt8] = []
                // Until the answer to the last ping (120 s between pongs at most: a hang
                // detector; a debug build under the stress script took over 30 s to get
                // through the flood).
                while last != Array("last".utf8) {
                    guard let frame = try? await flooder.nextFrame(timeout: 120) else { break }
                    #expect(frame.opcode == 0xA)
                    pongs += 1
                    last = frame.payload
                }
                // The server's buffer for this socket stopped at its high-water mark; the
                // rest of the pings were coalesced into the one answered last. Without that,
                // every one of the 120,001 pings is answered; how many are (33,000–37,000 on
                // a quiet host, 64,143 once under the stress script) depends on how much the
                // kernel's buffers took before the server saw the socket unwritable.
                #expect(pongs < 100_000, "pongs: \(pongs)")
                #expect(last == Array("last".utf8))
                // The socket still works.
                try await flooder.send(#"{"type":"ping"}"#)
                #expect(try await flooder.nextText() == #"{"type":"pong"}"#)
                await flooder.close()
            }
        }
    }

    @Test("errors sent to a client that never reads are bounded: past the queue limit the socket is closed")
    func errorFloodNeverRead() async throws {
        var limits = ServerLimits()
        limits.socketMessageBurst = 1e6
        limits.socketMessagesPerSecond = 1e6
        limits.socketQueuedBytes = 64 << 10
        let queueLimit = limits.socketQueuedBytes
        try await TestServer.with(limits: limits) { server, _ in
            try await Self.besideHonestPair(server, code: "410002") {
                let before = server.server.hub.connectionCount
                let flooder = try await RawWebSocket.connect(port: server.port, receiveBuffer: 4_096)
                try await flooder.setReading(false)
                // Each malformed message earns a ~40-byte error the client never reads.
                let bad = Array([[UInt8]](repeating: RawWebSocket.text("{"), count: 1_000).joined())
                for _ in 0..<30 { flooder.sendRawWithoutWaiting(bad) }
                var closed = false
                for _ in 0..<500 where !closed {
                    closed = server.server.hub.connectionCount == before
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(closed, "the flooding socket is still open")
                #expect(server.server.hub.outboundBudget.queuedBytes < 2 * queueLimit)
                await flooder.close()
            }
        }
    }

    // MARK: - MEDIUM 4: relays to members that never read

    @Test("a member that never reads holds at most its queue limit, then is closed with 1008; its peer is told")
    func stalledMember() async throws {
        var limits = Self.unthrottledRelay
        limits.stallTimeout = .seconds(1)
        let queueLimit = limits.socketQueuedBytes
        try await TestServer.with(limits: limits) { server, _ in
            try await Self.besideHonestPair(server, code: "410003") {
                let (sender, reader, _) = try await SignalingSocketTests.joined(server, code: "410004", receiveBuffer: 4_096)
                try await reader.setReading(false)
                let chunk = RawWebSocket.frame(opcode: 0x2, [UInt8](repeating: 7, count: 60_000))
                for _ in 0..<160 { sender.sendRawWithoutWaiting(chunk) }  // 9.6 MB
                try await Task.sleep(for: .milliseconds(300))
                // Bounded while stalled: at most the socket's queue limit (the sender pauses at
                // the high-water mark; relays already on their way when it turns may overshoot
                // it, never the limit, past which the reader would be closed at once).
                #expect(server.server.hub.outboundBudget.queuedBytes <= queueLimit + 65_536)
                // After the stall timeout the reader is gone and the sender hears it.
                var told = false
                let deadline = ContinuousClock.now + .seconds(120)
                while !told, ContinuousClock.now < deadline {
                    told = (try? await sender.nextText(timeout: 5))?.contains(#""type":"peer_disconnected""#) == true
                }
                #expect(told)
                #expect(server.server.hub.outboundBudget.queuedBytes < 65_536)
                await sender.close()
                await reader.close()
            }
        }
    }

    @Test("many members that never read: past the server-wide budget the ones behind are closed")
    func outboundBudget() async throws {
        var limits = Self.unthrottledRelay
        limits.queuedBytesTotal = 400 << 10
        let budget = limits.queuedBytesTotal
        try await TestServer.with(limits: limits) { server, _ in
            try await Self.besideHonestPair(server, code: "410005") {
                var rooms: [(RawWebSocket, RawWebSocket)] = []
                for index in 0..<4 {
                    let (sender, reader, _) = try await SignalingSocketTests.joined(
                        server, code: "41001\(index)", receiveBuffer: 4_096)
                    try await reader.setReading(false)
                    rooms.append((sender, reader))
                }
                let chunk = RawWebSocket.frame(opcode: 0x2, [UInt8](repeating: 9, count: 60_000))
                for (sender, _) in rooms {
                    // 6 MB each: more than the kernel buffers (up to 4 MB) before the server's.
                    for _ in 0..<100 { sender.sendRawWithoutWaiting(chunk) }
                }
                var disconnected = 0
                for (sender, _) in rooms {
                    if let text = try? await sender.nextText(timeout: 30), text.contains("peer_disconnected") { disconnected += 1 }
                }
                #expect(disconnected >= 2, "closed: \(disconnected)")
                #expect(server.server.hub.outboundBudget.queuedBytes <= budget + SocketWriter.highWaterMark + 65_536)
                for (sender, reader) in rooms {
                    await sender.close()
                    await reader.close()
                }
            }
        }
    }

    // MARK: - MEDIUM 5: unfinished fragmented messages

    @Test("a fragmented message left unfinished is closed with 1008 at its deadline; too many fragments with 1009")
    func unfinishedFragments() async throws {
        var limits = ServerLimits()
        limits.webSocketAssemblyTimeout = .seconds(1)
        try await TestServer.with(limits: limits) { server, _ in
            try await Self.besideHonestPair(server, code: "410006") {
                let slow = try await RawWebSocket.connect(port: server.port)
                try await slow.sendRaw(RawWebSocket.frame(opcode: 0x1, Array(#"{"type":"#.utf8), fin: false))
                // Control frames keep the socket alive but do not extend the message's deadline.
                try await slow.sendRaw(RawWebSocket.frame(opcode: 0x9, [1]))
                var frame = try await slow.nextFrame(timeout: 30)
                if frame.opcode == 0xA { frame = try await slow.nextFrame(timeout: 30) }
                #expect(Self.closeCode(frame) == 1008)

                let many = try await RawWebSocket.connect(port: server.port)
                var bytes = RawWebSocket.frame(opcode: 0x1, [0x7B], fin: false)
                for _ in 0..<300 { bytes += RawWebSocket.frame(opcode: 0x0, [0x20], fin: false) }
                try await many.sendRaw(bytes)
                #expect(Self.closeCode(try await many.nextFrame()) == 1009)
            }
        }
    }

    // MARK: - LOW 9: framing violations

    @Test("RFC 6455 violations fail the connection with the right code", arguments: [
        ("unmasked text frame", rawFrame(firstByte: 0x81, Array(#"{"type":"ping"}"#.utf8), masked: false), UInt16(1002)),
        ("RSV1 without an extension", rawFrame(firstByte: 0xC1, Array(#"{"type":"ping"}"#.utf8)), 1002),
        ("reserved opcode 3", rawFrame(firstByte: 0x83, [0x61]), 1002),
        ("invalid UTF-8 in a text frame", rawFrame(firstByte: 0x81, [0x22, 0xC3, 0x28, 0x22]), 1007),
        ("close code 999", rawFrame(firstByte: 0x88, [0x03, 0xE7]), 1002),
        ("a one-byte close payload", rawFrame(firstByte: 0x88, [0x03]), 1002),
        ("a close reason that is not UTF-8", rawFrame(firstByte: 0x88, [0x03, 0xE8, 0xFF]), 1007),
    ] as [(String, [UInt8], UInt16)])
    func framingViolations(name: String, bytes: [UInt8], code: UInt16) async throws {
        try await TestServer.with { server, _ in
            let socket = try await RawWebSocket.connect(port: server.port)
            try await socket.sendRaw(bytes)
            let answer = try await socket.nextFrame()
            #expect(Self.closeCode(answer) == code, "\(name): \(answer)")
            #expect(await socket.closes(within: 30), "\(name): not closed")
            // Others are not affected.
            let other = try await RawWebSocket.connect(port: server.port)
            try await other.send(#"{"type":"ping"}"#)
            #expect(try await other.nextText() == #"{"type":"pong"}"#)
            await other.close()
        }
    }

    @Test("an upgrade asking for WebSocket version 8 gets 426 with Sec-WebSocket-Version: 13")
    func upgradeVersion() async throws {
        try await TestServer.with { server, _ in
            let socket = try await RawWebSocket.open(port: server.port)
            try await socket.sendRaw(Array(Self.upgradeRequest.replacingOccurrences(of: "Version: 13", with: "Version: 8").utf8))
            let head = try await socket.responseHead()
            #expect(head.hasPrefix("HTTP/1.1 426"), "\(head)")
            #expect(head.lowercased().contains("sec-websocket-version: 13"))
            await socket.close()
        }
    }

    // MARK: - LOW 7: a FIN without a close frame

    @Test("a member that sends a TCP FIN without a close frame is gone at once: the peer hears peer_disconnected")
    func halfClose() async throws {
        try await TestServer.with { server, _ in
            let (leaver, stayer, _) = try await SignalingSocketTests.joined(server, code: "410020")
            try await leaver.shutdownOutput()
            #expect(try await stayer.nextText(timeout: 30).contains(#""type":"peer_disconnected""#))
            await stayer.close()
            await leaver.close()
        }
    }

    // MARK: - HIGH 3: deadlines before a request is complete, caps, shutdown

    static var shortDeadlines: ServerLimits {
        var limits = ServerLimits()
        // Long enough that a loaded host (the whole suite in parallel beside busy loops) still
        // sets up the honest pair and gets its requests in before them; the sockets that
        // should close stay idle for longer. The honest pair's upgrade requests leave from
        // the event loop the moment each connection is up (`RawWebSocket.connect`): a test
        // task stalled by a busy cooperative pool once let the handshake deadline close one.
        limits.handshakeTimeout = .seconds(5)
        limits.requestTimeout = .seconds(5)
        limits.keepAliveTimeout = .seconds(5)
        return limits
    }

    @Test("idle, slowloris, half-sent body and idle keep-alive connections are closed at their deadlines")
    func deadlines() async throws {
        try await TestServer.with(limits: Self.shortDeadlines) { server, _ in
            try await Self.besideHonestPair(server, code: "410030") {
                let idle = try await RawWebSocket.open(port: server.port)
                let slowloris = try await RawWebSocket.open(port: server.port)
                // On a loaded host a connection may reach its handshake deadline before the
                // test's bytes do; it is closed either way, which is what is checked below.
                let halfBody = try await RawWebSocket.open(port: server.port)
                try? await halfBody.sendRaw(Array("POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{".utf8))
                let keptAlive = try await RawWebSocket.open(port: server.port)
                try? await keptAlive.sendRaw(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                if let head = try? await keptAlive.responseHead() { #expect(head.hasPrefix("HTTP/1.1 200")) }
                let started = ContinuousClock.now
                let header = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                for byte in header.prefix(8) {
                    try? await slowloris.sendRaw([byte])
                    try await Task.sleep(for: .seconds(1))
                }
                for (socket, name) in [(idle, "idle"), (slowloris, "slowloris"), (halfBody, "half body"), (keptAlive, "kept alive")] {
                    #expect(await socket.closes(within: 30), "\(name) still open")
                }
                #expect(ContinuousClock.now - started < .seconds(60))
            }
        }
    }

    @Test("a TLS client that sends no or half a ClientHello is closed at the handshake deadline")
    func tlsDeadline() async throws {
        try await TestServer.with(limits: Self.shortDeadlines, tls: (TLSTests.certificatePath, TLSTests.keyPath)) { server, _ in
            let silent = try await RawWebSocket.open(port: server.port)
            let half = try await RawWebSocket.open(port: server.port)
            // A TLS record header announcing 512 bytes of handshake, then only 5 of them.
            try await half.sendRaw([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03])
            #expect(await silent.closes(within: 30))
            #expect(await half.closes(within: 30))
        }
    }

    @Test("graceful shutdown closes idle and half-sent connections at once instead of waiting for them")
    func shutdownWithIdleConnections() async throws {
        var limits = ServerLimits()
        // Far beyond the bound below, so a close within it is the shutdown's, not the deadline's.
        limits.handshakeTimeout = .seconds(600)
        let clock = ContinuousClock()
        let elapsed = Mutex<Duration>(.zero)
        try await TestServer.with(limits: limits) { server, group in
            let idle = try await RawWebSocket.open(port: server.port)
            let half = try await RawWebSocket.open(port: server.port)
            try await half.sendRaw(Array("GET /health HTTP/1.1\r\nHost: x\r\n".utf8))
            let websocket = try await RawWebSocket.connect(port: server.port)
            try await Task.sleep(for: .milliseconds(100))
            let started = clock.now
            await group.triggerGracefulShutdown()
            #expect(await idle.closes(within: 30))
            #expect(await half.closes(within: 30))
            #expect(Self.closeCode(try await websocket.nextFrame()) == 1001)
            elapsed.withLock { $0 = clock.now - started }
        }
        #expect(elapsed.withLock { $0 } < .seconds(60))
    }

    @Test("per-source caps: one source cannot hold more pending connections; others are still served")
    func perSourceCaps() async throws {
        var limits = ServerLimits()
        limits.pendingConnectionsPerSource = 3
        limits.connectionsPerSource = 5
        try await TestServer.with(limits: limits) { server, _ in
            var held: [RawWebSocket] = []
            for _ in 0..<3 { held.append(try await RawWebSocket.open(port: server.port, from: "127.0.0.2")) }
            try await Task.sleep(for: .milliseconds(100))
            let refused = try await RawWebSocket.open(port: server.port, from: "127.0.0.2")
            #expect(await refused.closes(within: 30))
            // WebSockets do not count as pending, but count toward the source's total.
            var sockets: [RawWebSocket] = []
            for socket in held { await socket.close() }
            // A loaded host may not have seen those closes yet: wait until the server has.
            let deadline = ContinuousClock.now + .seconds(30)
            while server.server.guardian.counts.pending > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            for _ in 0..<5 { sockets.append(try await RawWebSocket.connect(port: server.port, from: "127.0.0.2")) }
            let sixth = try await RawWebSocket.open(port: server.port, from: "127.0.0.2")
            #expect(await sixth.closes(within: 30))
            // Another source is served.
            let other = try await RawWebSocket.open(port: server.port, from: "127.0.0.3")
            try await other.sendRaw(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(try await other.responseHead().hasPrefix("HTTP/1.1 200"))
            for socket in sockets + [other] { await socket.close() }
        }
    }

    @Test("with every descriptor held by idle connections, a new client evicts the oldest idle one and is served")
    func evictionWhenFull() async throws {
        var limits = ServerLimits()
        limits.maxConnections = 12
        limits.handshakeTimeout = .seconds(60)
        try await TestServer.with(limits: limits) { server, _ in
            let websocket = try await RawWebSocket.connect(port: server.port)
            var idle: [RawWebSocket] = []
            for index in 0..<11 { idle.append(try await RawWebSocket.open(port: server.port, from: "127.0.1.\(index + 1)")) }
            try await Task.sleep(for: .milliseconds(100))
            let client = try await RawWebSocket.open(port: server.port, from: "127.0.2.1")
            try await client.sendRaw(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(try await client.responseHead().hasPrefix("HTTP/1.1 200"))
            // One idle connection made room (which one: the longest pending, as the ledger's
            // unit test shows; accepts on two event loops may admit them in another order
            // than they were opened).
            var closed = 0
            for _ in 0..<100 where closed == 0 {
                try await Task.sleep(for: .milliseconds(100))
                for socket in idle where await socket.closes(within: 0) { closed += 1 }
            }
            #expect(closed == 1)
            try await websocket.send(#"{"type":"ping"}"#)
            #expect(try await websocket.nextText() == #"{"type":"pong"}"#)  // a WebSocket is never evicted
            for socket in idle + [client, websocket] { await socket.close() }
        }
    }

    @Test("connections that close at once, before or during setup, are forgotten: the source is not shut out")
    func churnLeavesNoEntries() async throws {
        var limits = ServerLimits()
        limits.pendingConnectionsPerSource = 8
        try await TestServer.with(limits: limits) { server, _ in
            let deadline = ContinuousClock.now + .seconds(60)
            for _ in 0..<300 {
                // A loaded host may not have seen the last closes yet: stay under the cap
                // (the point is that every entry goes, not how fast).
                while server.server.guardian.counts.pending >= 7,
                    ContinuousClock.now < deadline
                {
                    try await Task.sleep(for: .milliseconds(5))
                }
                let socket = try await RawWebSocket.open(port: server.port, from: "127.0.0.4")
                await socket.close()
            }
            // The closes get their own time: on a loaded host the churn itself may have used
            // most of the first deadline. A closed connection leaves at the latest when the
            // handshake timeout (10 s) drops it.
            let drained = ContinuousClock.now + .seconds(30)
            var counts = server.server.guardian.counts
            while counts.open > 0 || counts.pending > 0, ContinuousClock.now < drained {
                try await Task.sleep(for: .milliseconds(20))
                counts = server.server.guardian.counts
            }
            #expect(counts.open == 0 && counts.pending == 0, "\(counts)")
            // The kernel's accept queue may still hold closed connections the server has not
            // taken yet (a loaded host): they come and go; a leak would shut the source out
            // for good, so the health check must succeed within the deadline.
            var healthy = false
            while !healthy, ContinuousClock.now < drained + .seconds(30) {
                let client = try await RawWebSocket.open(port: server.port, from: "127.0.0.4")
                try? await client.sendRaw(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                healthy = (try? await client.responseHead())?.hasPrefix("HTTP/1.1 200") == true
                await client.close()
                if !healthy { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(healthy)
        }
    }

    // MARK: - LOW 10: malformed HTTP

    @Test("malformed HTTP gets 400 and the connection is closed", arguments: [
        ("garbage request line", "\u{1}\u{2}garbage\r\n\r\n"),
        ("Content-Length with Transfer-Encoding", "POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("negative Content-Length", "POST /api/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
        ("a 100 KB header", "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n"),
    ])
    func malformedHTTP(name: String, request: String) async throws {
        try await TestServer.with { server, _ in
            let socket = try await RawWebSocket.open(port: server.port)
            try? await socket.sendRaw(Array(request.utf8))
            let head = try await socket.responseHead()
            #expect(head.hasPrefix("HTTP/1.1 400"), "\(name): \(head)")
            #expect(await socket.closes(within: 30), "\(name): not closed")
        }
    }

    // MARK: - MEDIUM 6: TLS versions and suites

    @Test("TLS 1.0 and 1.1 are refused; TLS 1.2 only with forward-secret AEAD suites; TLS 1.3 works")
    func tlsVersions() async throws {
        try await TestServer.with(tls: (TLSTests.certificatePath, TLSTests.keyPath)) { server, _ in
            func handshake(_ configure: (inout TLSConfiguration) -> Void) async -> Bool {
                do {
                    var tls = try TLSTests.clientTLS()
                    configure(&tls)
                    let context = try NIOSSLContext(configuration: tls)
                    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    try NIOSSLClientHandler(context: context, serverHostname: nil))
                            }
                        }
                        .connect(host: "127.0.0.1", port: server.port).get()
                    defer { channel.close(promise: nil) }
                    var request = channel.allocator.buffer(string: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                    request.writeString("")
                    try await channel.writeAndFlush(request).get()
                    return true
                } catch {
                    return false
                }
            }
            #expect(!(await handshake { $0.minimumTLSVersion = .tlsv1; $0.maximumTLSVersion = .tlsv1 }))
            #expect(!(await handshake { $0.minimumTLSVersion = .tlsv11; $0.maximumTLSVersion = .tlsv11 }))
            #expect(!(await handshake {
                $0.maximumTLSVersion = .tlsv12
                $0.cipherSuites = "ECDHE-ECDSA-AES128-SHA:AES128-GCM-SHA256:AES256-SHA"
            }))
            #expect(await handshake { $0.maximumTLSVersion = .tlsv12; $0.cipherSuites = "ECDHE-ECDSA-AES128-GCM-SHA256" })
            #expect(await handshake { $0.minimumTLSVersion = .tlsv13 })
        }
    }
}
