/// A binary min-heap of values ordered by time, ties broken by insertion order, so that
/// equal-time events come out in the order they went in (which keeps simulations
/// deterministic).
package struct TimeOrderedQueue<Element> {
    struct Entry: HeapOrdered {
        var time: UInt64
        var sequence: UInt64
        var element: Element

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && sequence < other.sequence)
        }
    }

    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    package init() {}

    /// The number of queued values.
    package var count: Int { entries.count }
    package var isEmpty: Bool { entries.isEmpty }

    /// The earliest time queued.
    package var earliestTime: UInt64? { entries.first?.time }

    /// Queues `element` at `time`.
    package mutating func insert(_ element: Element, at time: UInt64) {
        entries.heapPush(Entry(time: time, sequence: nextSequence, element: element))
        nextSequence &+= 1
    }

    /// Removes and returns the earliest value if its time is at or before `limit`.
    package mutating func popFirst(notAfter limit: UInt64 = .max) -> (time: UInt64, element: Element)? {
        guard let first = entries.first, first.time <= limit else { return nil }
        entries.heapPopFirst()
        return (first.time, first.element)
    }
}

extension TimeOrderedQueue: Sendable where Element: Sendable {}
extension TimeOrderedQueue.Entry: Sendable where Element: Sendable {}
