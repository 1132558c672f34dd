public import InvisoTime
public import InvisoMesh
public import NIOCore

/// A ``MeshLink`` to one neighbour at a UDP address: each frame is encoded as one BitChat
/// packet (see ``MeshFrame/datagrams(to:timestamp:hopCounts:)``; a packet with a hop count
/// or acknowledgements riding on it goes in our `0xE2` / `0xE3` envelope, since every UDP
/// neighbour is an Inviso node) and sent as one datagram on the node's shared
/// ``UDPMeshSocket``.
///
/// Not thread-safe: one owner (``MeshNode``) uses it.
public final class UDPMeshLink: MeshLink {
    /// The link's ID at this node.
    public let id: LinkID
    /// The neighbour's address.
    public let address: SocketAddress
    /// The neighbour's peer ID once its announcement named it.
    public var peer: PeerID?
    private let socket: UDPMeshSocket
    private let clock: any InvisoClock

    /// A link to `address` over `socket`; `clock` stamps acknowledgements (ms since the epoch).
    public init(id: LinkID, address: SocketAddress, socket: UDPMeshSocket, clock: any InvisoClock) {
        self.id = id
        self.address = address
        self.socket = socket
        self.clock = clock
    }

    /// Sends `frame` (one datagram); a frame that cannot be encoded is dropped.
    public func send(_ frame: MeshFrame) {
        guard let datagrams = try? frame.datagrams(to: peer, timestamp: MeshNode.milliseconds(clock)) else { return }
        for bytes in datagrams { socket.send(bytes, to: address) }
    }
}
