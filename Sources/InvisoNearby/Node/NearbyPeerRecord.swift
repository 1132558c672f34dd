import Foundation
import InvisoKit

/// What the store keeps about a peer (encoded as JSON, sealed by the store): its pinned
/// identity, what the user decided about it, the agreed lifetime and the conversation's
/// link state (the outbox of messages it has not acknowledged).
struct NearbyPeerRecord: Codable, Sendable {
    var identity: [UInt8]
    var name: String
    var accepted: Bool
    var verified: Bool
    var blocked: Bool
    var lifetime: UInt32
    var link: LinkState

    /// ``ReliableLink/Snapshot`` in a Codable form.
    struct LinkState: Codable, Sendable {
        var nextSeq: UInt64
        var peerAck: UInt64
        var delivered: UInt64
        var unacknowledged: [Data]
        var reordered: [UInt64: Data]

        init(_ snapshot: ReliableLink.Snapshot) {
            nextSeq = snapshot.nextSeq
            peerAck = snapshot.peerAck
            delivered = snapshot.delivered
            unacknowledged = snapshot.unacknowledged.map { Data($0) }
            reordered = snapshot.reordered.mapValues { Data($0) }
        }

        var snapshot: ReliableLink.Snapshot {
            ReliableLink.Snapshot(
                nextSeq: nextSeq, peerAck: peerAck, delivered: delivered, unacknowledged: unacknowledged.map { [UInt8]($0) },
                reordered: reordered.mapValues { [UInt8]($0) })
        }
    }
}

/// A stored message (JSON, sealed by the store).
struct NearbyMessageRecord: Codable, Sendable {
    /// `in` or `out`.
    var direction: String
    var peer: String
    var seq: UInt64
    var text: String
    var sentAt: UInt64
}
