/// Names one link (a BLE connection, a UDP peer, a simulated edge) at one node.
///
/// Link IDs are local: the same physical connection may have different IDs at its two
/// ends. A node's ``MeshRouter`` learns which peer is behind a link from
/// ``MeshRouter/linkUp(_:peer:now:)``.
public struct LinkID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number the owner of the link chose.
    public var rawValue: UInt32

    /// Wraps a number chosen by the link's owner.
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    public static func < (lhs: LinkID, rhs: LinkID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `link<n>`.
    public var description: String { "link\(rawValue)" }
}
