/// A room's calibration as its reader knows it, apart from the room's log, its people and its
/// hold-back (``RoomSession``): the events the solver needs, the offsets they imply (or those
/// followed from another room), the moments waiting for the reader's mark, and what the reader
/// was last told of each offset.
///
/// ```swift
/// var calibrating = RoomCalibration(reader: me)
/// calibrating.add(markEvent)
/// if let previous = calibrating.resolve() { /* offsets moved from `previous` to `current` */ }
/// ```
public struct RoomCalibration: Sendable {
    public let reader: NodeID
    /// Join, leave, mark, unmark, delay and heard events: all the solver needs, kept apart so
    /// that chat traffic never makes a recalibration slower.
    private var events: [Event] = []
    /// The offsets in force.
    public private(set) var current = Calibration.none
    /// Offsets taken from another room (``follow(_:)``), in place of this room's own marks.
    private var followed: Calibration?
    /// Proposed calibration moments, and which of them wait for this reader's mark.
    public internal(set) var pendingMarks = PendingMarks()
    /// What the reader was last told of each member's offset (see ``OffsetReport/noticed``).
    private var told: [NodeID: OffsetReport.Entry] = [:]
    /// Whether the reader was told it is not placed since it last was: said once each time it
    /// becomes unplaced.
    private var toldUnplaced = false

    public init(reader: NodeID) {
        self.reader = reader
    }

    /// An event the solver needs.
    mutating func add(_ event: Event) {
        events.append(event)
    }

    /// Forgets the events `isDropped` names (an equivocating origin's, from the proof's seq on).
    mutating func drop(where isDropped: (Event) -> Bool) {
        events.removeAll(where: isDropped)
    }

    /// Takes `calibration`, another room's offsets, in place of this room's own marks; `false`
    /// when it already did.
    mutating func follow(_ calibration: Calibration) -> Bool {
        guard followed != calibration else { return false }
        followed = calibration
        return true
    }

    /// Solves the offsets again (or takes the followed ones): the offsets before, when they
    /// changed.
    mutating func resolve() -> Calibration? {
        let updated = followed ?? CalibrationSolver.solve(events)
        guard updated != current else { return nil }
        defer { current = updated }
        return current
    }

    /// What the solver would make of this room's events with `mark` added.
    func solved(adding mark: Event) -> Calibration {
        CalibrationSolver.solve(events + [mark])
    }

    /// `report` with what the reader has not been told marked as news (``OffsetReport/noticed``),
    /// which is told from now on.
    mutating func news(in report: OffsetReport) -> OffsetReport {
        var report = report
        let news = report.entries.filter { OffsetReport.isNoticeable($0, after: told[$0.member.id]) }
        report.noticed = Set(news.map(\.member.id))
        for entry in report.entries where report.noticed.contains(entry.member.id) { told[entry.member.id] = entry }
        return report
    }

    /// The reader knows `report` without being told (what it catches up on is not news).
    mutating func known(_ report: OffsetReport) {
        for entry in report.entries { told[entry.member.id] = entry }
    }

    /// Whether to tell the reader it is not placed: once each time it is left with no offset in
    /// a room it is a member of, unless the room follows another's offsets.
    mutating func unplacedIsNews(readerIsMember: Bool) -> Bool {
        if current.isCalibrated(reader) {
            toldUnplaced = false
            return false
        }
        guard !toldUnplaced, readerIsMember, followed == nil else { return false }
        toldUnplaced = true
        return true
    }

    /// Whether the reader's mark of `label` counts now (marked since its latest join, not taken
    /// back).
    func readerHasMarked(_ label: CalibrationLabel) -> Bool {
        var marked = false
        for event in events where event.origin == reader {
            switch event.body {
            case .join: marked = false
            case .mark(let raw) where CalibrationLabel(raw) == label: marked = true
            case .unmark(let raw) where CalibrationLabel(raw) == label: marked = false
            default: break
            }
        }
        return marked
    }
}
