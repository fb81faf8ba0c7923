/// The messages one reader is holding back until its stream reaches the moment they were written,
/// as a pure state machine: it never sleeps and has no clock. The caller passes its clock in as
/// `now` (the reader's wall clock), shows whatever ``Release``s come back, and wakes
/// up again at ``nextWake``.
///
/// A message from sender S written when S's clock read `t` is due on reader R at
/// `t − offset(S, at t) + offset(R)` (on R's clock) when S and R are connected in the
/// ``Calibration``: its game moment, with the sender's offset when it wrote it, on the reader's
/// stream as it runs now (see ``Calibration/dueTime(of:for:)``).
/// It is shown at once when that moment is already past, and when S is the reader itself.
///
/// **The shield.** When S and R are not connected (either has no offset yet, or they are in
/// groups no mark joins), nobody knows where the message's moment lies on R's stream. It then
/// waits ``shield`` from when the slowest stream S is placed with shows its moment
/// (``Calibration/slowestShowing(of:)``; S's own stream when S is placed with nobody), so that no
/// stream up to that far behind any placed one is spoiled, and the lines of one group come out in
/// game order: due at `min(written, arrived) + (slowest showing − written) + shield`. The writer's
/// clock is trusted to within seconds, as on any network kept by NTP; a message whose writing
/// time lies ahead of the reader's clock counts from its arrival, so a clock far ahead cannot
/// hide it for longer than the shield. With the shield off (`nil`, a reader who knows it is
/// ahead of everyone), such a message is shown at once.
///
/// The shield is the reader's floor (90 s by default: the widest spread measured between
/// streams of one broadcast) or, when the room has shown two placed streams farther apart than
/// that, their spread plus ``spreadMargin``: it grows with what the room knows, and never shrinks
/// by itself (``widestSpread``).
///
/// ```swift
/// // bob's stream is 2 s behind alice's; alice wrote `aliceSaysGoal` when her clock read t.
/// var schedule = HoldBackSchedule(reader: bob, calibration: calibration)
/// schedule.admit(aliceSaysGoal, now: t + .milliseconds(500))   // []: due at t + 2 s
/// schedule.nextWake                                            // t + 2 s
/// schedule.releaseDue(now: t + .seconds(2))   // [Release(event: aliceSaysGoal, held: 1.5 s, ...)]
/// ```
///
/// Due messages come out in order of their release time, ties by game time (see
/// ``Calibration/historyKey(of:)``), then by event id. Pending messages live in a binary heap, so
/// admitting and releasing cost O(log n) each.
public struct HoldBackSchedule: Sendable {
    /// A message that has been admitted and is waiting to be shown.
    public struct Pending: Equatable, Sendable {
        /// The message.
        public let event: Event
        /// The reader's clock when the message was admitted.
        public let arrivedAt: WallTime
        /// The reader's clock when the message is due to be shown.
        public let releaseAt: WallTime
    }

    /// A message to show now.
    public struct Release: Equatable, Sendable {
        /// The message.
        public let event: Event
        /// The reader's clock when the message was admitted.
        public let arrivedAt: WallTime
        /// When the message was due on the reader's clock: `t − offset(S) + offset(R)` for
        /// connected nodes (possibly already past when it arrived), otherwise its arrival time
        /// (or the time of the recalibration that disconnected its sender).
        public let releaseAt: WallTime
        /// The reader's clock when it was released (the `now` of the call that returned it).
        public let shownAt: WallTime

        /// How long the message was held back on this node: `shownAt − arrivedAt`. Transit time
        /// and any hold-back already served before it arrived are not included.
        public var held: TimeSpan { shownAt - arrivedAt }

        /// How long after it was written the reader sees it, as a person counts it: the wait the
        /// rule gave it (`releaseAt − createdAt`: the reader's lag behind the writer, the very
        /// number the status line and `/who` say, or the shield), or how long this node held it if
        /// that was longer (a pause). Transit and timer jitter do not show: a message held
        /// 11 447 ms for a lag of 11 450 ms reads "11.5 s", as the lag does.
        public var waited: TimeSpan { max(held, releaseAt - event.createdAt) }
    }

    /// The node whose stream the schedule follows.
    public let reader: NodeID
    /// The calibration release times are computed from.
    public private(set) var calibration: Calibration

