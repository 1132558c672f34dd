import InvisoWire
import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket

// MARK: - One connection

extension SignalingClient {
    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Opens one WebSocket, serves it until it ends, and says why it ended.
    func connectOnce() async -> SignalingDisconnectReason {
        let configuration = self.configuration
        let group = self.group
        let channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>
        do {
            channel = try await withTimeout(
                configuration.connectTimeout, sleep: sleep, error: SignalingClientError.connectFailed
            ) {
                try await Self.openWebSocket(configuration, group: group)
            }
        } catch {
            logger.debug("signaling connect failed")
            return .connectFailed
        }
        do {
            return try await channel.executeThenClose { inbound, outbound in
                guard self.attach(outbound, channel: channel.channel) else { return .closedByUser }
                let reason = await withTaskGroup(of: SignalingDisconnectReason.self) { tasks in
                    tasks.addTask { await Self.readLoop(inbound, client: self) }
                    tasks.addTask { await self.pingLoop() }
                    let first = await tasks.next() ?? .connectionLost
                    tasks.cancelAll()
                    return first
                }
                self.detach()
                return reason
            }
        } catch {
            detach()
            return .connectionLost
        }
    }

    /// TCP (+ TLS), then the HTTP/1.1 upgrade to a WebSocket on the endpoint's path.
    private static func openWebSocket(
        _ configuration: Configuration, group: any EventLoopGroup
    ) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        let endpoint = configuration.endpoint
        let maxFrameSize = configuration.maxMessageBytes
        let timeout = TimeAmount(configuration.connectTimeout)  // keeps sub-second parts
        let upgrade = try await endpoint.connect(group: group, timeout: timeout) { channel in
            channel.eventLoop.makeCompletedFuture {
                let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        .websocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
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

    /// Makes `outbound` the current connection; `false` when the client was closed
    /// meanwhile.
    private func attach(_ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>, channel: any Channel) -> Bool {
        guard !userClosed else { return false }
        self.outbound = outbound
        self.channel = channel
        awaitingPong = nil
        fragments = []
        fragmentOpcode = nil
        return true
    }

    private func detach() {
        outbound = nil
        channel = nil
        awaitingPong = nil
    }

    /// Reads frames until the connection ends or a close frame arrives.
    private static func readLoop(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, client: SignalingClient
    ) async -> SignalingDisconnectReason {
        do {
            for try await frame in inbound {
                if let reason = await client.handle(frame) { return reason }
            }
        } catch {}
        return .connectionLost
    }

    /// Pings every `pingInterval`; returns ``SignalingDisconnectReason/pongTimeout`` when a
    /// pong is missing `pongTimeout` after its ping. Cancelled with the connection.
    private func pingLoop() async -> SignalingDisconnectReason {
        let interval = configuration.pingInterval
        let timeout = min(configuration.pongTimeout, interval)
        do {
            try await sleep(interval)
            while true {
                pingCounter &+= 1
                let payload = pingCounter
                awaitingPong = payload
                var data = ByteBuffer()
                data.writeInteger(payload)
                try await write(frame: Self.frame(.ping, data))
                try await sleep(timeout)
                if awaitingPong == payload {
                    logger.info("signaling pong timeout")
                    return .pongTimeout
                }
                try await sleep(interval - timeout)
            }
        } catch {
            return .connectionLost
        }
    }

    /// Handles one frame; returns a reason when the connection is over.
    private func handle(_ frame: WebSocketFrame) async -> SignalingDisconnectReason? {
        var data = frame.unmaskedData
        switch frame.opcode {
        case .ping:
            try? await write(frame: Self.frame(.pong, data))
        case .pong:
            if data.readableBytes == 8, let payload = data.readInteger(as: UInt64.self), payload == awaitingPong {
                awaitingPong = nil
            }
        case .connectionClose:
            let code = data.readWebSocketErrorCode().map(UInt16.init(webSocketErrorCode:)) ?? 1005
            var echo = ByteBuffer()
            echo.write(webSocketErrorCode: .normalClosure)
            try? await outbound?.write(Self.frame(.connectionClose, echo))
            return .serverClosed(code: code)
        case .text, .binary:
            fragments = Array(data.readableBytesView)
            fragmentOpcode = frame.opcode
            if frame.fin { await deliver() }
        case .continuation:
            guard fragmentOpcode != nil, fragments.count + data.readableBytes <= configuration.maxMessageBytes else {
                return .connectionLost
            }
            fragments.append(contentsOf: data.readableBytesView)
            if frame.fin { await deliver() }
        default:
            break
        }
        return nil
    }

    /// Delivers the collected message.
    private func deliver() async {
        let opcode = fragmentOpcode
        let bytes = fragments
        fragments = []
        fragmentOpcode = nil
        if opcode == .binary {
            continuation.yield(.binary(bytes))
            return
        }
        guard let message = try? ServerMessage.parse(bytes) else {
            logger.debug("signaling: unparseable text frame dropped")
            return
        }
        await receive(message)
    }

    /// Turns a server message into an event (and rejoins after the greeting).
    private func receive(_ message: ServerMessage) async {
        switch message {
        case .connected(let clientID, _):
            greeted = true
            continuation.yield(.connected(clientID: clientID))
            await resubscribe(room: activeRoom, codes: watched)
        case .roomJoined(let roomID, let userCount, let isInitiator, _):
            continuation.yield(.joined(roomID: roomID, userCount: userCount, isInitiator: isInitiator))
        case .roomReady(let roomID, let isInitiator):
            continuation.yield(.roomReady(roomID: roomID, isInitiator: isInitiator))
        case .roomAccepted(let joinID, let roomID):
            watched[joinID] = nil
            continuation.yield(.roomAccepted(joinID: joinID, roomID: roomID))
        case .relayed(let object):
            continuation.yield(.message(object))
        case .peerLeft:
            continuation.yield(.peerLeft)
        case .peerDisconnected:
            continuation.yield(.peerDisconnected)
        case .error(let text):
            logger.debug("signaling: server refused a request")
            continuation.yield(.serverError(text))
        case .roomFull:
            continuation.yield(.serverError(ServerMessage.roomFullText))
        case .leftRoom(let roomID?) where roomID == activeRoom?.roomID:
            activeRoom = nil
            continuation.yield(.roomClosed(roomID: roomID))
        case .leftRoom, .pong, .pingSent:
            break
        }
    }

    /// Sends `join_room` and `watch_code` again after a (re)connect.
    private func resubscribe(room: (roomID: String, deviceID: String)?, codes: [String: String]) async {
        if let room { try? await write(.joinRoom(roomID: room.roomID, deviceID: room.deviceID)) }
        for (code, device) in codes.sorted(by: { $0.key < $1.key }) {
            try? await write(.watchCode(joinID: code, client1: device))
        }
    }
}
