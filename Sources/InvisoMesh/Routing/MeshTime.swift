/// A point in time as the mesh sees it: milliseconds since the Unix epoch.
///
/// BitChat packets carry their origin time in this unit, so the router uses one scale for
/// packet ages and for its own timers. The router never reads a clock: every input takes the
/// current ``MeshTime`` from its caller (a real clock in a node, simulated time in
/// ``MeshSimulation``).
public struct MeshTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: UInt64

    /// Creates a time from milliseconds since the Unix epoch.
    public init(milliseconds: UInt64) { self.milliseconds = milliseconds }

    /// This time plus `milliseconds` (saturating at the ends of the range).
    public func adding(milliseconds delta: Int64) -> MeshTime {
        if delta >= 0 {
            let (sum, overflow) = milliseconds.addingReportingOverflow(UInt64(delta))
            return MeshTime(milliseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return MeshTime(milliseconds: milliseconds > magnitude ? milliseconds - magnitude : 0)
    }

    /// Milliseconds from `earlier` to this time (negative when `earlier` is later).
    public func milliseconds(since earlier: MeshTime) -> Int64 {
        Int64(bitPattern: milliseconds &- earlier.milliseconds)
    }

    public static func < (lhs: MeshTime, rhs: MeshTime) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// The milliseconds, as a decimal number.
    public var description: String { "\(milliseconds)ms" }
}
