/// A growing list kept in chunks of at most 512: a full chunk is never copied again, and at
/// most the last one has room unused.
///
/// An array grows by doubling: right after it grows, half of it is empty, and while it grows
/// both copies are held. What a room log keeps for each event it holds (``RoomLog``'s chain
/// fingerprints, ``DeliveryOrder``) cost up to twice its bytes that way, and a copy of it all each
/// time. Here the first chunk grows by doubling (so a list of one holds one element's room, not a
/// chunk's), and each later one is made whole at once: a list that long is going to grow.
struct ChunkedArray<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
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
            return chunks[Chunking.chunk(of: index)][Chunking.place(of: index)]
        }
        set {
            precondition(index >= 0 && index < count, "index out of range")
            chunks[Chunking.chunk(of: index)][Chunking.place(of: index)] = newValue
        }
    }

    mutating func append(_ element: Element) {
        if Chunking.place(of: count) == 0 {
            chunks.append([])
            if chunks.count > 1 { chunks[chunks.count - 1].reserveCapacity(Chunking.size) }
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    /// Removes the elements from `range.lowerBound` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        let kept = Swift.max(0, Swift.min(range.lowerBound, count))
        chunks.removeSubrange(Chunking.chunks(holding: kept)...)
        if let last = chunks.indices.last { chunks[last].removeSubrange(Chunking.kept(of: kept, inChunk: last)...) }
        count = kept
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}
extension ChunkedArray: Equatable where Element: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }
}

/// Where the elements of a list kept in chunks of 512 fall (``ChunkedArray``, ``PackedEvents``): a
/// power of two, so an index splits with a shift and a mask.
enum Chunking {
    static let size = 1 << shift
    private static let shift = 9

    /// The chunk that holds element `index`.
    static func chunk(of index: Int) -> Int { index >> shift }

    /// Element `index`'s place in its chunk.
    static func place(of index: Int) -> Int { index & (size - 1) }

    /// How many chunks `count` elements take.
    static func chunks(holding count: Int) -> Int { (count + size - 1) >> shift }

    /// How many of chunk `chunk`'s elements are among the first `count`.
    static func kept(of count: Int, inChunk chunk: Int) -> Int { count - (chunk << shift) }
}
