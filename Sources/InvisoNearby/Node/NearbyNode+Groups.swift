import Foundation
import InvisoCrypto
import InvisoKit
import InvisoStore
import InvisoTime

/// Groups (`docs/nearby.md`, "Groups"): ``NearbyGroup`` decides who gets what; the node
/// carries each payload over the pairwise conversation with that member (so members who
/// are away get it when they are back) and keeps the group, with its sender keys, in the
/// store.
extension NearbyNode {
    /// Creates a group of the named people (each must be someone you have talked to).
    public func createGroup(_ name: String, members names: [String]) {
        guard groupNamed(name) == nil else { return emit(.error("you already have a group called \(name)")) }
        var others: [NearbyPublicIdentity] = []
        for member in names {
            guard let identity = acceptedIdentity(named: member) else {
                return emit(.error("\(member) is not someone you have talked to (/connect \(member) first)"))
            }
            others.append(identity)
        }
        do {
            let (group, outgoing) = try NearbyGroup.create(name: name, me: identity.publicKey, others: others)
            groups[Hex.encode(group.id)] = group
            saveGroup(group)
            route(outgoing)
            emit(.groupUpdated(group: name, members: memberNames(group), epoch: group.epoch))
        } catch {
            emit(.error("cannot create \(name): \(Self.describe(error))"))
        }
    }

    /// Adds a person to a group you created.
    public func addToGroup(_ name: String, member: String) {
        changeGroup(name, member: member) { (group: inout NearbyGroup, identity) throws(NearbyGroup.Failure) in try group.add(identity) }
    }

    /// Removes a person from a group you created (everyone's keys change).
    public func removeFromGroup(_ name: String, member: String) {
        changeGroup(name, member: member) { (group: inout NearbyGroup, identity) throws(NearbyGroup.Failure) in try group.remove(identity) }
    }

    /// Leaves a group.
    public func leaveGroup(_ name: String) {
        guard var group = groupNamed(name) else { return emit(.error("no group called \(name)")) }
        let outgoing = group.leave()
        groups[Hex.encode(group.id)] = group
        saveGroup(group)
        route(outgoing)
        emit(.groupLeft(group: name, removed: false))
    }

    /// Sends `text` to a group: encrypted once, carried to every member.
    public func sendToGroup(_ text: String, group name: String) {
        guard var group = groupNamed(name) else { return emit(.error("no group called \(name)")) }
        let sentAt = UInt64(max(0, nowMilliseconds))
        do {
            var generator = SystemRandomNumberGenerator()
            let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let payload = NearbyPayload.text(try NearbyText(id: id, sentAt: sentAt, lifetime: group.lifetime, body: text))
            let outgoing = try group.encrypt(payload.encoded())
            groups[Hex.encode(group.id)] = group
            saveGroup(group)
            route(outgoing)
            storeGroupMessage(group, from: "you", id: id, text: text, sentAt: sentAt, lifetime: group.lifetime)
        } catch let error as NearbyGroup.Failure {
            emit(.error("not sent to \(name): \(Self.describe(error))"))
        } catch {
            emit(.error("not sent to \(name): \(error)"))
        }
    }

    /// Sets how long our next messages to the group `name` last; each member adopts it
    /// when it gets the first of them.
    public func setGroupLifetime(_ lifetime: NearbyLifetime, group name: String) {
        guard var group = groupNamed(name) else { return emit(.error("no group called \(name)")) }
        group.lifetime = lifetime
        groups[Hex.encode(group.id)] = group
        saveGroup(group)
        emit(.lifetimeChanged(with: name, lifetime: lifetime))
    }

    /// Whether a group has this name.
    public func isGroup(_ name: String) -> Bool { groupNamed(name) != nil }

    /// The names of the groups we are in, sorted.
    public func groupNames() -> [String] { groups.values.filter { !$0.hasLeft }.map(\.name).sorted() }

