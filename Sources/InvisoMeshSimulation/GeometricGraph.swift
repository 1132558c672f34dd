import InvisoMesh
/// A random geometric graph: nodes at uniform random points in the unit square, linked
/// when they are within a radius of each other — the usual model of short-range radios.
///
/// The radius is chosen so the mean degree is the one asked for (exactly, before the
/// largest connected component is taken). Only the largest connected component is kept:
/// ``droppedNodes`` says how many generated nodes were outside it, and figures are measured
/// on the component alone.
public struct GeometricGraph: Sendable {
    /// Node positions, in the unit square.
    public let positions: [(x: Double, y: Double)]
    /// Neighbour lists, each ascending.
    public let neighbours: [[Int32]]
    /// The link radius.
    public let radius: Double
    /// Generated nodes left out because they were not in the largest component.
    public let droppedNodes: Int

    /// The number of nodes.
    public var count: Int { neighbours.count }

    /// The mean number of neighbours.
    public var meanDegree: Double {
        count == 0 ? 0 : Double(neighbours.reduce(0) { $0 + $1.count }) / Double(count)
    }

    /// Generates a graph of `nodeCount` points with mean degree `meanDegree`, keeps its
    /// largest connected component.
    public init(nodeCount: Int, meanDegree: Double, seed: UInt64) {
        precondition(nodeCount >= 2, "a graph needs two nodes")
        var random = MeshRandom(seed: seed)
        var points: [(x: Double, y: Double)] = []
        points.reserveCapacity(nodeCount)
        for _ in 0..<nodeCount { points.append((random.unit(), random.unit())) }

        // Expected radius for the degree, ignoring the border; gather candidate pairs within
        // twice that, then pick the radius at which exactly degree × n / 2 pairs remain.
        let estimate = (meanDegree / (Double.pi * Double(nodeCount - 1))).squareRoot()
        let targetEdges = max(1, Int((meanDegree * Double(nodeCount) / 2).rounded()))
        var searchRadius = estimate * 2
        var pairs: [(distance: Double, a: Int32, b: Int32)] = []
        while true {
            pairs = Self.pairs(within: searchRadius, points: points)
            if pairs.count >= targetEdges || searchRadius > 1.5 { break }
            searchRadius *= 1.5
        }
        pairs.sort { $0.distance < $1.distance }
        let edgeCount = min(targetEdges, pairs.count)
        let radius = edgeCount > 0 ? pairs[edgeCount - 1].distance : 0
        var adjacency = [[Int32]](repeating: [], count: nodeCount)
        for pair in pairs.prefix(edgeCount) {
            adjacency[Int(pair.a)].append(pair.b)
            adjacency[Int(pair.b)].append(pair.a)
        }

        // Largest connected component.
        var component = [Int32](repeating: -1, count: nodeCount)
        var best = (label: Int32(-1), size: 0)
        var label: Int32 = 0
        for start in 0..<nodeCount where component[start] < 0 {
            var stack = [Int32(start)]
            component[start] = label
            var size = 0
            while let node = stack.popLast() {
                size += 1
                for next in adjacency[Int(node)] where component[Int(next)] < 0 {
                    component[Int(next)] = label
                    stack.append(next)
                }
            }
            if size > best.size { best = (label, size) }
            label += 1
        }
        var newIndex = [Int32](repeating: -1, count: nodeCount)
        var kept: [(x: Double, y: Double)] = []
        for node in 0..<nodeCount where component[node] == best.label {
            newIndex[node] = Int32(kept.count)
            kept.append(points[node])
        }
        var lists = [[Int32]](repeating: [], count: kept.count)
        for node in 0..<nodeCount where newIndex[node] >= 0 {
            lists[Int(newIndex[node])] = adjacency[node].map { newIndex[Int($0)] }.sorted()
        }
        positions = kept
        neighbours = lists
        self.radius = radius
        droppedNodes = nodeCount - kept.count
    }

    /// Hop distances from `source` to every node (-1 if unreachable).
    public func hopDistances(from source: Int) -> [Int32] {
        var distance = [Int32](repeating: -1, count: count)
        var queue = [Int32(source)]
        queue.reserveCapacity(count)
        distance[source] = 0
        var head = 0
        while head < queue.count {
            let node = Int(queue[head])
            head += 1
            for next in neighbours[node] where distance[Int(next)] < 0 {
                distance[Int(next)] = distance[node] + 1
                queue.append(next)
            }
        }
        return distance
    }

    /// All point pairs closer than `radius`, via a grid of `radius`-sized cells.
    private static func pairs(within radius: Double, points: [(x: Double, y: Double)]) -> [(distance: Double, a: Int32, b: Int32)] {
        let cells = max(1, min(4096, Int(1 / radius)))
        var grid = [[Int32]](repeating: [], count: cells * cells)
        func cell(_ value: Double) -> Int { min(cells - 1, Int(value * Double(cells))) }
        for (index, point) in points.enumerated() {
            grid[cell(point.y) * cells + cell(point.x)].append(Int32(index))
        }
        var result: [(distance: Double, a: Int32, b: Int32)] = []
        let squared = radius * radius
        for (index, point) in points.enumerated() {
            let cx = cell(point.x)
            let cy = cell(point.y)
            for y in max(0, cy - 1)...min(cells - 1, cy + 1) {
                for x in max(0, cx - 1)...min(cells - 1, cx + 1) {
                    for other in grid[y * cells + x] where Int(other) > index {
                        let dx = points[Int(other)].x - point.x
                        let dy = points[Int(other)].y - point.y
                        let d2 = dx * dx + dy * dy
                        if d2 <= squared { result.append((d2.squareRoot(), Int32(index), other)) }
                    }
                }
            }
        }
        return result
    }
}
