import Crypto
import Foundation
import InvisoCrypto
import InvisoSignal

/// A named group of up to 32 people, as a value-type machine: membership by epochs, and
/// InvisoSignal's sender keys (each member encrypts a message once with its own key; the
/// node carries the result to every member over the pairwise conversations, whose outboxes
/// keep it for members who are away).
///
/// ```
///   create ─▶ epoch 1: the creator's update (members + its sender key) to every member
///   member gets an update of a newer epoch from the creator ─▶ adopts it, sends its own
///       sender key for that epoch to every other member
///   add / remove (creator) or a member's leave ─▶ epoch + 1: every member makes a new
///       sender key; a removed member gets only a leave notice, never a key of the new
///       epoch, so it cannot read what follows
/// ```
///
/// The creator (`members[0]`) alone changes membership. Sender keys are per epoch
/// (distribution id = the first 16 bytes of SHA-256 over a label, the group, the epoch
/// and the sender's identity). Messages from someone who is not a current member, or of
/// an epoch whose key is gone, are refused.
public struct NearbyGroup: Sendable {
    /// What to send to whom (over the pairwise conversation with that person).
    public struct Outgoing: Sendable, Equatable {
        /// The recipient.
        public let to: NearbyPublicIdentity
        /// The payload.
        public let payload: NearbyPayload
    }

    /// Why a group operation was refused.
    public enum Failure: Error, Sendable, Equatable {
        /// Only the creator changes membership.
        case notCreator
        /// More than 32 members, a duplicate, or a member not in the group.
        case invalidMembers
        /// The sender is not a member (or was removed).
        case notMember
        /// No sender key for that sender and epoch (never received, or rotated away).
        case noKey
        /// We left or were removed.
        case left
    }

    /// The group's 16 random bytes.
    public let id: [UInt8]
    /// Its name.
    public private(set) var name: String
    /// The current epoch.
    public private(set) var epoch: UInt32
    /// The members; the first is the creator.
    public private(set) var members: [NearbyPublicIdentity]
    /// Whether we left or were removed.
    public private(set) var hasLeft = false
    /// How long this member's messages to the group last (each message carries its own;
    /// a member adopts the lifetime of the latest message it gets, as Signal's groups do).
    public var lifetime: NearbyLifetime = .never
    private let me: NearbyPublicIdentity
    private var keys: NearbyGroupKeys
    /// Other members' sender keys for epochs we have not reached yet.
    private var early: [UInt32: [(NearbyPublicIdentity, [UInt8])]] = [:]

    /// The creator.
    public var creator: NearbyPublicIdentity { members[0] }

    /// Creates a group of `me` and `others`; returns it and the updates to send.
    ///
    /// - Throws: ``Failure/invalidMembers`` for more than 31 others, duplicates, or `me`
    ///   among them.
    public static func create(name: String, me: NearbyPublicIdentity, others: [NearbyPublicIdentity])
        throws(Failure) -> (NearbyGroup, [Outgoing])
    {
        let members = [me] + others
        guard members.count <= NearbyGroupUpdate.maxMembers, Set(members).count == members.count,
            (1...NearbyHello.maxNameBytes).contains(name.utf8.count)
        else { throw .invalidMembers }
        var generator = SystemRandomNumberGenerator()
        var group = NearbyGroup(
            id: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, name: name, epoch: 1, members: members,
            me: me, keys: NearbyGroupKeys())
        let updates = try group.announce()
        return (group, updates)
    }

    init(id: [UInt8], name: String, epoch: UInt32, members: [NearbyPublicIdentity], me: NearbyPublicIdentity, keys: NearbyGroupKeys) {
        self.id = id
        self.name = name
        self.epoch = epoch
        self.members = members
        self.me = me
        self.keys = keys
    }

    /// A group we learn of from its creator's update.
    ///
    /// - Throws: ``Failure/notCreator`` unless `sender` is the update's first member,
    ///   ``Failure/invalidMembers`` unless we are a member.
    public static func join(_ update: NearbyGroupUpdate, from sender: NearbyPublicIdentity, me: NearbyPublicIdentity)
        throws(Failure) -> (NearbyGroup, [Outgoing])
    {
        guard update.members.first == sender else { throw .notCreator }
        guard update.members.contains(me) else { throw .invalidMembers }
        var group = NearbyGroup(
            id: update.groupID, name: update.name, epoch: 0, members: update.members, me: me, keys: NearbyGroupKeys())
        let replies = try group.receive(update, from: sender)
        return (group, replies)
    }

    // MARK: - Membership

