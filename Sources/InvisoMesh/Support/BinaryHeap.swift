/// An entry of an array-backed binary min-heap: ``precedes(_:)`` is the strict order.
protocol HeapOrdered {
    func precedes(_ other: Self) -> Bool
}

extension Array where Element: HeapOrdered {
    /// Appends `entry` and moves it up to its place in the heap.
    @inline(__always)
    mutating func heapPush(_ entry: Element) {
        append(entry)
        var child = count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard self[child].precedes(self[parent]) else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the first (least) entry; the rest stays a heap. The heap must not be empty.
    @inline(__always)
    @discardableResult
    mutating func heapPopFirst() -> Element {
        let first = self[0]
        let last = removeLast()
        guard !isEmpty else { return first }
        self[0] = last
        var parent = 0
        let count = self.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            let right = left + 1
            var smallest = left
            if right < count, self[right].precedes(self[left]) { smallest = right }
            guard self[smallest].precedes(self[parent]) else { break }
            swapAt(smallest, parent)
            parent = smallest
        }
        return first
    }
}
