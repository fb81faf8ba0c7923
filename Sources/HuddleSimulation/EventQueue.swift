/// A min-heap of things to do at virtual times; two things due at the same time come out in the
/// order they were put in, so a run never depends on anything but its inputs.
struct EventQueue<Element> {
    private var heap: [(time: Int64, order: UInt64, element: Element)] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func push(_ element: Element, at time: Int64) {
        heap.append((time, nextOrder, element))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (time: Int64, element: Element)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, Self.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.before(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return (top.time, top.element)
    }

    private static func before(
        _ a: (time: Int64, order: UInt64, element: Element), _ b: (time: Int64, order: UInt64, element: Element)
    ) -> Bool {
        a.time != b.time ? a.time < b.time : a.order < b.order
    }
}