    /// Adds `member` (creator only): a new epoch and new keys.
    public mutating func add(_ member: NearbyPublicIdentity) throws(Failure) -> [Outgoing] {
        guard !hasLeft else { throw .left }
        guard me == creator else { throw .notCreator }
        guard !members.contains(member), members.count < NearbyGroupUpdate.maxMembers else { throw .invalidMembers }
        members.append(member)
        epoch += 1
        return try announce()
    }

    /// Removes `member` (creator only): a new epoch whose keys the removed member never gets.
    public mutating func remove(_ member: NearbyPublicIdentity) throws(Failure) -> [Outgoing] {
        guard !hasLeft else { throw .left }
        guard me == creator else { throw .notCreator }
        guard member != me, let index = members.firstIndex(of: member) else { throw .invalidMembers }
        members.remove(at: index)
        epoch += 1
        keys.forget(sender: member)
        return [Outgoing(to: member, payload: .groupLeave(groupID: id))] + (try announce())
    }

    /// Leaves the group: every member is told; the creator rotates the keys.
    public mutating func leave() -> [Outgoing] {
        guard !hasLeft else { return [] }
        hasLeft = true
        let others = members.filter { $0 != me }
        keys = NearbyGroupKeys()
        return others.map { Outgoing(to: $0, payload: .groupLeave(groupID: id)) }
    }

    // MARK: - Receiving

    /// A group update from `sender`: a new epoch from the creator (adopted; our own key
    /// for it goes to everyone), or another member's key for the current epoch.
    ///
    /// - Throws: ``Failure/notMember`` for a sender outside the group, ``Failure/left``.
    public mutating func receive(_ update: NearbyGroupUpdate, from sender: NearbyPublicIdentity) throws(Failure) -> [Outgoing] {
        guard !hasLeft else { throw .left }
        guard update.groupID == id else { throw .invalidMembers }
        var replies: [Outgoing] = []
        if update.epoch > epoch {
            guard sender == creator, update.members.first == creator else {
                // A member's key for an epoch the creator has not announced to us yet.
                guard members.contains(sender) || update.members.contains(sender) else { throw .notMember }
                early[update.epoch, default: []].append((sender, update.distribution))
                return []
            }
            guard update.members.contains(me) else {
                hasLeft = true
                keys = NearbyGroupKeys()
                return []
            }
            for removed in members where !update.members.contains(removed) { keys.forget(sender: removed) }
            name = update.name
            members = update.members
            epoch = update.epoch
            try accept(update.distribution, from: sender, epoch: epoch)
            replies = try announce(excluding: [sender], includeKeyFor: [sender])
            for (member, distribution) in early.removeValue(forKey: epoch) ?? [] where members.contains(member) {
                try accept(distribution, from: member, epoch: epoch)
            }
            early = early.filter { $0.key > epoch }
            return replies
        }
        guard members.contains(sender) else { throw .notMember }
        guard update.epoch == epoch else { return [] }  // a key of an epoch already rotated away
        try accept(update.distribution, from: sender, epoch: epoch)
        return []
    }

    /// `sender` left: the creator removes it (new epoch); a leave from the creator ends
    /// the group for us.
    public mutating func receiveLeave(from sender: NearbyPublicIdentity) -> [Outgoing] {
        guard !hasLeft, members.contains(sender) else { return [] }
        if sender == creator {
            hasLeft = true
            keys = NearbyGroupKeys()
            return []
        }
        guard me == creator else {
            members.removeAll { $0 == sender }
            keys.forget(sender: sender)
            return []
        }
        return (try? remove(sender).filter { $0.to != sender }) ?? []
    }

    // MARK: - Messages

    /// Encrypts `plaintext` once with our sender key; returns the message for every other member.
    public mutating func encrypt(_ plaintext: [UInt8]) throws(Failure) -> [Outgoing] {
        guard !hasLeft else { throw .left }
        let message: SenderKeyMessage
        do {
            message = try GroupCipher.encrypt(plaintext, sender: Self.address(me), distributionID: distributionID(epoch, me), store: &keys)
        } catch {
            throw .noKey
        }
        let payload = NearbyPayload.groupMessage(groupID: id, epoch: epoch, ciphertext: message.serialized)
        return members.filter { $0 != me }.map { Outgoing(to: $0, payload: payload) }
    }

    /// Decrypts a message `sender` sealed with its sender key.
    ///
    /// - Throws: ``Failure/notMember`` unless `sender` is a current member, ``Failure/noKey``
    ///   when we have no key that opens it.
    public mutating func decrypt(_ ciphertext: [UInt8], epoch messageEpoch: UInt32, from sender: NearbyPublicIdentity)
        throws(Failure) -> [UInt8]
    {
        guard !hasLeft else { throw .left }
        guard members.contains(sender), sender != me else { throw .notMember }
        do {
            return try GroupCipher.decrypt(ciphertext, sender: Self.address(sender), store: &keys)
        } catch {
            throw .noKey
        }
    }

