@testable import InvisoMesh
import Testing

@Suite("Calendar queue")
struct CalendarQueueTests {
    @Test(
        "pops in the same order as the binary heap, ties in insertion order, over a seeded random sequence",
        arguments: [UInt64(1), 2, 3])
    func matchesHeap(seed: UInt64) {
        var random = MeshRandom(seed: seed)
        var calendar = CalendarQueue<Int>(window: 16)
        var heap = TimeOrderedQueue<Int>()
        var now: UInt64 = 1_000_000
        var popped = 0
        for value in 0..<20_000 {
            switch random.int(in: 0...9) {
            case 0...5:
                // Mostly just ahead (bucketed), sometimes past the window or before now.
                let time: UInt64
                switch random.int(in: 0...9) {
                case 0: time = now + UInt64(random.int(in: 16...500))
                case 1: time = now - min(now, UInt64(random.int(in: 0...50)))
                default: time = now + UInt64(random.int(in: 0...15))
                }
                calendar.insert(value, at: time)
                heap.insert(value, at: time)
            default:
                let limit = now + UInt64(random.int(in: 0...20))
                let expected = heap.popFirst(notAfter: limit)
                let actual = calendar.popFirst(notAfter: limit)
                #expect(expected?.time == actual?.time && expected?.element == actual?.element)
                if let expected {
                    now = expected.time
                    popped += 1
                }
            }
            #expect(calendar.count == heap.count)
        }
        while let expected = heap.popFirst() {
            let actual = calendar.popFirst()
            #expect(expected.time == actual?.time && expected.element == actual?.element)
            popped += 1
        }
        #expect(calendar.isEmpty)
        #expect(popped > 10_000)
    }
}
