/// A set of 64-bit keys that are already uniformly random (the leading bytes of a SHA-256
/// digest), so they index an open-addressing table directly, without rehashing. Linear
/// probing, deletion by backward shift; key 0 (the empty-slot marker) is kept in a flag.
struct KeySet {
    private var slots: [UInt64]
    private var mask: Int
    private var stored = 0
    private var hasZero = false

    var count: Int { stored + (hasZero ? 1 : 0) }

    init(minimumCapacity: Int = 16) {
        var size = 16
        while size < minimumCapacity * 2 { size <<= 1 }
        slots = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    func contains(_ key: UInt64) -> Bool {
        if key == 0 { return hasZero }
        // `index` is masked into the table, so the probe reads the slots unchecked: a
        // bounds check would read the array's header, a second cache miss on a big table.
        return slots.withUnsafeBufferPointer { slots in
            var index = Int(truncatingIfNeeded: key) & mask
            while true {
                let slot = slots[index]
                if slot == key { return true }
                if slot == 0 { return false }
                index = (index + 1) & mask
            }
        }
    }

    /// Adds `key`; returns `false` if it was there.
    mutating func insert(_ key: UInt64) -> Bool {
        if key == 0 {
            defer { hasZero = true }
            return !hasZero
        }
        if (stored + 1) * 4 > slots.count * 3 { grow() }
        var index = Int(truncatingIfNeeded: key) & mask
        while true {
            let slot = slots[index]
            if slot == key { return false }
            if slot == 0 {
                slots[index] = key
                stored += 1
                return true
            }
            index = (index + 1) & mask
        }
    }

    mutating func remove(_ key: UInt64) {
        if key == 0 {
            hasZero = false
            return
        }
        var index = Int(truncatingIfNeeded: key) & mask
        while true {
            let slot = slots[index]
            if slot == 0 { return }
            if slot == key { break }
            index = (index + 1) & mask
        }
        // Backward-shift the following run so every key stays reachable from its home slot.
        var hole = index
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let home = Int(truncatingIfNeeded: slots[next]) & mask
            // Move slots[next] into the hole unless its home lies cyclically in (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext || distanceToHole == 0 {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
        stored -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        stored = 0
        for key in old where key != 0 { _ = insert(key) }
    }
}
