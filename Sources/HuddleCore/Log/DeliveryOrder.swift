/// The ids of a room log's delivered events, in the order they were delivered (``RoomLog``), in
/// 8 bytes an id instead of 40: the origin as its place in a table of the log's origins (24 bits),
/// the seq beside it (40 bits). A log's origins are bounded by ``RoomLogLimits/maxOrigins`` and
/// its seqs by what it holds, far below either bound.
public struct DeliveryOrder: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
    private static let seqBits: UInt64 = 40
    private static let seqMask: UInt64 = (1 << seqBits) - 1

    private var origins: [NodeID] = []
    private var places: [NodeID: UInt64] = [:]
    private var entries = ChunkedArray<UInt64>()

    public init() {}

    public init(arrayLiteral ids: EventID...) {
        for id in ids { append(id) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    public subscript(index: Int) -> EventID {
        let entry = entries[index]
        return EventID(origin: origins[Int(entry >> Self.seqBits)], seq: entry & Self.seqMask)
    }

    mutating func append(_ id: EventID) {
        precondition(id.seq <= Self.seqMask, "seq past what a delivery order holds")
        let place = places[id.origin] ?? {
            precondition(origins.count < 1 << (64 - Self.seqBits), "more origins than a delivery order holds")
            origins.append(id.origin)
            places[id.origin] = UInt64(origins.count - 1)
            return UInt64(origins.count - 1)
        }()
        entries.append(place << Self.seqBits | id.seq)
    }

    /// Removes the ids that match `shouldBeRemoved`, keeping the order of the rest.
    mutating func removeAll(where shouldBeRemoved: (EventID) -> Bool) {
        var kept = ChunkedArray<UInt64>()
        for (index, entry) in entries.enumerated() where !shouldBeRemoved(self[index]) { kept.append(entry) }
        entries = kept
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.elementsEqual(rhs) }
}
