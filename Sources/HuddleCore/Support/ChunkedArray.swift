/// A growing list kept in chunks of at most 512: a full chunk is never copied again, and at
/// most the last one has room unused.
///
/// An array grows by doubling: right after it grows, half of it is empty, and while it grows
/// both copies are held. What a room log keeps for each event it holds (``RoomLog``'s chain
/// fingerprints, ``DeliveryOrder``) cost up to twice its bytes that way, and a copy of it all each
/// time. Here the first chunk grows by doubling (so a list of one holds one element's room, not a
/// chunk's), and each later one is made whole at once: a list that long is going to grow.
struct ChunkedArray<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    /// Elements a chunk holds: a power of two, so an index splits with a shift and a mask.
    private static var chunkShift: Int { 9 }
    private static var chunkSize: Int { 1 << chunkShift }

    private var chunks: [[Element]] = []
    private(set) var count = 0

    init() {}

    init(arrayLiteral elements: Element...) {
        for element in elements { append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "index out of range")
            return chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)]
        }
        set {
            precondition(index >= 0 && index < count, "index out of range")
            chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] = newValue
        }
    }

    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 {
            chunks.append([])
            if chunks.count > 1 { chunks[chunks.count - 1].reserveCapacity(Self.chunkSize) }
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    /// Removes the elements from `range.lowerBound` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        let kept = Swift.max(0, Swift.min(range.lowerBound, count))
        let chunkCount = (kept + Self.chunkSize - 1) >> Self.chunkShift
        chunks.removeSubrange(chunkCount...)
        if let last = chunks.indices.last {
            chunks[last].removeSubrange((kept - (last << Self.chunkShift))...)
        }
        count = kept
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}
extension ChunkedArray: Equatable where Element: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }
}