    // MARK: - Keys

    /// Our update for the current epoch (members and our sender key) to every other member.
    private mutating func announce(excluding: [NearbyPublicIdentity] = [], includeKeyFor: [NearbyPublicIdentity] = [])
        throws(Failure) -> [Outgoing]
    {
        let distribution: SenderKeyDistributionMessage
        do {
            distribution = try GroupCipher.createDistributionMessage(
                sender: Self.address(me), distributionID: distributionID(epoch, me), store: &keys)
        } catch {
            throw .noKey
        }
        let update: NearbyGroupUpdate
        do {
            update = try NearbyGroupUpdate(
                groupID: id, epoch: epoch, name: name, members: members, distribution: distribution.serialized)
        } catch {
            throw .invalidMembers
        }
        return members.filter { $0 != me }.map { Outgoing(to: $0, payload: .groupUpdate(update)) }
    }

    private mutating func accept(_ distribution: [UInt8], from sender: NearbyPublicIdentity, epoch: UInt32) throws(Failure) {
        do {
            let message = try SenderKeyDistributionMessage(serialized: distribution)
            guard message.distributionID == distributionID(epoch, sender) else { throw Failure.noKey }
            try GroupCipher.processDistributionMessage(message, sender: Self.address(sender), store: &keys)
        } catch {
            throw .noKey
        }
    }

    func distributionID(_ epoch: UInt32, _ sender: NearbyPublicIdentity) -> UUID {
        var hasher = SHA256()
        hasher.update(data: Array("inviso-nearby-group".utf8))
        hasher.update(data: id)
        hasher.update(data: [UInt8(epoch >> 24), UInt8((epoch >> 16) & 0xFF), UInt8((epoch >> 8) & 0xFF), UInt8(epoch & 0xFF)])
        hasher.update(data: sender.bytes)
        let bytes = Array(hasher.finalize().prefix(16))
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    static func address(_ identity: NearbyPublicIdentity) -> ProtocolAddress {
        ProtocolAddress(name: Hex.encode(identity.bytes), deviceID: 1)
    }
}

// MARK: - Storage

extension NearbyGroup {
    /// What the store keeps of a group (JSON, sealed by the store: it holds sender keys).
    struct Snapshot: Codable {
        var id: Data
        var name: String
        var epoch: UInt32
        var members: [Data]
        var me: Data
        var hasLeft: Bool
        var keys: [String: Data]
        /// Seconds (absent in groups stored before lifetimes: never).
        var lifetime: UInt32?
    }

    var snapshot: Snapshot {
        Snapshot(
            id: Data(id), name: name, epoch: epoch, members: members.map { Data($0.bytes) }, me: Data(me.bytes),
            hasLeft: hasLeft,
            keys: keys.records.mapValues { record in record.serialize().withUnsafeBytes { Data($0) } },
            lifetime: lifetime.rawValue)
    }

    init(snapshot: Snapshot) throws {
        var keys = NearbyGroupKeys()
        for (name, bytes) in snapshot.keys {
            keys.restore(name, try SenderKeyRecord(serialized: [UInt8](bytes)))
        }
        self.init(
            id: [UInt8](snapshot.id), name: snapshot.name, epoch: snapshot.epoch,
            members: try snapshot.members.map { try NearbyPublicIdentity([UInt8]($0)) },
            me: try NearbyPublicIdentity([UInt8](snapshot.me)), keys: keys)
        hasLeft = snapshot.hasLeft
        lifetime = snapshot.lifetime.flatMap(NearbyLifetime.init(rawValue:)) ?? .never
    }
}

/// The group's sender keys: InvisoSignal's records by sender and distribution id.
struct NearbyGroupKeys: SenderKeyStore, Sendable {
    private(set) var records: [String: SenderKeyRecord] = [:]

    private static func key(_ sender: ProtocolAddress, _ distributionID: UUID) -> String {
        "\(sender.name)|\(distributionID.uuidString)"
    }

    func loadSenderKey(sender: ProtocolAddress, distributionID: UUID) throws -> SenderKeyRecord? {
        records[Self.key(sender, distributionID)]
    }

    mutating func storeSenderKey(_ record: SenderKeyRecord, sender: ProtocolAddress, distributionID: UUID) throws {
        records[Self.key(sender, distributionID)] = record
    }

    mutating func restore(_ key: String, _ record: SenderKeyRecord) { records[key] = record }

    /// Drops every key of `sender`.
    mutating func forget(sender: NearbyPublicIdentity) {
        let prefix = Hex.encode(sender.bytes) + "|"
        records = records.filter { !$0.key.hasPrefix(prefix) }
    }
}
