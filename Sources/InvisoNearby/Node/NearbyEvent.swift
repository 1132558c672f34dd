/// A person as the node knows them.
public struct NearbyPeerInfo: Sendable, Hashable {
    /// The display name (the service's instance name, or the hello's name).
    public var name: String
    /// The short fingerprint (16 hex digits).
    public var fingerprint: String
    /// Never talked to, talked to before, or verified by comparing safety numbers.
    public var status: Status

    /// How well we know a peer.
    public enum Status: String, Sendable, Hashable {
        /// First seen now.
        case new
        /// Talked to before (its identity is pinned).
        case known
        /// The user compared safety numbers and marked it verified.
        case verified
        /// Blocked: it cannot reach us.
        case blocked
    }

    /// A peer's summary.
    public init(name: String, fingerprint: String, status: Status) {
        self.name = name
        self.fingerprint = fingerprint
        self.status = status
    }
}

/// What a ``NearbyNode`` reports.
public enum NearbyEvent: Sendable, Equatable {
    /// The node listens and (unless `--peer` only) announces itself.
    case ready(name: String, port: Int, fingerprint: String)
    /// A person appeared on the network.
    case peerFound(NearbyPeerInfo)
    /// A person left the network (their last announcement went away).
    case peerLost(name: String)
    /// Someone asks to talk; answer with ``NearbyNode/accept(_:)`` or ``NearbyNode/reject(_:)``.
    case request(NearbyPeerInfo)
    /// A conversation is open.
    case connected(NearbyPeerInfo)
    /// A message arrived (`seq` is the sender's number; `expiresAt` in ms since 1970).
    case message(from: String, seq: UInt64, text: String, sentAt: UInt64, expiresAt: UInt64?)
    /// Our messages with these numbers reached the peer.
    case delivered(to: String, seqs: ClosedRange<UInt64>)
    /// A message was queued (sent now, or when the peer is back).
    case queued(to: String, seq: UInt64, text: String, sentAt: UInt64)
    /// The peer proposed a lifetime (answer with ``NearbyNode/setLifetime(_:for:)``).
    case lifetimeProposed(by: String, lifetime: NearbyLifetime)
    /// Both sides agreed on a lifetime.
    case lifetimeChanged(with: String, lifetime: NearbyLifetime)
    /// The connection ended.
    case closed(peer: String, reason: String)
    /// A peer presented an identity other than the one pinned for its name; refused until
    /// ``NearbyNode/trust(_:)``.
    case identityChanged(name: String, pinned: String, presented: String)
    /// Someone offers a file (answer with ``NearbyNode/acceptFile(_:)`` or ``NearbyNode/rejectFile(_:)``).
    case fileOffer(from: String, id: String, name: String, size: UInt64)
    /// A transfer moved: `bytes` of `total` sent or received.
    case fileProgress(peer: String, id: String, bytes: UInt64, total: UInt64, sending: Bool)
    /// A file arrived whole, its SHA-256 checked, at `path` inside the downloads folder.
    case fileReceived(from: String, id: String, path: String, sha256: String)
    /// The receiver has the whole file (`verified`: its hash matched).
    case fileSent(to: String, id: String, verified: Bool)
    /// The receiver refused the file.
    case fileRefused(by: String, id: String)
    /// A transfer with `peer` stopped: `byPeer` when they cancelled it (or their file is
    /// gone), else we did.
    case fileCancelled(peer: String, id: String, byPeer: Bool)
    /// A group's members or epoch changed (or we joined it).
    case groupUpdated(group: String, members: [String], epoch: UInt32)
    /// A message to a group.
    case groupMessage(group: String, from: String, text: String, sentAt: UInt64, expiresAt: UInt64?)
    /// We left a group, or its creator removed us.
    case groupLeft(group: String, removed: Bool)
    /// Something failed (a plain sentence).
    case error(String)
}
