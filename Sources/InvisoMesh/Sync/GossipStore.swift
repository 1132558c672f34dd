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
        /// The sync hash (63 bits), with the top bit set for an announce.
        private var hashAndKind: UInt64
        /// An announce's sender (its raw peer ID), or a packet's place in `slots`.
        fileprivate var reference: UInt64

        fileprivate init(timestamp: UInt64, syncHash: UInt64, isAnnounce: Bool, reference: UInt64) {
            self.timestamp = timestamp
            hashAndKind = syncHash & 0x7FFF_FFFF_FFFF_FFFF | (isAnnounce ? 1 << 63 : 0)
            self.reference = reference
        }

        var syncHash: UInt64 { hashAndKind & 0x7FFF_FFFF_FFFF_FFFF }
        var isAnnounce: Bool { hashAndKind >> 63 == 1 }
        /// An announce's sender.
        var announceSender: PeerID? { isAnnounce ? PeerID(rawValue: reference) : nil }
    }

    let capacity: Int
    let announceCapacity: Int
    private var packets = SortedList()
    private var announces = SortedList()
    /// The packets' entries; a freed slot is `nil` until reused.
    private var slots: [Entry?] = []
    private var freeSlots: [Int32] = []
    /// Each sender's stored announce, by raw peer ID.
    private var announceEntries: RandomKeyMap<Entry>

    /// Creates an empty store; `seed` keys its hash table (secret in a real node).
    init(capacity: Int, announceCapacity: Int, seed: UInt64) {
        self.capacity = capacity
        self.announceCapacity = announceCapacity
        announceEntries = RandomKeyMap(seed: seed)
    }

    var count: Int { packets.count + announces.count }

    /// Changes whenever the stored set may have changed (a REQUEST_SYNC filter built from
    /// the store stays valid while it does not).
    private(set) var version: UInt64 = 0

    /// The stored entry `key` names (a key from ``forEachNewestFirst(_:)``, before the store
    /// changes).
    subscript(key: Key) -> Entry {
        key.isAnnounce ? announceEntries[key.reference]! : slots[Int(key.reference)]!
    }

    /// Stores a broadcast packet (announces replace the sender's older announce).
    mutating func insert(_ packet: consuming MeshPacket, id: PacketID) {
        let timestamp = packet.timestamp
        version &+= 1
        guard packet.type == .announce else {
            let slot: Int
            if let reused = freeSlots.popLast() {
                slot = Int(reused)
                slots[slot] = Entry(packet: packet, id: id)
            } else {
                slot = slots.count
                slots.append(Entry(packet: packet, id: id))
            }
            packets.insert(Key(timestamp: timestamp, syncHash: id.syncHash, isAnnounce: false, reference: UInt64(slot)))
            for dropped in packets.trim(to: capacity) { free(dropped) }
            return
        }
        let sender = packet.senderID.rawValue
        if let existing = announceEntries.read(sender, { $0.packet.timestamp }) {
            guard existing < timestamp else { return }
            if let stale = announces.firstIndex(where: { $0.timestamp == existing && $0.reference == sender }) {
                _ = announces.remove(at: stale)
            }
        }
        announceEntries[sender] = Entry(packet: packet, id: id)
        announces.insert(Key(timestamp: timestamp, syncHash: id.syncHash, isAnnounce: true, reference: sender))
        for dropped in announces.trim(to: announceCapacity) { announceEntries.removeValue(forKey: dropped.reference) }
    }

    /// Drops packets whose timestamp is older than the limits.
    mutating func expire(now: MeshTime, maxAge: Int64, announceMaxAge: Int64) {
        let before = count
        for dropped in packets.removeOlder(than: now.adding(milliseconds: -maxAge).milliseconds) { free(dropped) }
        for dropped in announces.removeOlder(than: now.adding(milliseconds: -announceMaxAge).milliseconds) {
            announceEntries.removeValue(forKey: dropped.reference)
        }
        if count != before { version &+= 1 }
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

    /// Frees a dropped packet's slot.
    private mutating func free(_ key: Key) {
        slots[Int(key.reference)] = nil
        freeSlots.append(Int32(key.reference))
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
