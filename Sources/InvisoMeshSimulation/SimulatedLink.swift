public import InvisoMesh
/// One end of a simulated link: sending hands the frame to the simulation, which loses it
/// with the link's loss probability or delivers it to the other end after a random latency.
public final class SimulatedLink: MeshLink {
    /// The link's ID at its node (its index in the node's neighbour list).
    public let id: LinkID
    /// The neighbour's peer ID.
    public let peer: PeerID?
    let node: Int32
    unowned let simulation: MeshSimulation

    init(id: LinkID, peer: PeerID, node: Int32, simulation: MeshSimulation) {
        self.id = id
        self.peer = peer
        self.node = node
        self.simulation = simulation
    }

    /// Hands `frame` to the simulation.
    public func send(_ frame: MeshFrame) {
        simulation.transmit(frame, from: node, link: id.rawValue)
    }
}
