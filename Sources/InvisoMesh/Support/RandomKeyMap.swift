/// A hash map from 64-bit keys that are already uniformly random (a peer ID, the first
/// half of a packet ID: SHA-256 output), with the values stored inline next to their keys.
///
/// A router looks up a route, a stored announce or a pending relay for almost every packet
/// it hears; `Dictionary` would run SipHash each time and keep keys and values apart.
/// Here a key is mixed with the map's seed by one multiplication and indexes an
/// open-addressing table directly (linear probing, deletion by backward shift). The seed
/// is a secret in a real node (it comes from the router's seed), so a peer that picks its
/// own ID cannot aim many keys at one slot. Key 0 (the empty-slot marker) is kept in an
/// extra slot after the table.
/// Iteration order depends on the seed; callers must not depend on it.
package struct RandomKeyMap<Value> {
    fileprivate struct Slot {
        var key: UInt64
        var value: Value?
    }

    /// The table (a power of two), then the slot for key 0.
    private var slots: [Slot]
    private var mask: Int
    private var shift: UInt64
    private let seed: UInt64
    private var stored = 0

    /// Creates an empty map; `seed` should be secret where keys come from the network.
    package init(seed: UInt64, minimumCapacity: Int = 8) {
        var size = 16
        while size < minimumCapacity * 2 { size <<= 1 }
        slots = [Slot](repeating: Slot(key: 0, value: nil), count: size + 1)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        self.seed = seed
    }

    private var zeroValue: Value? {
        get { slots[mask + 1].value }
        set { slots[mask + 1].value = newValue }
    }

    package var count: Int { stored + (zeroValue == nil ? 0 : 1) }
    package var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: ((key ^ seed) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Where `key` is, or the empty slot where it would go.
    @inline(__always)
    private func find(_ key: UInt64) -> (index: Int, found: Bool) {
        // `index` is masked into the table, so the probe reads the slots unchecked: a
        // bounds check would read the array's header, a second cache miss on a big table.
        slots.withUnsafeBufferPointer { slots in
            var index = home(key)
            while true {
                let slotKey = slots[index].key
                if slotKey == key { return (index, true) }
                if slotKey == 0 { return (index, false) }
                index = (index + 1) & mask
            }
        }
    }

    /// The value for `key`; setting `nil` removes it.
    package subscript(key: UInt64) -> Value? {
        get {
            if key == 0 { return zeroValue }
            let (index, found) = find(key)
            return found ? slots.withUnsafeBufferPointer { $0[index].value } : nil
        }
        set {
            guard let newValue else {
                _ = removeValue(forKey: key)
                return
            }
            if key == 0 {
                zeroValue = newValue
                return
            }
            var (index, found) = find(key)
            if !found {
                if (stored + 1) * 4 > (mask + 1) * 3 {
                    grow()
                    index = find(key).index
                }
                stored += 1
                slots[index].key = key
            }
            slots[index].value = newValue
        }
    }

    /// `body` applied to the value for `key` (read in place, not copied), if there is one.
    package func read<Result>(_ key: UInt64, _ body: (Value) -> Result) -> Result? {
        let index: Int
        if key == 0 {
            index = mask + 1
        } else {
            let (found, isFound) = find(key)
            guard isFound else { return nil }
            index = found
        }
        return slots.withUnsafeBufferPointer { slots in slots[index].value.map(body) }
    }

    /// Changes the value for `key` in place, if there is one; returns whether there was.
    @discardableResult
    package mutating func update(_ key: UInt64, _ body: (inout Value) -> Void) -> Bool {
        let index: Int
        if key == 0 {
            index = mask + 1
        } else {
            let (found, isFound) = find(key)
            guard isFound else { return false }
            index = found
        }
        guard slots[index].value != nil else { return false }
        body(&slots[index].value!)
        return true
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    package mutating func removeValue(forKey key: UInt64) -> Value? {
        if key == 0 {
            defer { zeroValue = nil }
            return zeroValue
        }
        let (index, found) = find(key)
        guard found else { return nil }
        let value = slots[index].value.take()
        remove(at: index)
        return value
    }

    /// Calls `body` with every entry (in no particular order); it may change the value, and
    /// returns whether to keep the entry.
    package mutating func updateEach(_ body: (UInt64, inout Value) -> Bool) {
        var removals: [UInt64] = []
        if var value = zeroValue {
            zeroValue = body(0, &value) ? value : nil
        }
        for index in 0...mask where slots[index].key != 0 {
            if !body(slots[index].key, &slots[index].value!) { removals.append(slots[index].key) }
        }
        for key in removals { removeValue(forKey: key) }
    }

    /// Empties slot `index` and backward-shifts the run after it, so every key stays
    /// reachable from its home slot. Slots are swapped, not copied: values are moved.
    private mutating func remove(at index: Int) {
        slots[index] = Slot(key: 0, value: nil)
        var hole = index
        var next = (hole + 1) & mask
        while slots[next].key != 0 {
            let home = home(slots[next].key)
            // Move slots[next] into the hole unless its home lies cyclically in (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext || distanceToHole == 0 {
                slots.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        stored -= 1
    }

    private mutating func grow() {
        var old = slots
        slots = [Slot](repeating: Slot(key: 0, value: nil), count: (mask + 1) * 2 + 1)
        mask = (mask + 1) * 2 - 1
        shift -= 1
        // Move the entries over (`old` is the only reference left to the old table).
        old.withUnsafeMutableBufferPointer { old in
            for index in old.indices where old[index].key != 0 || index == old.count - 1 {
                let slot = (old.baseAddress! + index).move()
                (old.baseAddress! + index).initialize(to: Slot(key: 0, value: nil))
                slots[index == old.count - 1 ? mask + 1 : find(slot.key).index] = slot
            }
        }
    }
}

extension RandomKeyMap: Sendable where Value: Sendable {}
extension RandomKeyMap.Slot: Sendable where Value: Sendable {}