    /// A group payload delivered in order by the conversation with `key`.
    func groupPayload(_ payload: NearbyPayload, from key: String) {
        guard let peer = peers[key], let sender = try? NearbyPublicIdentity(peer.record.identity) else { return }
        switch payload {
        case .groupUpdate(let update):
            let groupKey = Hex.encode(update.groupID)
            do {
                var group: NearbyGroup
                var outgoing: [NearbyGroup.Outgoing]
                if var known = groups[groupKey] {
                    let before = (known.epoch, known.members)
                    outgoing = try known.receive(update, from: sender)
                    group = known
                    if group.hasLeft {
                        groups[groupKey] = group
                        saveGroup(group)
                        return emit(.groupLeft(group: group.name, removed: true))
                    }
                    guard before != (group.epoch, group.members) else {
                        groups[groupKey] = group
                        saveGroup(group)
                        return
                    }
                } else {
                    (group, outgoing) = try NearbyGroup.join(update, from: sender, me: identity.publicKey)
                }
                groups[groupKey] = group
                introduce(group.members)
                saveGroup(group)
                route(outgoing)
                emit(.groupUpdated(group: group.name, members: memberNames(group), epoch: group.epoch))
            } catch {
                emit(.error("a group update from \(peer.record.name) was refused: \(Self.describe(error))"))
            }
        case .groupMessage(let id, let epoch, let ciphertext):
            guard var group = groups[Hex.encode(id)] else { return }
            do {
                let plaintext = try group.decrypt(ciphertext, epoch: epoch, from: sender)
                groups[Hex.encode(id)] = group
                saveGroup(group)
                guard case .text(let text) = try NearbyPayload(decoding: plaintext) else { return }
                let expiresAt = storeGroupMessage(
                    group, from: peer.record.name, id: text.id, text: text.body, sentAt: text.sentAt, lifetime: text.lifetime)
                emit(.groupMessage(group: group.name, from: peer.record.name, text: text.body, sentAt: text.sentAt, expiresAt: expiresAt))
                if text.lifetime != group.lifetime {
                    group.lifetime = text.lifetime
                    groups[Hex.encode(id)] = group
                    saveGroup(group)
                    emit(.lifetimeChanged(with: group.name, lifetime: text.lifetime))
                }
            } catch {
                emit(.error("a message to \(group.name) from \(peer.record.name) was refused: \(Self.describe(error))"))
            }
        case .groupLeave(let id):
            guard var group = groups[Hex.encode(id)] else { return }
            let wasMember = !group.hasLeft
            let outgoing = group.receiveLeave(from: sender)
            groups[Hex.encode(id)] = group
            saveGroup(group)
            route(outgoing)
            if wasMember, group.hasLeft {
                emit(.groupLeft(group: group.name, removed: true))
            } else {
                emit(.groupUpdated(group: group.name, members: memberNames(group), epoch: group.epoch))
            }
        default:
            break
        }
    }

    // MARK: - Helpers

    private func changeGroup(
        _ name: String, member: String,
        _ change: (inout NearbyGroup, NearbyPublicIdentity) throws(NearbyGroup.Failure) -> [NearbyGroup.Outgoing]
    ) {
        guard var group = groupNamed(name) else { return emit(.error("no group called \(name)")) }
        guard let identity = acceptedIdentity(named: member) else {
            return emit(.error("\(member) is not someone you have talked to"))
        }
        do {
            let outgoing = try change(&group, identity)
            groups[Hex.encode(group.id)] = group
            saveGroup(group)
            route(outgoing)
            emit(.groupUpdated(group: name, members: memberNames(group), epoch: group.epoch))
        } catch {
            emit(.error("cannot change \(name): \(Self.describe(error))"))
        }
    }

    /// Sends each payload over the pairwise conversation with its recipient.
    private func route(_ outgoing: [NearbyGroup.Outgoing]) {
        for item in outgoing {
            let key = Hex.encode(item.to.bytes)
            guard peers[key] != nil else { continue }
            enqueuePayload(item.payload, to: key)
        }
    }

    /// The identity of the accepted person called `name`.
    private func acceptedIdentity(named name: String) -> NearbyPublicIdentity? {
        guard let key = peerKey(named: name), let peer = peers[key], peer.record.accepted else { return nil }
        return try? NearbyPublicIdentity(peer.record.identity)
    }

    func groupNamed(_ name: String) -> NearbyGroup? {
        groups.values.first { $0.name == name && !$0.hasLeft }
    }

    private func memberNames(_ group: NearbyGroup) -> [String] {
        group.members.map { member in
            member == identity.publicKey ? configuration.name : peers[Hex.encode(member.bytes)]?.record.name ?? member.shortFingerprint
        }
    }

    private func saveGroup(_ group: NearbyGroup) {
        persist(group.snapshot, kind: "group", id: Hex.encode(group.id))
    }

    /// Stores a group message; returns when it expires (ms since 1970), if it does.
    @discardableResult
    private func storeGroupMessage(
        _ group: NearbyGroup, from sender: String, id: [UInt8], text: String, sentAt: UInt64, lifetime: NearbyLifetime
    ) -> UInt64? {
        storeMessage(
            NearbyMessageRecord(direction: sender == "you" ? "out" : "in", peer: sender, seq: 0, text: text, sentAt: sentAt),
            conversation: Self.groupConversation(group), id: Hex.encode(id), lifetime: lifetime)
    }

    /// The store's conversation key of a group's messages.
    static func groupConversation(_ group: NearbyGroup) -> String { "group-" + Hex.encode(group.id) }

    static func describe(_ error: any Error) -> String {
        switch error as? NearbyGroup.Failure {
        case .notCreator: "only the group's creator changes its members"
        case .invalidMembers: "a group has 1 to 32 different members"
        case .notMember: "not a member"
        case .noKey: "no key for it (sent before you joined, or after you were removed)"
        case .left: "you left this group"
        case nil: "\(error)"
        }
    }
}
