public import InvisoCrypto
public import InvisoWire
public import Logging
public import NIOCore
import NIOPosix

/// Listens for the peer's direct TCP connections and authenticates each one.
///
/// Bind it once the secure channel gave both sides the path key, send ``candidates()`` to
/// the peer in `transport_candidates`, then run a ``DirectConnector`` with the peer's
/// candidates. Every inbound connection runs the direct handshake (docs/direct.md) with the
/// listener's key and role, within ``DirectConfiguration/handshakeTimeout``; one that fails
/// or is too slow is closed. At most ``DirectConfiguration/maxPendingInbound`` inbound
/// connections are held at once (handshaking or waiting for the connector); more are
/// closed at accept. Authenticated connections wait for the connector.
///
/// ``close()`` stops listening and closes every connection not yet handed out; call it when
/// no more direct connections are wanted (normally right after the connector returned).
public final class DirectListener: Sendable {
    /// The port the listener is bound to.
    public let port: Int
    /// The address the listener is bound to (`0.0.0.0` or `::` for every interface).
    public let boundAddress: String
    /// This side's role in the room.
    public let role: V2Pairing.Role
    /// Limits and timeouts (also used by the connector).
    public let configuration: DirectConfiguration

    let key: SecretBytes
    let group: any EventLoopGroup
    let logger: Logger
    let inbox: DirectInbox
    private let serverChannel: any Channel

    private init(
        serverChannel: any Channel, port: Int, boundAddress: String, key: SecretBytes, role: V2Pairing.Role,
        configuration: DirectConfiguration, group: any EventLoopGroup, inbox: DirectInbox, logger: Logger
    ) {
        self.serverChannel = serverChannel
        self.port = port
        self.boundAddress = boundAddress
        self.key = key
        self.role = role
        self.configuration = configuration
        self.group = group
        self.inbox = inbox
        self.logger = logger
    }

    /// Binds a listener on ``DirectConfiguration/host``:``DirectConfiguration/port``.
    ///
    /// - Parameters:
    ///   - key: The 32-byte path key both sides derived from their secure channel. Never
    ///     logged or sent.
    ///   - role: This side's role (`creator` or `joiner`); the peer must have the other.
    ///   - configuration: Address, limits and timeouts.
    ///   - group: The event loops; `nil` uses NIO's shared singleton.
    ///   - logger: Receives connection-level events only (never keys, nonces, MACs,
    ///     frames or addresses).
    /// - Throws: ``DirectError/invalidKey`` for a key that is not 32 bytes or is all zero;
    ///   ``DirectError/bindFailed`` when the address cannot be bound.
    public static func bind(
        key: SecretBytes,
        role: V2Pairing.Role,
        configuration: DirectConfiguration = DirectConfiguration(),
        group: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "inviso.kit.direct")
    ) async throws(DirectError) -> DirectListener {
        guard key.count == 32, !key.withUnsafeBytes({ ConstantTime.isAllZero($0) }) else { throw .invalidKey }
        let group = group ?? MultiThreadedEventLoopGroup.singleton
        let inbox = DirectInbox(capacity: configuration.maxPendingInbound)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: Int32(clamping: configuration.maxPendingInbound))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                acceptInbound(channel, inbox: inbox, key: key, role: role, configuration: configuration, logger: logger)
            }
        let serverChannel: any Channel
        do {
            serverChannel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            logger.debug("direct listener bind failed")
            throw .bindFailed
        }
        guard let local = serverChannel.localAddress, let port = local.port, let address = local.ipAddress else {
            try? await serverChannel.close()
            throw .bindFailed
        }
        logger.debug("direct listener bound", metadata: ["port": "\(port)"])
        return DirectListener(
            serverChannel: serverChannel, port: port, boundAddress: address, key: key, role: role,
            configuration: configuration, group: group, inbox: inbox, logger: logger)
    }

    /// Where the peer should dial: the bound address when it is specific; for a wildcard
    /// bind, this machine's interface addresses (no link-local IPv6, loopback last). Send
    /// them in `transport_candidates`.
    public func candidates() -> [TransportCandidates.Candidate] {
        let devices = (try? System.enumerateDevices()) ?? []
        let addresses = devices.compactMap { $0.address?.ipAddress }
        return DirectCandidates.gather(boundAddress: boundAddress, port: port, interfaceAddresses: addresses)
    }

    /// Stops listening and closes every inbound connection not handed to a connector.
    /// Idempotent.
    public func close() async {
        let (ready, handshaking) = inbox.close()
        for channel in handshaking { channel.close(promise: nil) }
        for connection in ready { await connection.close() }
        try? await serverChannel.close()
    }

    /// Sets up one accepted channel, or refuses it when the inbox is full.
    private static func acceptInbound(
        _ channel: any Channel, inbox: DirectInbox, key: SecretBytes, role: V2Pairing.Role,
        configuration: DirectConfiguration, logger: Logger
    ) -> EventLoopFuture<Void> {
        guard inbox.reserve(channel) else {
            logger.debug("direct inbound connection refused: too many pending")
            return channel.eventLoop.makeFailedFuture(DirectError.connectionClosed)
        }
        return channel.eventLoop.makeCompletedFuture {
            let setup: DirectChannelSetup
            do {
                setup = try DirectPipeline.configure(
                    channel, side: .acceptor, key: key, role: role, configuration: configuration, logger: logger)
            } catch {
                inbox.release(channel)
                throw error
            }
            setup.established.whenComplete { result in
                switch result {
                case .success:
                    let connection = DirectConnection(setup, maxFrameBytes: configuration.maxFrameBytes)
                    if !inbox.deliver(connection, channel: channel) { connection.closeNow() }
                case .failure:
                    inbox.release(channel)
                }
            }
        }
    }
}
