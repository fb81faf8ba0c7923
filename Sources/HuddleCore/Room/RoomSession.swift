/// Everything one node knows and shows about one room: the replicated log, the calibration the
/// log implies, and the messages held back until the reader's stream catches up.
///
/// A pure state machine: feed it events (from peers, from the store, or made here with
/// ``compose(_:now:signer:)``) and clock readings; it returns ``RoomOutput``s to show and says
/// when to wake it next (``nextWake``). It never sleeps and does no I/O.
///
/// ```swift
/// var room = RoomSession(room: "superbowl", reader: me.id)
/// let (event, outputs) = try room.compose(.chat(text: "what a catch"), now: clock(), signer: me)
/// // store `event`, push it to peers, show `outputs`
/// let shown = room.receive(eventFromPeer, now: clock())   // may be [] while held back
/// room.nextWake                                           // when to call wake(now:)
/// ```
public struct RoomSession: Sendable {
    public let room: String
    /// The node reading the room.
    public let reader: NodeID

    public private(set) var log: RoomLog
    public private(set) var calibration = Calibration.none
    private var schedule: HoldBackSchedule
    /// Join, leave, mark and delay events: all the solver needs, kept apart so that chat traffic
    /// never makes a recalibration slower.
    private var calibrationEvents: [Event] = []
    /// Nick from each origin's latest join, and whether that origin is currently in the room.
    private var nicks: [NodeID: String] = [:]
    public private(set) var memberIDs: Set<NodeID> = []
    /// Proposed calibration moments, and which of them wait for this reader's mark.
    public private(set) var pendingMarks = PendingMarks()

    public init(room: String, reader: NodeID) {
        self.room = room
        self.reader = reader
        log = RoomLog(room: room)
        schedule = HoldBackSchedule(reader: reader)
    }

    // MARK: Reading

    /// Current members, sorted by nick then id.
    public var members: [Member] {
        memberIDs.map(member).sorted { ($0.nick, $0.id) < ($1.nick, $1.id) }
    }

    /// The member with this id, with a short id as nick if no join from it has arrived yet.
    public func member(_ id: NodeID) -> Member {
        Member(id: id, nick: nicks[id] ?? "node-\(id)")
    }

    /// Calibration events proposed in this room (normalised labels).
    public var labels: Set<CalibrationLabel> { pendingMarks.labels }

    /// Labels this reader does not want to be prompted for.
    public var ignoredLabels: Set<CalibrationLabel> { pendingMarks.ignored }

    /// The moment one key marks now on this reader's console (see ``PendingMarks``).
    public func markOffer(now: Int64) -> PendingMarks.Offer? { pendingMarks.offer(now: now) }

    /// Messages waiting to be shown.
    public var heldBackCount: Int { schedule.pendingCount }

    /// When to call ``wake(now:)`` next, if anything is held back.
    public var nextWake: Int64? { schedule.nextWake }

    /// The offsets of the current members, as ``RoomOutput/offsetsChanged(_:)`` reports them.
    public var offsetReport: OffsetReport {
        OffsetReport(entries: members.map { member in
            OffsetReport.Entry(
                member: member, offset: calibration.offset(of: member.id),
                behindReader: calibration.lag(of: member.id, behind: reader))
        })
    }

    /// The last `count` delivered chat messages, ordered by game time.
    public func history(last count: Int) -> [Event] {
        Array(calibration.historyOrder(log.delivered.filter(\.body.isChat)).suffix(count))
    }

    // MARK: Writing

    /// Makes, signs and applies this node's next event in the room. Returns the event (for the
    /// store and the peers) and what to show. Throws if the event would not be accepted on the
    /// wire (a text or label over its limit, a control character).
    public mutating func compose(
        _ body: EventBody, now: Int64, signer: NodeIdentity
    ) throws(WireError) -> (event: Event, outputs: [RoomOutput]) {
        let header = log.nextEventHeader(origin: reader)
        let event = signer.sign(id: header.id, room: room, createdAt: now, context: header.context, body: body)
        try event.validate()
        return (event, receive(event, now: now))
    }

