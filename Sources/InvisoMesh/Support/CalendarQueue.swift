/// A time-ordered queue for discrete-event simulations, with the same contract as
/// ``TimeOrderedQueue`` (earliest time first, ties in insertion order) but O(1) for the
/// common case of times a little ahead of the earliest.
///
/// Times within `window` milliseconds of a cursor go into one FIFO bucket per millisecond;
/// the cursor only moves past empty buckets, so a bucket holds a single time. Anything
/// else (earlier than the cursor, or further ahead than the window) goes into a binary
/// heap of small entries, its values kept aside. Every value carries a global sequence
/// number, and a pop compares the first bucketed value with the heap's first by (time,
/// sequence), so the order is exactly ``TimeOrderedQueue``'s.
package struct CalendarQueue<Element> {
    private struct Queued {
        var sequence: UInt64
        /// `nil` once popped (moved out, so popping copies nothing).
        var element: Element?
    }

    private struct Overflow: HeapOrdered {
        var time: UInt64
        var sequence: UInt64
        /// Where the value is in `overflowValues`.
        var slot: Int

        @inline(__always)
        func precedes(_ other: Overflow) -> Bool {
            time < other.time || (time == other.time && sequence < other.sequence)
        }
    }

    /// One FIFO per millisecond of the window; `heads[i]` is how much of bucket `i` was read.
    private var buckets: [[Queued]]
    private var heads: [Int]
    private let mask: UInt64
    /// Every bucketed value's time is in `cursor ..< cursor + window`.
    private var cursor: UInt64 = 0
    private var bucketed = 0
    private var overflow: [Overflow] = []
    private var overflowValues: [Element?] = []
    private var freeOverflowSlots: [Int] = []
    private var nextSequence: UInt64 = 0

    /// Creates an empty queue whose buckets span `window` milliseconds (rounded up to a
    /// power of two).
    package init(window: Int = 256) {
        var size = 1
        while size < max(2, window) { size <<= 1 }
        buckets = [[Queued]](repeating: [], count: size)
        heads = [Int](repeating: 0, count: size)
        mask = UInt64(size - 1)
    }

    /// The number of queued values.
    package var count: Int { bucketed + overflow.count }
    package var isEmpty: Bool { count == 0 }

    /// Queues `element` at `time`.
    package mutating func insert(_ element: Element, at time: UInt64) {
        let sequence = nextSequence
        nextSequence &+= 1
        // With no value bucketed the window can start anywhere.
        if bucketed == 0 { cursor = time }
        if time >= cursor, time - cursor <= mask {
            buckets[Int(time & mask)].append(Queued(sequence: sequence, element: element))
            bucketed += 1
            return
        }
        let slot: Int
        if let free = freeOverflowSlots.popLast() {
            slot = free
            overflowValues[slot] = element
        } else {
            slot = overflowValues.count
            overflowValues.append(element)
        }
        overflow.heapPush(Overflow(time: time, sequence: sequence, slot: slot))
    }

    /// Removes and returns the earliest value if its time is at or before `limit`.
    package mutating func popFirst(notAfter limit: UInt64 = .max) -> (time: UInt64, element: Element)? {
        var bucketIndex = -1
        if bucketed > 0 {
            // A value is bucketed within the window, so this stops. Empty buckets before it
            // are never needed again; the cursor stays at or before the heap's first value,
            // so that values queued just after it are bucketed.
            let scanLimit = min(limit, overflow.first?.time ?? .max)
            while true {
                let index = Int(cursor & mask)
                if heads[index] < buckets[index].count {
                    bucketIndex = index
                    break
                }
                guard cursor < scanLimit else { break }
                cursor += 1
            }
        }
        if let first = overflow.first,
            bucketIndex < 0 || first.time < cursor
                || (first.time == cursor && first.sequence < buckets[bucketIndex][heads[bucketIndex]].sequence)
        {
            guard first.time <= limit else { return nil }
            if bucketed == 0 { cursor = first.time }
            return (first.time, popOverflow())
        }
        guard bucketIndex >= 0, cursor <= limit else { return nil }
        let element = buckets[bucketIndex][heads[bucketIndex]].element.take()!
        heads[bucketIndex] += 1
        bucketed -= 1
        if heads[bucketIndex] == buckets[bucketIndex].count {
            buckets[bucketIndex].removeAll(keepingCapacity: true)
            heads[bucketIndex] = 0
        }
        return (cursor, element)
    }

    private mutating func popOverflow() -> Element {
        let slot = overflow.heapPopFirst().slot
        freeOverflowSlots.append(slot)
        return overflowValues[slot].take()!
    }
}
