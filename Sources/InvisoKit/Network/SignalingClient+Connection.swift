import InvisoTime
import InvisoWire
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization

// MARK: - The machine's actions, and one connection

extension SignalingClient: TimerDriving {
    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// A connection being opened: the channel once TCP is up, so that a connect timeout
    /// can close it even while the WebSocket upgrade hangs.
    final class PendingConnection: Sendable {
        private let state = Mutex<(channel: (any Channel)?, abandoned: Bool)>((nil, false))

        /// The TCP channel exists (closed at once when already abandoned).
        func attach(_ channel: any Channel) {
            let abandoned = state.withLock { state in
                state.channel = channel
                return state.abandoned
            }
            if abandoned { channel.close(promise: nil) }
        }

        /// Gives up on the connection: its channel closes and the upgrade fails.
        func abandon() {
            let channel = state.withLock { state in
                state.abandoned = true
                return state.channel
            }
            channel?.close(promise: nil)
        }
    }

    /// The payload of the latest pong of a connection, recorded on its event loop as the
    /// frame is decoded: a pong that arrived in time counts even when the tasks that read
    /// frames were starved by a busy CPU (a pong timeout then checks here first).
    final class PongLog: Sendable {
        let latest = Atomic<UInt64>(0)
    }

    /// Records pongs in a ``PongLog`` and passes every frame on.
    final class PongObserver: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = WebSocketFrame
        let log: PongLog

