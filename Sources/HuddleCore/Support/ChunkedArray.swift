/// A growing list kept in chunks of at most 512: a full chunk is never copied again, and at
/// most the last one has room unused.
///
/// An array grows by doubling: right after it grows, half of it is empty, and while it grows
/// both copies are held. A room log's events from one origin (``RoomLog``) held that way cost
/// up to twice their 160 bytes each, and a copy of them all each time. Here only the last chunk
/// grows by doubling (so an origin with one event holds one event's room, not a chunk's), and
/// what it leaves unused or copies is at most 80 KiB an origin.
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
        precondition(index >= 0 && index < count, "index out of range")
        return chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)]
    }

    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 { chunks.append([]) }
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