    private var heap = BinaryHeap<Entry>()
    private var pendingIDs: Set<EventID> = []
    /// While the reader's stream is paused nothing is released: its stream does not move, so
    /// no moment anyone wrote about comes due (the reader's own messages still show at once).
    public private(set) var isHolding = false
    /// How long a message from a writer the reader is not connected to waits after it was
    /// written; `nil`: it is shown at once (see the shield, above). ``shieldFloor``, or the room's
    /// widest spread plus ``spreadMargin`` once that spread is wider than the floor.
    public var shield: TimeSpan? {
        shieldFloor.map { floor in
            guard let spread = widestSpread?.apart, spread > floor else { return floor }
            return spread + Self.spreadMargin
        }
    }
    /// The shield the reader set (`--shield`, `/shield S`), or the default; `nil`: off.
    public private(set) var shieldFloor: TimeSpan?
    /// The widest spread between two placed streams the room has shown so far: the shield covers
    /// it. Kept when the marks that showed it are taken back: the streams are still that far apart.
    public private(set) var widestSpread: Calibration.Spread?

    /// The shield a reader has unless it says otherwise: 90 s, the widest spread measured between
    /// streams of one broadcast (Super Bowl streams ran 26–87 s behind the stadium).
    public static let defaultShield = TimeSpan.seconds(90)
    /// How much longer than the widest spread the room has shown the shield is: a stream seldom
    /// keeps its lag to the second (rebuffers, an app that jumps), and the unplaced reader may be
    /// a little beyond the slowest placed one.
    public static let spreadMargin = TimeSpan.seconds(30)

    /// An empty schedule for `reader`.
    public init(reader: NodeID, calibration: Calibration = .none, shield: TimeSpan? = defaultShield) {
        self.reader = reader
        self.calibration = calibration
        self.shieldFloor = shield
        self.widestSpread = calibration.widestSpread
    }

    /// Number of messages waiting.
    public var pendingCount: Int { heap.count }

    /// Whether the message is waiting (not shown yet).
    public func isPending(_ id: EventID) -> Bool { pendingIDs.contains(id) }

    /// The waiting messages, in the order they will be released.
    public var pending: [Pending] {
        heap.unordered.sorted().map {
            Pending(event: $0.event, arrivedAt: $0.arrivedAt, releaseAt: $0.releaseAt)
        }
    }

    /// The earliest release time of a waiting message: when to call ``releaseDue(now:)`` next.
    /// `nil` when nothing is waiting.
    public var nextWake: WallTime? { isHolding ? nil : heap.min?.releaseAt }

    /// Holds every message (`true`: the reader paused its stream) or lets due ones go again.
    /// Releasing what is due after a hold is the caller's: ``releaseDue(now:)``, typically after
    /// ``recalibrate(_:now:)`` has added the paused span to the reader's offset.
    public mutating func hold(_ holding: Bool) {
        isHolding = holding
    }

    /// When the reader should show `event` given the current calibration, if it arrives at `now`:
    /// `now` for its own messages, ``Calibration/dueTime(of:for:)`` (which may be in the past)
    /// for a sender it is connected to, and the shield's time for any other sender.
    public func releaseTime(of event: Event, now: WallTime) -> WallTime {
        Self.releaseTime(of: event, now: now, reader: reader, calibration: calibration, shield: shield)
    }

    private static func releaseTime(
        of event: Event, now: WallTime, reader: NodeID, calibration: Calibration, shield: TimeSpan?
    ) -> WallTime {
        if event.origin == reader { return now }
        if let due = calibration.dueTime(of: event, for: reader) { return due }
        return shielded(event, arrivedAt: now, shield: shield, calibration: calibration) ?? now
    }

    /// When the shield lets a message from an unconnected sender go: `shield` after the slowest
    /// stream its writer is placed with shows its moment (its own if none), counted from its
    /// arrival instead if its writer's clock is ahead of ours. `nil` with no shield.
    private static func shielded(
        _ event: Event, arrivedAt: WallTime, shield: TimeSpan?, calibration: Calibration
    ) -> WallTime? {
        shield.map { min(event.createdAt, arrivedAt) + (calibration.slowestShowing(of: event) - event.createdAt) + $0 }
    }

