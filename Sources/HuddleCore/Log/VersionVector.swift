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
    private var seqs: [NodeID: UInt64]

    /// The empty vector: holds nothing.
    public init() { seqs = [:] }

    public init(_ entries: [NodeID: UInt64]) {
        seqs = entries.filter { $0.value > 0 }
    }

    public init(dictionaryLiteral elements: (NodeID, UInt64)...) {
        self.init(Dictionary(elements, uniquingKeysWith: max))
    }

    /// The highest contiguous sequence number held from `origin` (0: none).
    public subscript(origin: NodeID) -> UInt64 {
        get { seqs[origin] ?? 0 }
        set { seqs[origin] = newValue == 0 ? nil : newValue }
    }

    /// The non-zero entries, sorted by origin: a canonical order for encoding and printing.
    public var entries: [(origin: NodeID, seq: UInt64)] {
        seqs.sorted { $0.key < $1.key }.map { (origin: $0.key, seq: $0.value) }
    }

    /// The origins with a non-zero entry.
    public var origins: Dictionary<NodeID, UInt64>.Keys { seqs.keys }

    /// Number of non-zero entries.
    public var count: Int { seqs.count }

    public var isEmpty: Bool { seqs.isEmpty }

    /// Whether the vector covers this event.
    public func contains(_ id: EventID) -> Bool { id.seq <= self[id.origin] }

    /// Raises each entry to the other's where the other is higher (the least upper bound).
    public mutating func merge(_ other: VersionVector) {
        seqs.merge(other.seqs, uniquingKeysWith: max)
    }

    /// The least upper bound of the two vectors.
    public func merging(_ other: VersionVector) -> VersionVector {
        var merged = self
        merged.merge(other)
        return merged
    }

    /// Whether every entry here is at least the other's (`self` has seen all the other has).
    public func dominates(_ other: VersionVector) -> Bool {
        other.seqs.allSatisfy { origin, seq in self[origin] >= seq }
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
