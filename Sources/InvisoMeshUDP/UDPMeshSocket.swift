import InvisoMesh
public import NIOCore
import NIOPosix

/// A UDP socket that carries mesh packets between processes on a LAN: one encoded BitChat
/// packet per datagram (fragmented above the mesh's fragment size, so datagrams stay small).
///
/// Datagrams from any address are delivered to ``datagrams``; the node decides which
/// addresses are neighbours. Datagrams above ``maximumDatagram`` bytes are truncated by the
/// receive buffer and then fail to decode.
public final class UDPMeshSocket: Sendable {
    /// One received datagram.
    public struct Datagram: Sendable {
        /// The datagram's bytes.
        public var bytes: [UInt8]
        /// Where it came from.
        public var sender: SocketAddress
    }

    /// The largest datagram read.
    public static let maximumDatagram = 2_048

    private let channel: any Channel
    /// Datagrams as they arrive; finishes when the socket closes.
    public let datagrams: AsyncStream<Datagram>

    private init(channel: any Channel, datagrams: AsyncStream<Datagram>) {
        self.channel = channel
        self.datagrams = datagrams
    }

    /// Binds a socket.
    /// - Parameters:
    ///   - host: the address to bind (`0.0.0.0` for every interface, `127.0.0.1` for loopback).
    ///   - port: the port; 0 picks a free one (see ``localPort``).
    ///   - group: the event loops to run on.
    ///   - socketOptions: options set before binding (``MeshDiscovery`` shares its port).
    /// - Throws: NIO's error when the address is invalid or the port is taken.
    public static func bind(
        host: String, port: Int, group: any EventLoopGroup,
        socketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = []
    ) async throws -> UDPMeshSocket {
        let (stream, continuation) = AsyncStream<Datagram>.makeStream(bufferingPolicy: .bufferingNewest(4_096))
        var bootstrap = DatagramBootstrap(group: group)
        for (option, value) in socketOptions { bootstrap = bootstrap.channelOption(option, value: value) }
        let channel = try await bootstrap
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: maximumDatagram))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(InboundHandler(continuation: continuation))
                }
            }
            .bind(host: host, port: port).get()
        return UDPMeshSocket(channel: channel, datagrams: stream)
    }

    /// The bound port.
    public var localPort: Int? { channel.localAddress?.port }

    /// Sends one datagram; losses are not reported (UDP).
    public func send(_ bytes: [UInt8], to address: SocketAddress) {
        let buffer = channel.allocator.buffer(bytes: bytes)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: buffer), promise: nil)
    }

    /// Closes the socket; ``datagrams`` finishes.
    public func close() async {
        try? await channel.close()
    }

    private final class InboundHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>

        let continuation: AsyncStream<Datagram>.Continuation

        init(continuation: AsyncStream<Datagram>.Continuation) {
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            continuation.yield(Datagram(bytes: Array(buffer: envelope.data), sender: envelope.remoteAddress))
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A datagram error (an ICMP port-unreachable surfacing as ECONNREFUSED) must not
            // close the socket: the neighbour may come back.
        }
    }
}
