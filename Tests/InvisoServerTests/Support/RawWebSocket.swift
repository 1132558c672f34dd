import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A WebSocket client at the byte level, for what a normal client library will not do:
/// fragmented messages, several frames in one TCP write, a peer that stops reading.
final class RawWebSocket: Sendable {
    /// A server frame.
    struct Frame: Sendable, Equatable {
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
    }

    private let channel: any Channel
    private let inbox: Inbox

    private init(channel: any Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// Connects, upgrades, and reads the `connected` greeting.
    static func connect(port: Int, receiveBuffer: Int? = nil, from localHost: String? = nil) async throws -> RawWebSocket {
        let request =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let socket = try await open(port: port, receiveBuffer: receiveBuffer, from: localHost, firstBytes: Array(request.utf8))
        let head = try await socket.responseHead()
        guard head.hasPrefix("HTTP/1.1 101") else { throw TestFailure("upgrade refused: \(head)") }
        let greeting = try await socket.nextFrame()
        guard greeting.text.contains(#""type":"connected""#) else { throw TestFailure("no greeting: \(greeting.text)") }
        return socket
    }

    /// Opens a bare TCP connection (from `localHost`, e.g. `127.0.0.2`, when given).
    ///
    /// `firstBytes` are written from the event loop as soon as the connection is up, not
    /// from the calling task: on a loaded host the cooperative pool can stall that task for
    /// longer than a test server's short handshake deadline, which would then close an
    /// honest connection before its request was even sent.
    static func open(
        port: Int, receiveBuffer: Int? = nil, from localHost: String? = nil, firstBytes: [UInt8]? = nil
    ) async throws -> RawWebSocket {
        let inbox = Inbox()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(inbox: inbox)) }
            }
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
        }
        if let localHost {
            bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: localHost, port: 0))
        }
        let connected = bootstrap.connect(host: "127.0.0.1", port: port)
        let channel: any Channel
        if let firstBytes {
            channel = try await connected.flatMap { channel in
                channel.writeAndFlush(ByteBuffer(bytes: firstBytes)).map { channel }
            }.get()
        } else {
            channel = try await connected.get()
        }
        return RawWebSocket(channel: channel, inbox: inbox)
    }

    /// The head of the next HTTP response (up to the blank line).
    func responseHead(timeout: Double = 30) async throws -> String {
        try await inbox.take(timeout: timeout) { bytes -> (String, Int)? in
            guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
            return (String(decoding: bytes[..<end.lowerBound], as: UTF8.self), end.upperBound)
        }
    }

    /// Whether the server closed the connection within `timeout` seconds.
    func closes(within timeout: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if inbox.isClosed || !channel.isActive { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return inbox.isClosed || !channel.isActive
    }

    /// Sends a TCP FIN (no close frame) and keeps reading.
    func shutdownOutput() async throws {
        try await channel.close(mode: .output)
    }

    /// The bytes of one masked client frame.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: bytes.append(0x80 | UInt8(payload.count))
        case ..<65_536: bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    static func text(_ text: String, fin: Bool = true) -> [UInt8] { frame(opcode: 0x1, Array(text.utf8), fin: fin) }

    func sendRaw(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    func send(_ text: String) async throws { try await sendRaw(Self.text(text)) }

    /// Queues bytes without waiting for them to leave (the server may not be reading).
    /// Sends `bytes` every `interval` from the connection's event loop until the returned
    /// task is cancelled: a keep-alive that a busy cooperative pool cannot delay.
    func repeatOnEventLoop(_ bytes: [UInt8], every interval: TimeAmount) -> RepeatedTask {
        let channel = channel
        return channel.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: interval) { _ in
            channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        }
    }

    func sendRawWithoutWaiting(_ bytes: [UInt8]) {
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
    }

    /// Stops or resumes reading from the socket (the server's writes then back up).
    func setReading(_ on: Bool) async throws {
        try await channel.setOption(ChannelOptions.autoRead, value: on).get()
        if on { channel.read() }
    }

    /// The next frame from the server.
    func nextFrame(timeout: Double = 30) async throws -> Frame {
        try await inbox.take(timeout: timeout) { bytes in Self.parseFrame(bytes) }
    }

    /// The next text frame's JSON `type`, skipping nothing.
    func nextText(timeout: Double = 30) async throws -> String {
        let frame = try await nextFrame(timeout: timeout)
        guard frame.opcode == 0x1 else { throw TestFailure("expected text, got opcode \(frame.opcode)") }
        return frame.text
    }

    /// True when no frame arrives within `seconds`.
    func isQuiet(for seconds: Double) async -> Bool {
        do {
            _ = try await nextFrame(timeout: seconds)
            return false
        } catch {
            return true
        }
    }

    func close() async {
        try? await channel.close()
    }

    private static func parseFrame(_ bytes: ArraySlice<UInt8>) -> (Frame, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let opcode = bytes[start] & 0x0F
        var length = Int(bytes[start + 1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[start + $1]) }
            offset = 10
        }
        guard bytes.count >= offset + length else { return nil }
        return (Frame(opcode: opcode, payload: Array(bytes[(start + offset)..<(start + offset + length)])), start + offset + length)
    }

    /// Received bytes, and parsing with a deadline.
    final class Inbox: Sendable {
        /// Received bytes; those before `start` are consumed (compacted now and then, so a
        /// large transfer costs linear time and the event loop never waits long on the lock).
        private struct Bytes: ~Copyable {
            var buffer: [UInt8] = []
            var start = 0
        }

        private let bytes = Mutex<Bytes>(Bytes())
        private let closed = Atomic<Bool>(false)

        func append(_ buffer: ByteBuffer) { bytes.withLock { $0.buffer += buffer.readableBytesView } }
        func markClosed() { closed.store(true, ordering: .relaxed) }
        var isClosed: Bool { closed.load(ordering: .relaxed) }

        /// Waits until `parse` finds a value at the front of the bytes; consumes what it used.
        /// `parse` gets a slice whose indices are positions in the whole buffer and returns
        /// the position after the value.
        func take<T>(timeout: Double, _ parse: (ArraySlice<UInt8>) -> (T, Int)?) async throws -> T {
            let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
            while true {
                let found = bytes.withLock { bytes -> T? in
                    guard let (value, end) = parse(bytes.buffer[bytes.start...]) else { return nil }
                    bytes.start = end
                    if bytes.start >= 1 << 20 || bytes.start == bytes.buffer.count {
                        bytes.buffer.removeFirst(bytes.start)
                        bytes.start = 0
                    }
                    return value
                }
                if let found { return found }
                if closed.load(ordering: .relaxed) { throw TestFailure("connection closed") }
                guard ContinuousClock.now < deadline else { throw TestFailure("timed out") }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let inbox: Inbox
        init(inbox: Inbox) { self.inbox = inbox }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            inbox.append(unwrapInboundIn(data))
        }

        func channelInactive(context: ChannelHandlerContext) {
            inbox.markClosed()
            context.fireChannelInactive()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed { inbox.markClosed() }
            context.fireUserInboundEventTriggered(event)
        }
    }
}
