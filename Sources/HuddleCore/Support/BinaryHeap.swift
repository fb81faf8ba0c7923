/// A binary min-heap: the smallest element first, O(log n) insert and removal.
///
/// ```swift
/// var heap = BinaryHeap<Int>()
/// heap.insert(3); heap.insert(1); heap.insert(2)
/// heap.popMin()   // 1
/// heap.min        // 2
/// ```
public struct BinaryHeap<Element: Comparable> {
    private var storage: [Element] = []

    public init() {}

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// The smallest element, if any.
    public var min: Element? { storage.first }

    /// Every element, in no particular order.
    public var unordered: [Element] { storage }

    public mutating func insert(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    public mutating func popMin() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let first = storage.removeLast()
        siftDown(from: 0)
        return first
    }

    /// Changes every element in place, then restores the heap order (O(n)).
    public mutating func updateEach(_ body: (inout Element) -> Void) {
        for position in storage.indices { body(&storage[position]) }
        for position in stride(from: storage.count / 2 - 1, through: 0, by: -1) { siftDown(from: position) }
    }

    /// Removes every element matching `predicate`, then restores the heap order (O(n)).
    public mutating func removeAll(where predicate: (Element) -> Bool) {
        storage.removeAll(where: predicate)
        for position in stride(from: storage.count / 2 - 1, through: 0, by: -1) { siftDown(from: position) }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count, storage[left] < storage[smallest] { smallest = left }
            if right < storage.count, storage[right] < storage[smallest] { smallest = right }
            guard smallest != parent else { return }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension BinaryHeap: Sendable where Element: Sendable {}