        init(log: PongLog) { self.log = log }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .pong, frame.length == 8 {
                let payload = frame.unmaskedData
                if let value = payload.getInteger(at: payload.readerIndex, as: UInt64.self) {
                    log.latest.store(value, ordering: .relaxed)
                }
            }
            context.fireChannelRead(data)
        }
    }

    /// Carries out the machine's actions in order.
    func perform(_ actions: [SignalingMachine.Action]) async {
        for action in actions {
            switch action {
            case .connect(let id):
                startConnection(id)
            case .closeConnection:
                closeConnection()
            case .send(let message):
                // The machine's own messages go out even as it closes (`leave_room`).
                try? await writeControl(.text, message.object.serialized())
            case .sendPing(let payload):
                try? await writeControl(.ping, payload)
            case .sendPong(let payload):
                try? await writeControl(.pong, payload)
            case .sendClose(let code):
                try? await writeControl(.connectionClose, [UInt8(code >> 8), UInt8(code & 0xFF)])
            case .emit(let event):
                if case .disconnected(let reason) = event, reason != .closedByUser, reason != .gaveUp {
                    logger.info("signaling connection ended", metadata: ["reason": "\(reason)"])
                }
                continuation.yield(event)
            case .arm(let timer, let deadline):
                arm(timer, at: deadline)
            case .cancel(let timer):
                timers.cancel(timer)
            case .finish:
                jobs?.finish()
                jobs = nil
                for waiter in finishWaiters { waiter.resume() }
                finishWaiters.removeAll()
            }
        }
    }

    func spawn(_ job: @escaping @Sendable () async -> Void) {
        jobs?.yield(job)
    }

    func timerFired(_ timer: SignalingMachine.Timer, generation: UInt64) async {
        guard timers.fire(timer, generation: generation) else { return }
        if timer == .pong, let pongLog, let id = openConnection {
            // The event loop saw the pong even if the reader has not got to it yet.
            let latest = pongLog.latest.load(ordering: .relaxed)
            let payload = (0..<8).map { UInt8(truncatingIfNeeded: latest >> (56 - 8 * $0)) }
            await perform(machine.received(.init(opcode: .pong, payload: payload), on: id, at: clock.now))
        }
        await perform(machine.timerFired(timer, at: clock.now))
    }

    /// Writes a frame the machine asked for, even while the client is closing (the close
    /// frame, `leave_room`).
    private func writeControl(_ opcode: WebSocketOpcode, _ payload: [UInt8]) async throws {
        guard let outbound else { return }
        try await outbound.write(Self.frame(opcode, ByteBuffer(bytes: payload)))
    }

    /// Closes the open connection, or abandons the one being opened.
    func closeConnection() {
        for connection in pending.values { connection.abandon() }
        pending.removeAll()
        channel?.close(promise: nil)
        outbound = nil
        channel = nil
        openConnection = nil
        pongLog = nil
    }

    /// Opens connection `id` in a child task and serves it until it ends.
    private func startConnection(_ id: UInt64) {
        let pendingConnection = PendingConnection()
        pending[id] = pendingConnection
        let pongLog = PongLog()
        let configuration = configuration
        let group = group
        spawn { [weak self] in
            let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
            do {
                channel = try await Self.openWebSocket(
                    configuration, group: group, pending: pendingConnection, pongLog: pongLog)
            } catch {
                await self?.connectionEnded(id)
                return
            }
            guard let self else {
                try? await channel.channel.close()
                return
            }
            do {
                try await channel.executeThenClose { inbound, outbound in
                    guard await self.opened(id, outbound: outbound, channel: channel.channel, pongLog: pongLog) else {
                        return
                    }
                    for try await frame in inbound {
                        await self.received(frame, on: id)
                    }
                }
            } catch {}
            await self.connectionEnded(id)
        }
    }

    /// The WebSocket is up; `false` when it is no longer wanted (timed out, closed).
    private func opened(
        _ id: UInt64, outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel, pongLog: PongLog
    ) async -> Bool {
        guard pending.removeValue(forKey: id) != nil, machine.connection == id, machine.phase == .connecting else {
            channel.close(promise: nil)
            return false
        }
        self.outbound = outbound
        self.channel = channel
        openConnection = id
        self.pongLog = pongLog
        await perform(machine.opened(id, at: clock.now))
        return true
    }

    private func received(_ frame: WebSocketFrame, on id: UInt64) async {
        let opcode: SignalingMachine.Frame.Opcode =
            switch frame.opcode {
            case .text: .text
            case .binary: .binary
            case .continuation: .continuation
            case .ping: .ping
            case .pong: .pong
            case .connectionClose: .close
            default: .other
            }
        let data = frame.unmaskedData
        let input = SignalingMachine.Frame(opcode: opcode, fin: frame.fin, payload: Array(data.readableBytesView))
        await perform(machine.received(input, on: id, at: clock.now))
    }

    private func connectionEnded(_ id: UInt64) async {
        pending[id] = nil
        if openConnection == id {
            outbound = nil
            channel = nil
            openConnection = nil
            pongLog = nil
        }
        await perform(machine.ended(id, at: clock.now))
    }

    /// TCP (+ TLS), then the HTTP/1.1 upgrade to a WebSocket on the endpoint's path.
    private static func openWebSocket(
        _ configuration: Configuration, group: any EventLoopGroup, pending: PendingConnection, pongLog: PongLog
    ) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        let endpoint = configuration.endpoint
        let maxFrameSize = configuration.maxMessageBytes
        let timeout = TimeAmount(configuration.connectTimeout)  // keeps sub-second parts
        let upgrade = try await endpoint.connect(group: group, timeout: timeout) { channel in
            pending.attach(channel)
            return channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(PongObserver(log: pongLog))
                        return .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                }
                var headers = HTTPHeaders()
                headers.add(name: "Host", value: endpoint.hostHeader)
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: endpoint.webSocketPath, headers: headers)
                let upgradeConfiguration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                    upgradeRequestHead: head, upgraders: [upgrader],
                    notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgradeConfiguration)
                // The server's `connected` greeting often arrives in the same segment as the
                // 101 response: hand those bytes to the WebSocket decoder, don't drop them.
                pipeline.leftOverBytesStrategy = .forwardBytes
                return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
            }
        }
        switch try await upgrade.get() {
        case .websocket(let channel): return channel
        case .refused: throw SignalingClientError.connectFailed
        }
    }
}
