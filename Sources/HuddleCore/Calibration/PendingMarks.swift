/// The calibration moments a room has proposed that this reader has not marked yet: what the
/// console offers to mark with one key (`[Enter = kickoff]`).
///
/// A pure value fed by ``RoomSession`` as events are delivered. The rules:
///
/// - A label becomes *proposed* the first time a calibration event or a mark with that label is
///   delivered here; the order of first delivery is the order of proposals.
/// - It stops being pending once the reader marks it (a mark counts only after the reader's latest
///   join, as in ``CalibrationSolver``), or is ignored here (`/ignore`).
/// - Marking a moment *passes* every pending moment proposed before it: on the reader's screen
///   those moments are already over. A join passes every earlier proposal the same way (a
///   re-joined node starts afresh).
/// - A proposal older than ``offerWindow`` is no longer offered: an Enter pressed long after a
///   proposal is far more likely a slip than a mark. Its age counts from when it was made (the
///   proposer's clock) or when it arrived here, whichever is earlier, so a late joiner is not
///   offered the moments of the room's history it has just pulled; a proposal written before
///   the reader joined stays on offer only ``earlierOfferWindow``.
/// - The reader's own proposal (`/event`) is not offered to the reader: she marks it with
///   `/now LABEL` when she means to.
/// - A mark the reader takes back (`/unmark`) makes its moment pending again, unless it has
///   passed.
///
/// The console offers the *oldest* pending moment, not the newest: proposals come from viewers
/// who are ahead and arrive in the order the moments happen, so the next one to appear on the
/// reader's stream is the oldest still open. Marking it moves the offer on to the next.
///
/// ```swift
/// var pending = PendingMarks()
/// pending.proposed("kickoff", at: t)
/// pending.proposed("first down", at: t + .seconds(19))
/// pending.offer(now: t + .seconds(29))               // "kickoff", with 1 more after it
/// pending.readerMarked("kickoff", at: t + .seconds(29))
/// pending.offer(now: t + .seconds(30))               // "first down"
/// ```
public struct PendingMarks: Equatable, Sendable {
    /// How long a proposal stays on offer: three minutes, twice the widest spread measured
    /// between streams of one broadcast (26–87 s behind live).
    public static let offerWindow = TimeSpan.seconds(3 * 60)
    /// How long a proposal a late joiner finds in the room's history stays on offer: 90 s, the
    /// widest spread measured between streams of one broadcast; past it, the moment is over on
    /// every stream.
    public static let earlierOfferWindow = TimeSpan.seconds(90)

    private struct Proposal: Equatable {
        /// Position in the order of first delivery.
        var order: Int
        /// When it was made or arrived, whichever is earlier.
        var since: WallTime
        /// How long it stays on offer from ``since``; zero: never offered (the reader's own).
        var window: TimeSpan
    }

    private var proposals: [CalibrationLabel: Proposal] = [:]
    private var nextOrder = 0
    /// Labels the reader marked since its latest join.
    private var marked: Set<CalibrationLabel> = []
    /// Proposals with an order below this have passed on the reader's screen.
    private var passedBefore = 0
    /// Labels the reader does not want to be asked about.
    public private(set) var ignored: Set<CalibrationLabel> = []

    public init() {}

    /// What the console offers: the oldest open moment and how many more wait after it.
    public struct Offer: Equatable, Sendable {
        public var label: CalibrationLabel
        /// Further pending moments proposed after ``label``.
        public var more: Int

        public init(label: CalibrationLabel, more: Int) {
            self.label = label
            self.more = more
        }
    }

    /// Every label proposed in the room (marked, ignored or not).
    public var labels: Set<CalibrationLabel> { Set(proposals.keys) }

    /// When `label` was proposed (made, or arrived here if that was earlier), if it was.
    public func proposedAt(_ label: CalibrationLabel) -> WallTime? { proposals[label]?.since }

    /// A calibration event or a mark with `label`, made at `madeAt` (its origin's clock), was
    /// delivered when this node's clock read `at`.
    /// `byReader`: the reader proposed it (never offered); `earlier`: written before the reader
    /// joined (offered for ``earlierOfferWindow`` only).
    public mutating func proposed(
        _ label: CalibrationLabel, madeAt: WallTime? = nil, at: WallTime, byReader: Bool = false,
        earlier: Bool = false
    ) {
        guard proposals[label] == nil else { return }
        let window = byReader ? .zero : earlier ? Self.earlierOfferWindow : Self.offerWindow
        proposals[label] = Proposal(order: nextOrder, since: min(madeAt ?? at, at), window: window)
        nextOrder += 1
    }

    /// The reader took back its mark of `label`: it is pending again unless it has passed.
    public mutating func readerUnmarked(_ label: CalibrationLabel) {
        marked.remove(label)
    }

    /// The reader marked `label` (the label is proposed first if it was new).
    public mutating func readerMarked(_ label: CalibrationLabel, at: WallTime) {
        proposed(label, at: at)
        marked.insert(label)
        passedBefore = max(passedBefore, proposals[label]!.order)
    }

    /// The reader (re-)joined: its earlier marks no longer count, and earlier proposals have passed.
    public mutating func readerJoined() {
        marked.removeAll()
        passedBefore = nextOrder
    }

    /// Stops (or resumes) offering `label` on this node.
    public mutating func ignore(_ label: CalibrationLabel, _ ignored: Bool = true) {
        if ignored { self.ignored.insert(label) } else { self.ignored.remove(label) }
    }

    /// The open moments, oldest first.
    public func pending(now: WallTime) -> [CalibrationLabel] {
        proposals
            .filter { label, proposal in
                proposal.order >= passedBefore && !marked.contains(label) && !ignored.contains(label)
                    && proposal.window > .zero && now - proposal.since <= proposal.window
            }
            .sorted { $0.value.order < $1.value.order }
            .map(\.key)
    }

    /// Every proposed label, the open moments first (oldest first), then the rest by name: what
    /// Tab offers after `/now`.
    public func labelsPendingFirst(now: WallTime) -> [CalibrationLabel] {
        let open = pending(now: now)
        return open + labels.subtracting(open).sorted()
    }

    /// The moment one key marks now, if any.
    public func offer(now: WallTime) -> Offer? {
        let open = pending(now: now)
        return open.first.map { Offer(label: $0, more: open.count - 1) }
    }

    /// When the current offer set next changes by itself (a proposal leaving the window), if ever:
    /// the first whole ms past a window, as the wall clock reads ms.
    public func nextExpiry(now: WallTime) -> WallTime? {
        let open = Set(pending(now: now))
        return open.compactMap { proposals[$0].map { $0.since + $0.window + .milliseconds(1) } }.min()
    }
}
