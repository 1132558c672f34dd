public import InvisoMesh
/// How a ``MeshSimulation`` behaves: link loss and latency, churn, and the routers'
/// configuration.
public struct SimulationParameters: Sendable {
    /// Probability that one transmission on one link is lost (each transmission draws
    /// independently).
    public var loss = 0.10
    /// One-way latency of a transmission, drawn uniformly, in milliseconds.
    public var latencyMilliseconds: ClosedRange<Int> = 10...40
    /// A message counts as delivered to a node if it arrives within this many milliseconds
    /// of being sent.
    public var deadlineMilliseconds: Int64 = 60_000
    /// The routers' parameters (the same at every node).
    public var router = MeshRouter.Configuration()
    /// Seeds everything random in the run.
    public var seed: UInt64 = 1
    /// Threads that run the routers' inputs of one simulated millisecond (nodes are split
    /// between them). The results are the same for any count; only the speed differs.
    public var threads = 1

    /// The defaults: 10 % loss, 10–40 ms latency, a 60 s deadline.
    public init() {}
}
