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
