/// The id of a room event: its origin node and its sequence number there.
///
/// Sequence numbers start at 1 and are contiguous per origin (in each room), which is what lets a
/// ``VersionVector`` summarise exactly which events a node holds.
public struct EventID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var origin: NodeID
    public var seq: UInt64

    public init(origin: NodeID, seq: UInt64) {
        self.origin = origin
        self.seq = seq
    }

    public var description: String { "\(origin)#\(seq)" }

    public static func < (lhs: EventID, rhs: EventID) -> Bool {
        (lhs.origin, lhs.seq) < (rhs.origin, rhs.seq)
    }
}
