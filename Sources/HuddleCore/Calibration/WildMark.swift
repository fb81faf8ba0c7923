/// A mark the reader is about to make that would move its offset far: asked about once before it
/// is made, since one key pressed at the wrong time (long after the moment, or on the wrong one)
/// would otherwise hold every message minutes wrong (see ``RoomSession/wildMark(_:at:)``).
///
/// Wild is more than ``largestMove`` away from the offset the reader has, or, with no offset
/// yet, more than ``widestSpread`` from a peer it would be placed with: no two streams of one
/// broadcast were measured that far apart.
///
/// ```swift
/// room.wildMark(kickoff, at: now)   // WildMark(label: kickoff, move: nil, peer: alice, behindPeer: 141 s)
/// ```
public struct WildMark: Equatable, Sendable {
    /// The label the mark is of.
    public let label: CalibrationLabel
    /// How far the reader's offset would move (positive: further behind), when it has one.
    public let move: TimeSpan?
    /// With no offset yet: the peer the mark would put the reader farthest from...
    public let peer: Member?
    /// ...and how far behind that peer (negative: ahead).
    public let behindPeer: TimeSpan?

    /// The most a single mark moves a placed reader's offset without asking: 30 s, far beyond a
    /// thumb's error (σ ≈ 200 ms) or a rebuffer, far below a wrong moment.
    public static let largestMove = TimeSpan.seconds(30)
    /// The farthest from a peer a first mark places the reader without asking: 90 s, the widest
    /// spread measured between streams of one broadcast.
    public static let widestSpread = TimeSpan.seconds(90)
    /// How long the question stands: the same mark asked again within it is made.
    public static let confirmWindow = TimeSpan.seconds(60)

    public init(label: CalibrationLabel, move: TimeSpan?, apart: (peer: Member, behind: TimeSpan)?) {
        self.label = label
        self.move = move
        peer = apart?.peer
        behindPeer = apart?.behind
    }
}