    /// Takes in a message that arrived at `now` and returns everything due by `now`, this message
    /// included if it is due (otherwise it waits). A message already waiting (same id) is
    /// ignored; the schedule does not remember messages it has released, so the caller drops
    /// duplicates it has shown.
    public mutating func admit(_ event: Event, now: WallTime) -> [Release] {
        if event.origin == reader, isHolding {
            return [Release(event: event, arrivedAt: now, releaseAt: now, shownAt: now)]
        }
        if pendingIDs.insert(event.id).inserted {
            heap.insert(Entry(event: event, arrivedAt: now, releaseAt: releaseTime(of: event, now: now),
                              historyKey: calibration.historyKey(of: event)))
        }
        return releaseDue(now: now)
    }

    /// Removes and returns every waiting message whose release time is at or before `now`, in
    /// release order.
    public mutating func releaseDue(now: WallTime) -> [Release] {
        var released: [Release] = []
        guard !isHolding else { return released }
        while let top = heap.min, top.releaseAt <= now {
            let entry = heap.popMin()!
            pendingIDs.remove(entry.event.id)
            released.append(
                Release(event: entry.event, arrivedAt: entry.arrivedAt, releaseAt: entry.releaseAt, shownAt: now))
        }
        return released
    }

    /// Switches to a new calibration at `now`: recomputes the release time of every waiting
    /// message whose sender is still connected to the reader, and returns those now due.
    ///
    /// A message whose sender is no longer connected (someone left, re-joined or took a mark
    /// back, and with them went the marks that linked the two) keeps the release time it had,
    /// or the shield's if that is later: it was held back because it is ahead of the reader's
    /// stream, and losing the link does not make it safe to show. Releasing it at once would
    /// spoil exactly the play it is about.
    ///
    /// A spread between two placed streams wider than any the room showed before grows the
    /// shield to cover it (see the shield, above); messages held by the shield wait the longer.
    public mutating func recalibrate(_ calibration: Calibration, now: WallTime) -> [Release] {
        self.calibration = calibration
        if let spread = calibration.widestSpread, spread.apart > widestSpread?.apart ?? .zero { widestSpread = spread }
        let (reader, shield) = (reader, shield)  // the heap is being changed: nothing else of self may be read
        heap.updateEach { entry in
            let event = entry.event
            if event.origin == reader || calibration.areConnected(event.origin, reader) {
                entry.releaseAt = Self.releaseTime(
                    of: event, now: now, reader: reader, calibration: calibration, shield: shield)
            } else if let shielded = Self.shielded(
                event, arrivedAt: entry.arrivedAt, shield: shield, calibration: calibration)
            {
                entry.releaseAt = max(entry.releaseAt, shielded)
            }
            entry.historyKey = calibration.historyKey(of: event)
        }
        return releaseDue(now: now)
    }

    /// Sets the shield's floor (`nil`: off) at `now`: every waiting message from a sender the
    /// reader is not connected to is re-timed by the shield it makes (shown at once with the
    /// shield off), and those now due are returned.
    public mutating func setShield(_ floor: TimeSpan?, now: WallTime) -> [Release] {
        shieldFloor = floor
        let (reader, calibration, shield) = (reader, calibration, shield)
        heap.updateEach { entry in
            let event = entry.event
            guard event.origin != reader, !calibration.areConnected(event.origin, reader) else { return }
            entry.releaseAt = Self.shielded(event, arrivedAt: entry.arrivedAt, shield: shield, calibration: calibration) ?? now
        }
        return releaseDue(now: now)
    }

    /// Drops every waiting message matching `predicate` (a quarantined origin's), unshown.
    public mutating func withdraw(where predicate: (Event) -> Bool) {
        heap.removeAll { predicate($0.event) }
        pendingIDs = Set(heap.unordered.map(\.event.id))
    }

    // MARK: - Heap order

    /// A waiting message, ordered by release time, then history key, then id.
    private struct Entry: Comparable, Sendable {
        var event: Event
        var arrivedAt: WallTime
        var releaseAt: WallTime
        var historyKey: WallTime

        static func < (a: Entry, b: Entry) -> Bool {
            (a.releaseAt, a.historyKey, a.event.id) < (b.releaseAt, b.historyKey, b.event.id)
        }

        static func == (a: Entry, b: Entry) -> Bool {
            (a.releaseAt, a.historyKey, a.event.id) == (b.releaseAt, b.historyKey, b.event.id)
        }
    }
}
