/// Remembers which packets a node has seen, for as long as a copy can still arrive.
///
/// BitChat keeps a fixed 1,000 IDs for 300 s (`TransportConfig.messageDedupMaxCount`,
/// permissionlesstech/bitchat `bitchat/Services/TransportConfig.swift`@0534e948): a busy
/// mesh overflows that in well under the window and starts re-delivering and re-relaying
/// old packets. Here the window is the whole time a copy can legitimately arrive (the
/// gossip-sync age limit, so a sync response can never resurrect a forgotten packet), and
/// the capacity follows the measured rate of new packets: `rate × window × headroom`,
/// never below ``minimumCapacity``. Entries leave when they age out; only a burst faster
/// than the estimate evicts early, and ``evictions`` counts that.
struct DuplicateFilter {
    /// How long an ID is remembered, in milliseconds.
    let windowMilliseconds: Int64
    /// The smallest capacity, whatever the rate.
    let minimumCapacity: Int
    /// Capacity over the expected number of live entries.
    let headroom: Double

    private var keys = KeySet()
    /// Arrival order for expiry: (key, time) oldest first, consumed from `head`.
    private var order: [(key: UInt64, time: MeshTime)] = []
    private var head = 0
    /// `order[head].time` while `head < order.count` (kept here so that checking for expired
    /// IDs does not read the far end of `order`).
    private var oldestTime = MeshTime(milliseconds: 0)
    /// New IDs counted per tenth of the window: the current tenth, and a decaying peak of
    /// finished tenths.
    private var epochStart: MeshTime?
    private var epochCount = 0
    private var peakPerEpoch: Double = 0
    /// IDs dropped before their window ended because the capacity was reached.
    private(set) var evictions = 0

    init(windowMilliseconds: Int64, minimumCapacity: Int, headroom: Double = 2) {
        self.windowMilliseconds = windowMilliseconds
        self.minimumCapacity = minimumCapacity
        self.headroom = headroom
    }

    /// The number of IDs remembered.
    var count: Int { keys.count }

    /// The capacity the current rate asks for: IDs per tenth of the window × 10 × headroom.
    var capacity: Int {
        let perEpoch = max(peakPerEpoch, Double(epochCount))
        return max(minimumCapacity, Int((perEpoch * 10 * headroom).rounded(.up)))
    }

    func contains(_ id: PacketID) -> Bool { keys.contains(id.dedupKey) }

    /// Records `id`; returns `false` if it was already there.
    mutating func insert(_ id: PacketID, now: MeshTime) -> Bool {
        guard keys.insert(id.dedupKey) else { return false }
        if head == order.count { oldestTime = now }
        order.append((id.dedupKey, now))
        updateRate(now: now)
        expire(now: now)
        while keys.count > capacity, head < order.count {
            keys.remove(order[head].key)
            head += 1
            evictions += 1
            if head < order.count { oldestTime = order[head].time }
        }
        compact()
        return true
    }

    /// Forgets IDs older than the window.
    mutating func expire(now: MeshTime) {
        guard head < order.count, now.milliseconds(since: oldestTime) > windowMilliseconds else { return }
        while head < order.count, now.milliseconds(since: order[head].time) > windowMilliseconds {
            keys.remove(order[head].key)
            head += 1
        }
        if head < order.count { oldestTime = order[head].time }
        compact()
    }

    private mutating func updateRate(now: MeshTime) {
        let epochLength = max(1, windowMilliseconds / 10)
        guard let start = epochStart else {
            epochStart = now
            epochCount = 1
            return
        }
        let elapsed = now.milliseconds(since: start)
        if elapsed >= epochLength {
            // Close the finished tenth (and any empty ones after it): the peak decays by a
            // quarter per tenth, so the capacity follows a falling rate within the window.
            peakPerEpoch = max(Double(epochCount), peakPerEpoch * 0.75)
            let skipped = min(40, elapsed / epochLength - 1)
            for _ in 0..<skipped { peakPerEpoch *= 0.75 }
            epochStart = start.adding(milliseconds: (elapsed / epochLength) * epochLength)
            epochCount = 0
        }
        epochCount += 1
    }

    private mutating func compact() {
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
