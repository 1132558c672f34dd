@testable import InvisoMesh
import Testing

@Suite("Duplicate filter")
struct DuplicateFilterTests {
    static func id(_ value: UInt64) -> PacketID { PacketID(high: value, low: value, syncHash: value) }

    @Test("a second insert of the same ID is refused; IDs leave after the window")
    func window() {
        var filter = DuplicateFilter(windowMilliseconds: 1_000, minimumCapacity: 16)
        let start = MeshTime(milliseconds: 10_000)
        let first = filter.insert(Self.id(1), now: start)
        let second = filter.insert(Self.id(1), now: start.adding(milliseconds: 500))
        #expect(first)
        #expect(!second)
        #expect(filter.contains(Self.id(1)))
        filter.expire(now: start.adding(milliseconds: 1_001))
        #expect(!filter.contains(Self.id(1)))
    }

    @Test("capacity follows the traffic rate, not a fixed count")
    func sizedByRate() {
        var filter = DuplicateFilter(windowMilliseconds: 100_000, minimumCapacity: 100)
        var time = MeshTime(milliseconds: 0)
        // 50 new IDs per second for the whole window: 5,000 live IDs.
        for value in 0..<5_000 {
            _ = filter.insert(Self.id(UInt64(value) + 1), now: time)
            time = time.adding(milliseconds: 20)
        }
        #expect(filter.capacity >= 5_000)
        #expect(filter.count >= 4_900)
        #expect(filter.evictions < 200)
        #expect(filter.contains(Self.id(100)))
    }
}

@Suite("Key set")
struct KeySetTests {
    @Test("inserts, removals and lookups agree with Set over a seeded random sequence")
    func matchesSet() {
        var random = MeshRandom(seed: 99)
        var keys = KeySet()
        var reference = Set<UInt64>()
        // Few distinct keys with colliding low bits, so probe runs and backward shifts happen.
        for _ in 0..<20_000 {
            let key = (random.next() % 300) << 20 | (random.next() % 4)
            switch random.int(in: 0...2) {
            case 0: #expect(keys.insert(key) == reference.insert(key).inserted)
            case 1:
                keys.remove(key)
                reference.remove(key)
            default: #expect(keys.contains(key) == reference.contains(key))
            }
            #expect(keys.count == reference.count)
        }
        for key in reference { #expect(keys.contains(key)) }
    }
}

@Suite("Random-key map")
struct RandomKeyMapTests {
    @Test("sets, removals, lookups and updateEach agree with Dictionary over a seeded random sequence")
    func matchesDictionary() {
        var random = MeshRandom(seed: 7)
        var map = RandomKeyMap<Int>(seed: 12345)
        var reference: [UInt64: Int] = [:]
        // Few distinct keys (key 0 among them), so probe runs, growth and backward shifts happen.
        for step in 0..<30_000 {
            let key = random.next() % 700
            switch random.int(in: 0...3) {
            case 0:
                map[key] = step
                reference[key] = step
            case 1: #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 2:
                if step % 1_000 == 0 {
                    // Drop odd values, add one to the rest.
                    map.updateEach { _, value in
                        value += 1
                        return value % 2 == 1
                    }
                    reference = reference.compactMapValues { $0 % 2 == 0 ? $0 + 1 : nil }
                }
            default: #expect(map[key] == reference[key])
            }
            #expect(map.count == reference.count)
        }
        for (key, value) in reference { #expect(map[key] == value) }
    }
}
