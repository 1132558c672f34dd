import Foundation
import InvisoStore

/// One stored session as `inviso sessions` shows it: what the store keeps about it, minus
/// anything secret (the invite code holds the pairing secret; device and room IDs are not
/// for display).
struct SessionSummary: Encodable, Sendable, Hashable {
    /// The session's local ID.
    let id: String
    /// The user's name for it.
    let name: String
    /// `pending`, `accepted`, `active` or `closed`.
    let state: String
    /// `v2` or `v1`.
    let `protocol`: String
    /// Whether the peer's identity is verified; `nil` before the peer is pinned.
    let verified: Bool?
    /// `ephemeral`, `1h`, `6h`, `1d`, `7d` or `30d`.
    let lifetime: String
    /// Creation time.
    let created: Date
    /// Messages kept (unexpired); always 0 for an ephemeral session.
    let messages: Int
    /// The rendezvous server.
    let server: String
    /// The peer's display name, if it sent one.
    let peer: String?

    /// The summary of `session`, with its pinned identity and message count read from `store`.
    init(_ session: StoredSession, store: InvisoStore, now: Date) throws {
        let identity = try store.pinnedIdentity(sessionID: session.id)
        let count = session.isEphemeral ? 0 : try store.messages(sessionID: session.id, now: now).count
        self.init(session, identity: identity, messageCount: count)
    }

    /// The summary of `session` given its pinned identity and message count.
    init(_ session: StoredSession, identity: PinnedIdentity?, messageCount: Int) {
        id = session.id
        name = session.name
        state = session.state.rawValue
        `protocol` = "v\(session.protocolVersion)"
        verified = identity?.isVerified
        lifetime = session.lifetime.rawValue
        created = session.createdAt
        messages = messageCount
        server = session.serverURL
        peer = session.peerDisplayName
    }

    enum CodingKeys: String, CodingKey {
        case id, name, state, `protocol`, verified, lifetime, created, messages, server, peer
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(state, forKey: .state)
        try container.encode(`protocol`, forKey: .protocol)
        try container.encode(verified, forKey: .verified)  // null when not pinned yet
        try container.encode(lifetime, forKey: .lifetime)
        try container.encode(Self.iso8601(created), forKey: .created)
        try container.encode(messages, forKey: .messages)
        try container.encode(server, forKey: .server)
        try container.encode(peer, forKey: .peer)
    }

    /// `2025-01-31T12:00:00.000Z`.
    static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
