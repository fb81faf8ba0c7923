/// A summary of which events a node holds: for each origin, the highest sequence number up to
/// which it holds *every* event of that origin.
///
/// Because sequence numbers are contiguous per origin, `{alice: 3, bob: 1}` means exactly
/// "alice#1…3 and bob#1". Origins that are absent count as 0, and a zero entry is never stored,
/// so two vectors that mean the same thing are `==`.
///
/// ```swift
/// var mine: VersionVector = [alice: 3, bob: 1]
/// let theirs: VersionVector = [alice: 1, bob: 4]
/// mine.compare(to: theirs)            // .concurrent
/// mine.ranges(missingFrom: theirs)    // [alice: 2...3] — what to send them
/// mine.merge(theirs)                  // [alice: 3, bob: 4]
/// ```
public struct VersionVector: Hashable, Sendable, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One origin's entry.
    struct Entry: Hashable, Sendable {
        var origin: NodeID
        var seq: UInt64
    }

    /// The non-zero entries, ascending by origin: the order the wire and printing want, with no
    /// hashing. Every event holds one vector (its context), so its size counts: one entry takes
    /// 40 bytes here, against ~150 in a one-entry dictionary.
    private var sorted: [Entry]

    /// The empty vector: holds nothing.
    public init() { sorted = [] }

    public init(_ entries: [NodeID: UInt64]) {
        sorted = entries.filter { $0.value > 0 }.map { Entry(origin: $0.key, seq: $0.value) }
            .sorted { $0.origin < $1.origin }
    }

    /// A vector of entries already ascending by origin, each non-zero (as the wire carries them).
    init(ascending entries: [Entry]) {
        sorted = entries
    }

    public init(dictionaryLiteral elements: (NodeID, UInt64)...) {
        self.init(Dictionary(elements, uniquingKeysWith: max))
    }

    /// Where `origin`'s entry is, or would go.
    private func position(of origin: NodeID) -> (index: Int, found: Bool) {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].origin < origin {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return (low, low < sorted.count && sorted[low].origin == origin)
    }

    /// The highest contiguous sequence number held from `origin` (0: none).
    public subscript(origin: NodeID) -> UInt64 {
        get {
            let (index, found) = position(of: origin)
            return found ? sorted[index].seq : 0
        }
        set {
            let (index, found) = position(of: origin)
            switch (found, newValue) {
            case (true, 0): sorted.remove(at: index)
            case (true, _): sorted[index].seq = newValue
            case (false, 0): break
            case (false, _): sorted.insert(Entry(origin: origin, seq: newValue), at: index)
            }
        }
    }

    /// The non-zero entries, sorted by origin: a canonical order for encoding and printing.
    public var entries: [(origin: NodeID, seq: UInt64)] {
        sorted.map { (origin: $0.origin, seq: $0.seq) }
    }

    /// The origins with a non-zero entry, ascending.
    public var origins: some Collection<NodeID> { sorted.lazy.map(\.origin) }

    /// Number of non-zero entries.
    public var count: Int { sorted.count }

    public var isEmpty: Bool { sorted.isEmpty }

    /// Whether the vector covers this event.
    public func contains(_ id: EventID) -> Bool { id.seq <= self[id.origin] }

    /// Raises each entry to the other's where the other is higher (the least upper bound).
    public mutating func merge(_ other: VersionVector) {
        guard !other.sorted.isEmpty else { return }
        guard !sorted.isEmpty else { return sorted = other.sorted }
        var merged: [Entry] = []
        merged.reserveCapacity(sorted.count + other.sorted.count)
        var (mine, theirs) = (sorted[...], other.sorted[...])
        while let a = mine.first, let b = theirs.first {
            if a.origin < b.origin {
                merged.append(a)
                mine.removeFirst()
            } else if b.origin < a.origin {
                merged.append(b)
                theirs.removeFirst()
            } else {
                merged.append(Entry(origin: a.origin, seq: max(a.seq, b.seq)))
                mine.removeFirst()
                theirs.removeFirst()
            }
        }
        merged.append(contentsOf: mine)
        merged.append(contentsOf: theirs)
        sorted = merged
    }

    /// The least upper bound of the two vectors.
    public func merging(_ other: VersionVector) -> VersionVector {
        var merged = self
        merged.merge(other)
        return merged
    }

    /// Whether every entry here is at least the other's (`self` has seen all the other has).
    public func dominates(_ other: VersionVector) -> Bool {
        other.sorted.allSatisfy { self[$0.origin] >= $0.seq }
    }

    /// How this vector relates to another in the happened-before order.
    public func compare(to other: VersionVector) -> CausalOrder {
        switch (dominates(other), other.dominates(self)) {
        case (true, true): .equal
        case (false, true): .before
        case (true, false): .after
        case (false, false): .concurrent
        }
    }

    /// What `other` misses of what this vector holds, one contiguous range per origin, sorted by
    /// origin. This answers an anti-entropy exchange: send `other` these events.
    public func ranges(missingFrom other: VersionVector) -> [SeqRange] {
        entries.compactMap { origin, seq in
            let theirs = other[origin]
            return seq > theirs ? SeqRange(origin: origin, seqs: (theirs + 1)...seq) : nil
        }
    }

    public var description: String {
        "[" + entries.map { "\($0.origin): \($0.seq)" }.joined(separator: ", ") + "]"
    }
}

/// How two version vectors (or the events they summarise) are ordered by causality.
public enum CausalOrder: Hashable, Sendable {
    /// Both hold the same events.
    case equal
    /// The receiver holds a strict subset of the argument's events.
    case before
    /// The receiver holds a strict superset of the argument's events.
    case after
    /// Each holds something the other lacks.
    case concurrent
}

/// A contiguous run of one origin's sequence numbers, e.g. `alice: 4...9`.
public struct SeqRange: Hashable, Sendable, CustomStringConvertible {
    public var origin: NodeID
    public var seqs: ClosedRange<UInt64>

    public init(origin: NodeID, seqs: ClosedRange<UInt64>) {
        self.origin = origin
        self.seqs = seqs
    }

    public var description: String { "\(origin): \(seqs.lowerBound)...\(seqs.upperBound)" }
}