    /// Applies an event from anywhere (verified by the caller) and returns what became visible.
    /// Duplicates and rejected events return nothing.
    public mutating func receive(_ event: Event, now: Int64) -> [RoomOutput] {
        guard case .accepted(let delivered) = log.insert(event), !delivered.isEmpty else { return [] }
        return apply(delivered, now: now, announce: true)
    }

    /// Loads events from the store after a restart: nothing is announced again, and chat
    /// messages in `shown` are not shown again; messages not yet shown are scheduled as usual.
    public mutating func restore(_ events: [Event], shown: Set<EventID>, now: Int64) -> [RoomOutput] {
        var delivered: [Event] = []
        for event in events {
            if case .accepted(let newly) = log.insert(event) { delivered += newly }
        }
        let unshown = delivered.filter { !shown.contains($0.id) }
        var outputs = apply(delivered.filter { !$0.body.isChat }, now: now, announce: false)
        outputs += apply(unshown.filter(\.body.isChat), now: now, announce: true)
        return outputs
    }

    /// Shows whatever hold-back time has come.
    public mutating func wake(now: Int64) -> [RoomOutput] {
        schedule.releaseDue(now: now).map(shown)
    }

    /// Stops (or resumes) prompting for a calibration label on this node only.
    public mutating func ignore(label: CalibrationLabel, _ ignored: Bool = true) {
        pendingMarks.ignore(label, ignored)
    }

    // MARK: Applying delivered events

    private mutating func apply(_ delivered: [Event], now: Int64, announce: Bool) -> [RoomOutput] {
        var outputs: [RoomOutput] = []
        var recalibrate = false
        for event in delivered {
            let from = member(event.origin)
            switch event.body {
            case .chat:
                outputs += schedule.admit(event, now: now).map(shown)
            case .join(let nick):
                if event.origin == reader { pendingMarks.readerJoined() }
                nicks[event.origin] = nick
                memberIDs.insert(event.origin)
                calibrationEvents.append(event)
                recalibrate = true
                if announce { outputs.append(.joined(member(event.origin))) }
            case .leave:
                memberIDs.remove(event.origin)
                calibrationEvents.append(event)
                recalibrate = true
                if announce { outputs.append(.left(from)) }
            case .calibrationEvent(let raw):
                guard let label = CalibrationLabel(raw) else { continue }
                pendingMarks.proposed(label, madeAt: event.createdAt, at: now)
                if announce, !ignoredLabels.contains(label) {
                    outputs.append(.calibrationEvent(label: label.normalized, by: from))
                }
            case .mark(let raw):
                if let label = CalibrationLabel(raw) {
                    if event.origin == reader {
                        pendingMarks.readerMarked(label, at: now)
                    } else {
                        pendingMarks.proposed(label, madeAt: event.createdAt, at: now)
                    }
                    if announce { outputs.append(.mark(label: label.normalized, by: from, at: event.createdAt)) }
                }
                calibrationEvents.append(event)
                recalibrate = true
            case .delayNudge:
                calibrationEvents.append(event)
                recalibrate = true
            }
        }
        if recalibrate {
            let updated = CalibrationSolver.solve(calibrationEvents)
            if updated != calibration {
                calibration = updated
                if announce { outputs.append(.offsetsChanged(offsetReport)) }
                outputs += schedule.recalibrate(updated, now: now).map(shown)
            }
        }
        return outputs
    }

    private func shown(_ release: HoldBackSchedule.Release) -> RoomOutput {
        guard case .chat(let text) = release.event.body else { preconditionFailure("only chat is held back") }
        return .message(ShownMessage(
            event: release.event, from: member(release.event.origin), text: text, shownAt: release.shownAt,
            heldMillis: release.heldMillis, gameTime: calibration.gameTime(of: release.event)))
    }
}
