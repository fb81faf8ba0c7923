import HuddleCore

/// Things to do at virtual moments, earliest first; two things due at the same time come out in
/// the order they were put in, so a run never depends on anything but its inputs.
struct EventQueue<Element> {
    private struct Scheduled: Comparable {
        var time: MonotonicTime
        var order: UInt64
        var element: Element

        static func < (a: Scheduled, b: Scheduled) -> Bool { (a.time, a.order) < (b.time, b.order) }
        static func == (a: Scheduled, b: Scheduled) -> Bool { (a.time, a.order) == (b.time, b.order) }
    }

    private var heap = BinaryHeap<Scheduled>()
    private var nextOrder: UInt64 = 0

    mutating func push(_ element: Element, at time: MonotonicTime) {
        heap.insert(Scheduled(time: time, order: nextOrder, element: element))
        nextOrder += 1
    }

    mutating func pop() -> (time: MonotonicTime, element: Element)? {
        heap.popMin().map { ($0.time, $0.element) }
    }
}
