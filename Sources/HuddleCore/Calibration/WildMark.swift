/// A mark the reader is about to make that would move its offset far: asked about once before it
/// is made, since one key pressed at the wrong time (long after the moment, or on the wrong one)
/// would otherwise hold every message minutes wrong (see ``RoomSession/wildMark(_:at:)``).
///
/// Wild is more than ``largestMove`` away from the offset the reader has, or, with no offset
/// yet, more than ``widestSpread`` from every peer it would be placed with (the nearest one): no
/// two streams of one broadcast were measured that far apart. A first mark that puts the reader
/// 2 min ahead of one far-behind viewer but 8 s behind the rest is an ordinary one.
///
/// ```swift
/// room.wildMark(kickoff, at: now)   // WildMark(label: kickoff, reach: .apart(from: alice, behind: 141 s))
/// ```
public struct WildMark: Equatable, Sendable {
    /// The label the mark is of.
    public let label: CalibrationLabel
    /// How far the mark would take the reader.
    public let reach: Reach

    /// How far a wild mark would take the reader.
    public enum Reach: Equatable, Sendable {
        /// A placed reader's offset would move by this much (positive: further behind).
        case move(TimeSpan)
        /// A reader with no offset yet would be this far behind `peer` (negative: ahead), the
        /// nearest of those it would be placed with.
        case apart(from: Member, behind: TimeSpan)
    }

    /// How far the reader's offset would move, when it has one.
    public var move: TimeSpan? { if case .move(let move) = reach { move } else { nil } }
    /// With no offset yet: the nearest peer the mark would place the reader with...
    public var peer: Member? { if case .apart(let peer, _) = reach { peer } else { nil } }
    /// ...and how far behind that peer.
    public var behindPeer: TimeSpan? { if case .apart(_, let behind) = reach { behind } else { nil } }

    /// The most a single mark moves a placed reader's offset without asking: 30 s, far beyond a
    /// thumb's error (σ ≈ 200 ms) or a rebuffer, far below a wrong moment.
    public static let largestMove = TimeSpan.seconds(30)
    /// The farthest from its nearest peer a first mark places the reader without asking: 90 s,
    /// the widest spread measured between streams of one broadcast.
    public static let widestSpread = TimeSpan.seconds(90)
    /// How long the question stands: the same mark asked again within it is made.
    public static let confirmWindow = TimeSpan.seconds(60)

    public init(label: CalibrationLabel, reach: Reach) {
        self.label = label
        self.reach = reach
    }
}
