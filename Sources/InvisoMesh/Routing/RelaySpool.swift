/// Directed packets a node has taken custody of but cannot forward yet (no route, or the
/// route failed): store-and-forward until the recipient or a route to it appears.
///
/// Bounded by count (oldest dropped first) and by age, like BitChat's directed relay spool
/// (permissionlesstech/bitchat `bitchat/Services/BLE/BLEDirectedRelaySpool.swift`@7396474e),
/// but kept per recipient so a reappearing peer gets exactly its own packets.
struct RelaySpool {
    struct Entry {
        var packet: MeshPacket
        var id: PacketID
        var spooledAt: MeshTime
        /// Whether this node originated the packet (its failure is reported).
        var isLocal: Bool
    }

    let capacity: Int
    private var byRecipient: [PeerID: [Entry]] = [:]
    /// Spool order for eviction: recipient and ID, oldest first.
    private var order: [(recipient: PeerID, id: PacketID)] = []
    private(set) var count = 0

    init(capacity: Int) { self.capacity = capacity }

    var isEmpty: Bool { count == 0 }

    /// Whether anything is spooled for `recipient`.
    func hasEntries(for recipient: PeerID) -> Bool { byRecipient[recipient] != nil }

    func contains(_ id: PacketID, for recipient: PeerID) -> Bool {
        byRecipient[recipient]?.contains { $0.id == id } ?? false
    }

    /// Spools `entry` for its recipient; returns the entries evicted to make room.
    mutating func add(_ entry: Entry, for recipient: PeerID) -> [Entry] {
        guard !contains(entry.id, for: recipient) else { return [] }
        byRecipient[recipient, default: []].append(entry)
        order.append((recipient, entry.id))
        count += 1
        var evicted: [Entry] = []
        while count > capacity, !order.isEmpty {
            let victim = order.removeFirst()
            if let removed = remove(victim.id, for: victim.recipient) { evicted.append(removed) }
        }
        return evicted
    }

    /// Removes and returns everything spooled for `recipient`, oldest first.
    mutating func take(for recipient: PeerID) -> [Entry] {
        guard let entries = byRecipient.removeValue(forKey: recipient) else { return [] }
        count -= entries.count
        order.removeAll { $0.recipient == recipient }
        return entries
    }

    /// Recipients with something spooled, in a stable order.
    var recipients: [PeerID] { byRecipient.keys.sorted() }

    /// Removes and returns entries older than `window` milliseconds.
    mutating func expire(now: MeshTime, window: Int64) -> [Entry] {
        var expired: [Entry] = []
        for recipient in recipients {
            guard var entries = byRecipient[recipient] else { continue }
            let before = entries.count
            entries.removeAll { entry in
                let old = now.milliseconds(since: entry.spooledAt) > window
                if old { expired.append(entry) }
                return old
            }
            count -= before - entries.count
            byRecipient[recipient] = entries.isEmpty ? nil : entries
        }
        if !expired.isEmpty {
            let gone = Set(expired.map(\.id))
            order.removeAll { gone.contains($0.id) }
        }
        return expired
    }

    private mutating func remove(_ id: PacketID, for recipient: PeerID) -> Entry? {
        guard var entries = byRecipient[recipient], let index = entries.firstIndex(where: { $0.id == id }) else {
            return nil
        }
        let entry = entries.remove(at: index)
        byRecipient[recipient] = entries.isEmpty ? nil : entries
        count -= 1
        return entry
    }
}
