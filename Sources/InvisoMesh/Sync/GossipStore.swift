/// The broadcast packets a node keeps to answer REQUEST_SYNCs.
///
/// Two bounded lists, as in BitChat's `GossipSyncManager` (permissionlesstech/bitchat
/// `bitchat/Sync/GossipSyncManager.swift`@02aa1d67): public broadcast packets (messages,
/// fragments, files) up to a capacity, and the newest announce of each peer.
struct GossipStore {
    struct Entry {
        var packet: MeshPacket
        var id: PacketID
    }

    /// What sync reads of a stored packet: building a filter and answering one look only at
    /// timestamps and sync hashes, so those are kept (and sorted) apart from the packets.
    struct Key {
        var timestamp: UInt64
        var syncHash: UInt64
        /// Where the entry is in ``slots``.
        fileprivate var slot: Int32
    }

    let capacity: Int
    let announceCapacity: Int
    private var packets = SortedList()
    private var announces = SortedList()
    /// The entries of both lists; a freed slot is `nil` until reused.
    private var slots: [Entry?] = []
    private var freeSlots: [Int32] = []
    /// The timestamp of each sender's stored announce, by sender.
    private var announceTimestamps: RandomKeyMap<UInt64>

    /// Creates an empty store; `seed` keys its hash table (secret in a real node).
    init(capacity: Int, announceCapacity: Int, seed: UInt64) {
        self.capacity = capacity
        self.announceCapacity = announceCapacity
        announceTimestamps = RandomKeyMap(seed: seed)
    }

    var count: Int { packets.count + announces.count }

    /// The stored entry `key` names (a key from ``forEachNewestFirst(_:)``, before the store
    /// changes).
    subscript(key: Key) -> Entry { slots[Int(key.slot)]! }

    /// Stores a broadcast packet (announces replace the sender's older announce).
    mutating func insert(_ packet: MeshPacket, id: PacketID) {
        if packet.type == .announce {
            if let existing = announceTimestamps[packet.senderID.rawValue] {
                guard existing < packet.timestamp else { return }
                let stale = announces.firstIndex { key in
                    key.timestamp == existing && slots[Int(key.slot)]?.packet.senderID == packet.senderID
                }
                if let stale { free(announces.remove(at: stale)) }
            }
            announces.insert(store(Entry(packet: packet, id: id)))
            announceTimestamps[packet.senderID.rawValue] = packet.timestamp
            for dropped in announces.trim(to: announceCapacity) {
                announceTimestamps[self[dropped].packet.senderID.rawValue] = nil
                free(dropped)
            }
        } else {
            packets.insert(store(Entry(packet: packet, id: id)))
            for dropped in packets.trim(to: capacity) { free(dropped) }
        }
    }

    /// Drops packets whose timestamp is older than the limits.
    mutating func expire(now: MeshTime, maxAge: Int64, announceMaxAge: Int64) {
        for dropped in packets.removeOlder(than: now.adding(milliseconds: -maxAge).milliseconds) { free(dropped) }
        for dropped in announces.removeOlder(than: now.adding(milliseconds: -announceMaxAge).milliseconds) {
            announceTimestamps[self[dropped].packet.senderID.rawValue] = nil
            free(dropped)
        }
    }

    /// Calls `body` with the key of every stored entry, newest first (announces and packets
    /// merged by timestamp), until it returns `false`.
    mutating func forEachNewestFirst(_ body: (Key) -> Bool) {
        announces.sort()
        packets.sort()
        var a = announces.count - 1
        var p = packets.count - 1
        while a >= 0 || p >= 0 {
            if p < 0 || (a >= 0 && announces[a].timestamp >= packets[p].timestamp) {
                guard body(announces[a]) else { return }
                a -= 1
            } else {
                guard body(packets[p]) else { return }
                p -= 1
            }
        }
    }

    private mutating func store(_ entry: Entry) -> Key {
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = entry
        } else {
            slot = Int32(slots.count)
            slots.append(entry)
        }
        return Key(timestamp: entry.packet.timestamp, syncHash: entry.id.syncHash, slot: slot)
    }

    private mutating func free(_ key: Key) {
        slots[Int(key.slot)] = nil
        freeSlots.append(key.slot)
    }

    /// Keys kept in arrival order and sorted by packet timestamp only when read (sync
    /// requests are far rarer than arrivals, and arrivals come out of timestamp order once
    /// sync carries old packets). The sort is stable, so equal timestamps keep their arrival
    /// order; only the keys that came since the last sort are sorted, then merged in. Over
    /// capacity, up to a quarter more is let in before the oldest are dropped in one go.
    private struct SortedList {
        private var storage: [Key] = []
        /// `storage[..<sortedCount]` is in order.
        private var sortedCount = 0
        /// Reused by ``sort()``.
        private var scratch: [Key] = []

        var count: Int { storage.count }

        /// Key `index` in timestamp order (call ``sort()`` first).
        subscript(index: Int) -> Key { storage[index] }

        mutating func insert(_ key: Key) {
            if sortedCount == storage.count, storage.last.map({ $0.timestamp <= key.timestamp }) ?? true {
                sortedCount += 1
            }
            storage.append(key)
        }

        /// Puts the keys in timestamp order, equal timestamps in their present order (what a
        /// stable sort of the whole list gives).
        mutating func sort() {
            guard sortedCount < storage.count else { return }
            scratch.removeAll(keepingCapacity: true)
            scratch.append(contentsOf: storage[sortedCount...])
            scratch.sort { $0.timestamp < $1.timestamp }
            // Merge from the back; on equal timestamps the sorted part's key goes first.
            var sortedIndex = sortedCount - 1
            var scratchIndex = scratch.count - 1
            var write = storage.count - 1
            while scratchIndex >= 0 {
                if sortedIndex >= 0, storage[sortedIndex].timestamp > scratch[scratchIndex].timestamp {
                    storage[write] = storage[sortedIndex]
                    sortedIndex -= 1
                } else {
                    storage[write] = scratch[scratchIndex]
                    scratchIndex -= 1
                }
                write -= 1
            }
            sortedCount = storage.count
        }

        /// Keeps the newest `capacity` once the list holds a quarter more than that; returns
        /// the keys dropped.
        mutating func trim(to capacity: Int) -> ArraySlice<Key> {
            guard storage.count > capacity + capacity / 4 else { return [] }
            sort()
            let removed = storage[0..<(storage.count - capacity)]
            storage.removeFirst(storage.count - capacity)
            sortedCount = storage.count
            return removed
        }

        mutating func removeOlder(than cutoff: UInt64) -> [Key] {
            guard storage.contains(where: { $0.timestamp < cutoff }) else { return [] }
            let removed = storage.filter { $0.timestamp < cutoff }
            sortedCount -= storage[..<sortedCount].count { $0.timestamp < cutoff }
            storage.removeAll { $0.timestamp < cutoff }
            return removed
        }

        /// The position (in the current order) of the first key that `matches`.
        func firstIndex(where matches: (Key) -> Bool) -> Int? { storage.firstIndex(where: matches) }

        mutating func remove(at index: Int) -> Key {
            if index < sortedCount { sortedCount -= 1 }
            return storage.remove(at: index)
        }
    }
}
