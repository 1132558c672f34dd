/// One link from this node to one neighbour, as a node's I/O loop uses it: the router
/// decides, the node sends the router's frames on its links and feeds what they receive
/// back to ``MeshRouter/receive(_:on:now:)``.
///
/// Sending is fire-and-forget, like a BLE write without response or a UDP datagram: a
/// frame may be lost, and the router's acknowledgements, retries and gossip sync deal with
/// that. The in-process simulator's links (``SimulatedLink``) and the UDP links of real
/// processes (``UDPMeshLink``) implement this protocol.
public protocol MeshLink: AnyObject {
    /// The link's ID at this node.
    var id: LinkID { get }
    /// The peer at the other end, once known.
    var peer: PeerID? { get }
    /// Queues `frame` for the neighbour. Never blocks; a link that is down drops it.
    func send(_ frame: MeshFrame)
}
