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

    let capacity: Int
    let announceCapacity: Int
    private var packets = SortedList()
    private var announces = SortedList()
    /// The timestamp of each sender's stored announce.
    private var announceTimestamps: [PeerID: UInt64] = [:]

    init(capacity: Int, announceCapacity: Int) {
        self.capacity = capacity
        self.announceCapacity = announceCapacity
    }

    var count: Int { packets.count + announces.count }

    /// Stores a broadcast packet (announces replace the sender's older announce).
    mutating func insert(_ packet: MeshPacket, id: PacketID) {
        let entry = Entry(packet: packet, id: id)
        if packet.type == .announce {
            if let existing = announceTimestamps[packet.senderID] {
                guard existing < packet.timestamp else { return }
                announces.remove(sender: packet.senderID, timestamp: existing)
            }
            announces.insert(entry)
            announceTimestamps[packet.senderID] = packet.timestamp
            for dropped in announces.trim(to: announceCapacity) { announceTimestamps[dropped.packet.senderID] = nil }
        } else {
            packets.insert(entry)
            _ = packets.trim(to: capacity)
        }
    }

    /// Drops packets whose timestamp is older than the limits.
    mutating func expire(now: MeshTime, maxAge: Int64, announceMaxAge: Int64) {
        _ = packets.removeOlder(than: now.adding(milliseconds: -maxAge).milliseconds)
        for dropped in announces.removeOlder(than: now.adding(milliseconds: -announceMaxAge).milliseconds) {
            announceTimestamps[dropped.packet.senderID] = nil
        }
    }

    /// Calls `body` with every stored entry, newest first (announces and packets merged by
    /// timestamp), until it returns `false`.
    mutating func forEachNewestFirst(_ body: (Entry) -> Bool) {
        announces.sort()
        packets.sort()
        var a = announces.count - 1
        var p = packets.count - 1
        while a >= 0 || p >= 0 {
            if p < 0 || (a >= 0 && announces[a].packet.timestamp >= packets[p].packet.timestamp) {
                guard body(announces[a]) else { return }
                a -= 1
            } else {
                guard body(packets[p]) else { return }
                p -= 1
            }
        }
    }

    /// Entries kept in arrival order and sorted by packet timestamp only when read (sync
    /// requests are far rarer than arrivals, and arrivals come out of timestamp order once
    /// sync carries old packets). Over capacity, up to a quarter more is let in before the
    /// oldest are dropped in one go.
    private struct SortedList {
        private var storage: [Entry] = []
        private var sorted = true

        var count: Int { storage.count }

        /// Entry `index` in timestamp order (call ``sort()`` first).
        subscript(index: Int) -> Entry { storage[index] }

        mutating func insert(_ entry: Entry) {
            if let last = storage.last, last.packet.timestamp > entry.packet.timestamp { sorted = false }
            storage.append(entry)
        }

        mutating func sort() {
            guard !sorted else { return }
            storage.sort { $0.packet.timestamp < $1.packet.timestamp }
            sorted = true
        }

        /// Keeps the newest `capacity` once the list holds a quarter more than that.
        mutating func trim(to capacity: Int) -> ArraySlice<Entry> {
            guard storage.count > capacity + capacity / 4 else { return [] }
            sort()
            let removed = storage[0..<(storage.count - capacity)]
            storage.removeFirst(storage.count - capacity)
            return removed
        }

        mutating func removeOlder(than cutoff: UInt64) -> [Entry] {
            guard storage.contains(where: { $0.packet.timestamp < cutoff }) else { return [] }
            let removed = storage.filter { $0.packet.timestamp < cutoff }
            storage.removeAll { $0.packet.timestamp < cutoff }
            return removed
        }

        mutating func remove(sender: PeerID, timestamp: UInt64) {
            if let index = storage.firstIndex(where: { $0.packet.timestamp == timestamp && $0.packet.senderID == sender }) {
                storage.remove(at: index)
            }
        }
    }
}
