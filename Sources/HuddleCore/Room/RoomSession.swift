/// Everything one node knows and shows about one room: the replicated log, its people
/// (``RoomPeople``), the calibration the log implies (``RoomCalibration``), and the messages held
/// back until the reader's stream catches up (``HoldBackSchedule``).
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
    /// The room's calibration: its events, its offsets, the marks waiting, what the reader was
    /// told (``RoomCalibration``).
    public internal(set) var calibrating: RoomCalibration
    var schedule: HoldBackSchedule
    /// Who is in the room, under which nick (``RoomPeople``).
    public internal(set) var people = RoomPeople()
    /// What the room gave up on: events abandoned or dropped after waiting too long.
    public private(set) var tally = Tally()
    /// The score this reader's stream has reached, if anyone posted one; and the sides' names.
    public internal(set) var scoreboard: Scoreboard?
    public internal(set) var teams: (home: String, guest: String, at: WallTime, by: NodeID, seq: UInt64)?
    /// Events the log dropped since ``takeDiscarded()`` was last called: the shell deletes them
    /// from its store, so what a stranger sends is not kept past the wait.
    private var discarded: [EventID] = []
    /// The seq of the reader's latest join here, and its time on the reader's clock (see
    /// ``isEarlier(_:)``).
    var readerJoinSeq: UInt64 = 0
    var readerJoinedAt: WallTime = .distantPast
    /// Every label proposed or marked in the room, told to the reader yet or not: what makes a
    /// mark of a new label propose it first (never shown; ``labels`` is what the reader was told).
    var everyLabel: Set<CalibrationLabel> = []
    /// Members whose moment the reader was cued about while not placed with them
    /// (``RoomOutput/momentCue(by:)``): said once per member until the two are placed.
    var cued: Set<NodeID> = []

    /// Counts of what a room's log gave up on, for the node's counters.
    public struct Tally: Equatable, Sendable {
        /// Events that waited for their causal context longer than ``RoomLogLimits/maxWait``.
        public var abandoned = 0
        /// Events held past a gap that was not filled within ``RoomLogLimits/maxWait``.
        public var droppedAhead = 0
    }

    /// A private room's key (its ``RoomKey/id`` is ``room``): events are sealed with it and must
    /// be opened with it (``opened(_:)``) before they are applied. `nil` for a public room.
    public let key: RoomKey?

    /// A session of `room` read by `reader`. `shield`: how long a message from someone the
    /// reader is not placed with waits after it was written (``HoldBackSchedule/shield``; `nil`:
    /// shown at once).
    public init(
        room: String, reader: NodeID, key: RoomKey? = nil, shield: TimeSpan? = HoldBackSchedule.defaultShield
    ) {
        precondition(key == nil || key?.id == room, "a room key belongs to its own room")
        self.room = room
        self.reader = reader
        self.key = key
        log = RoomLog(room: room)
        calibrating = RoomCalibration(reader: reader)
        schedule = HoldBackSchedule(reader: reader, shield: shield)
    }

    /// The offsets in force.
    public var calibration: Calibration { calibrating.current }
    /// Proposed calibration moments, and which of them wait for this reader's mark.
    public var pendingMarks: PendingMarks { calibrating.pendingMarks }

    // MARK: Reading

    /// Current members, sorted by nick then id.
    public var members: [Member] { people.members }

    /// The member with this id, with a short id as nick if no join from it has arrived yet.
    public func member(_ id: NodeID) -> Member { people.member(id) }

    /// The ids of the current members.
    public var memberIDs: Set<NodeID> { people.memberIDs }

    /// The node first seen under each nick, anywhere (see ``RoomPeople/knownNicks``).
    public var knownNicks: [String: NodeID] {
        get { people.knownNicks }
        set { people.knownNicks = newValue }
    }

    /// Calibration moments the reader has been told of in this room (normalised labels): a
    /// proposal whose name could spoil reaches the reader at its moment, like a line.
    public var labels: Set<CalibrationLabel> { pendingMarks.labels }

    /// Whether anyone proposed or marked `label` here, told to the reader yet or not: a mark of a
    /// label nobody did proposes it first.
    public func isProposed(_ label: CalibrationLabel) -> Bool { everyLabel.contains(label) }

    /// Whether the reader may be told of `label` now: it was told already, or the label names a
    /// moment anyone can name ahead (``SpoilerFreeMoment``).
    public func mayName(_ label: CalibrationLabel) -> Bool {
        labels.contains(label) || SpoilerFreeMoment.contains(label)
    }

    /// Labels this reader does not want to be prompted for.
    public var ignoredLabels: Set<CalibrationLabel> { pendingMarks.ignored }

    /// The moment one key marks now on this reader's console (see ``PendingMarks``).
    public func markOffer(now: WallTime) -> PendingMarks.Offer? { pendingMarks.offer(now: now) }

    /// Whether the reader's mark of `label` counts now (marked since its latest join, not taken
    /// back): what `/unmark` can take back.
    public func readerHasMarked(_ label: CalibrationLabel) -> Bool {
        calibrating.readerHasMarked(label)
    }

    /// Messages waiting to be shown.
    public var heldBackCount: Int { schedule.pendingCount }

    /// Per writer, how many of its events in this room the reader has been shown (or that show
    /// nothing: joins, marks of names told): never one still held back, so a count that rises says
    /// nothing of what is coming (`huddle status`).
    public var shownCounts: [NodeID: Int] {
        var counts: [NodeID: Int] = [:]
        for id in log.deliveryOrder where !schedule.isPending(id) { counts[id.origin, default: 0] += 1 }
        return counts
    }

    /// How long a message from someone the reader is not placed with waits (`nil`: the shield is
    /// off; see ``HoldBackSchedule/shield``).
    public var shield: TimeSpan? { schedule.shield }

    /// What the shield is made of: the reader's floor, and the room's widest spread when that is
    /// what it grew to (``HoldBackSchedule/shield``).
    public var shieldFloor: TimeSpan? { schedule.shieldFloor }
    public var widestSpread: Calibration.Spread? { schedule.widestSpread }

    /// Sets the shield's floor (the reader's `/shield`): waiting messages from writers the reader
    /// is not placed with are re-timed by the shield it makes, and those now due are shown.
    public mutating func setShield(_ shield: TimeSpan?, now: WallTime) -> [RoomOutput] {
        present(schedule.setShield(shield, now: now))
    }

    /// When to call ``wake(now:)`` next: a held-back message is due, or the log gives up on
    /// something that waited too long.
    public var nextWake: WallTime? {
        switch (schedule.nextWake, log.nextExpiry) {
        case (let release?, let expiry?): min(release, expiry)
        case (let release, let expiry): release ?? expiry
        }
    }

    /// The offsets of the current members, as ``RoomOutput/offsetsChanged(_:)`` reports them.
    public var offsetReport: OffsetReport {
        OffsetReport(entries: members.map { member in
            OffsetReport.Entry(
                member: member, offset: calibration.offset(of: member.id),
                behindReader: calibration.lag(of: member.id, behind: reader),
                heard: calibration.placement(of: member.id)?.sound)
        })
    }

    /// The last `count` chat messages shown to the reader, ordered by game time. A message still
    /// held back is not history yet: listing it would spoil it as surely as showing it.
    public func history(last count: Int) -> [Event] {
        let shown = log.delivered.filter { $0.body.isChat && !schedule.isPending($0.id) }
        return Array(calibration.historyOrder(shown).suffix(count))
    }

    /// What the reader's mark of `label` at `at` would do to its offset, before it is made: a
    /// mark that moves the reader far (a key pressed long after the moment) is asked about first
    /// (see ``WildMark``). `nil` when the mark is unremarkable.
    public func wildMark(_ label: CalibrationLabel, at: WallTime) -> WildMark? {
        let mark = Event(
            id: log.nextEventHeader(origin: reader).id, room: room, createdAt: at, context: VersionVector(),
            body: .mark(label: label.normalized), signature: [])
        let after = calibrating.solved(adding: mark)
        guard let placed = after.placement(of: reader) else { return nil }
        if let before = calibration.placement(of: reader), before.reference == placed.reference {
            let move = placed.offset - before.offset
            return move.magnitude > WildMark.largestMove ? WildMark(label: label, reach: .move(move)) : nil
        }
        // Not placed yet: how near the mark would put the reader to the nearest stream it places it
        // with. Far from one is no sign of a slip when the room's own streams run far apart (a
        // viewer 2 min behind everyone): far from all of them is.
        let apart = after.placements.keys.filter { $0 != reader && memberIDs.contains($0) }
            .compactMap { peer in after.lag(of: reader, behind: peer).map { (member(peer), $0) } }
            .min { ($0.1.magnitude, $0.0.id) < ($1.1.magnitude, $1.0.id) }
        guard let apart, apart.1.magnitude > WildMark.widestSpread else { return nil }
        return WildMark(label: label, reach: .apart(from: apart.0, behind: apart.1))
    }

    // MARK: Writing

    /// Makes, signs and applies this node's next event in the room. Returns the event (for the
    /// store and the peers) and what to show. Throws if the event would not be accepted on the
    /// wire (a text or label over its limit, a control character).
    /// `after`: the highest seq this node may have used in the room (``SeqLease``), when it lost
    /// some of its events; the event then starts past it.
    public mutating func compose(
        _ body: EventBody, now: WallTime, signer: NodeIdentity, after: UInt64 = 0
    ) throws(WireError) -> (event: Event, outputs: [RoomOutput]) {
        let header = log.nextEventHeader(origin: reader, after: after)
        let event = signer.sign(
            id: header.id, room: room, createdAt: now, context: header.context, previous: header.previous, body: body,
            sealedWith: key)
        try event.validate()
        return (event, receive(event, now: now))
    }

    /// `event` as this room reads it, or `nil` if it cannot belong here: a private room's event
    /// opened with the room's key (`nil` if it is not sealed with it), a public room's as it is
    /// (`nil` if it is sealed). Call before ``ingest(_:now:aheadAllowance:reserved:)``; the log never
    /// holds a sealed body.
    public func opened(_ event: Event) -> Event? {
        guard let key else { return event.body.isSealed ? nil : event }
        return event.seal != nil ? event : key.open(event)
    }

    /// Applies an event from anywhere (verified by the caller) and returns what became visible,
    /// as a batch of one (a late joiner's catch-up comes as one block however it is released).
    /// Duplicates and rejected events return nothing.
    public mutating func receive(_ event: Event, now: WallTime) -> [RoomOutput] {
        ingest([event], now: now).outputs
    }

    /// Applies an event from anywhere (verified by the caller): what the log did with it, and
    /// what became visible. `aheadAllowance` caps the bytes the log may hold past gaps;
    /// `reserved` says who may take the room's reserved origin slots (``RoomLogLimits/reservedOrigins``).
    public mutating func ingest(
        _ event: Event, now: WallTime, aheadAllowance: Int = .max, reserved: (NodeID) -> ReservedSeat = { _ in .unlimited }
    ) -> (outcome: RoomLog.InsertOutcome, outputs: [RoomOutput]) {
        let outcome = log.insert(event, now: now, aheadAllowance: aheadAllowance, reserved: reserved)
        switch outcome {
        case .accepted(let delivered), .unseated(let delivered):
            return (outcome, delivered.isEmpty ? [] : apply(delivered, now: now, announce: true))
        case .equivocation(let proof, let delivered):
            let outputs = contain(proof, now: now, announce: true) + apply(delivered, now: now, announce: true)
            return (outcome, outputs)
        case .duplicate, .rejected:
            return (outcome, [])
        }
    }

    /// Applies a batch of events that arrived together (a datagram, a pull's answer), each as
    /// ``ingest(_:now:aheadAllowance:reserved:)`` does, and says what became visible in one go: messages
    /// written before the reader joined come as one ``RoomOutput/earlier(_:)`` block, and the
    /// offsets as they stand after the batch, once (see ``isEarlier(_:)``). `aheadAllowance`
    /// and `reserved` are the batch's.
    public mutating func ingest(
        _ events: [Event], now: WallTime, aheadAllowance: Int = .max, reserved: (NodeID) -> ReservedSeat = { _ in .unlimited }
    ) -> (outcomes: [RoomLog.InsertOutcome], outputs: [RoomOutput]) {
        var outcomes: [RoomLog.InsertOutcome] = []
        var outputs: [RoomOutput] = []
        for event in events {
            let (outcome, shown) = ingest(event, now: now, aheadAllowance: aheadAllowance, reserved: reserved)
            outcomes.append(outcome)
            outputs += shown
        }
        return (outcomes, placedInGameOrder(Self.gathered(outputs)))
    }

    /// The late joiner's block as history lists it: game moments by the offsets the whole batch
    /// gave, messages and scores together in game order.
    private func placedInGameOrder(_ outputs: [RoomOutput]) -> [RoomOutput] {
        outputs.map { output -> RoomOutput in
            guard case .earlier(let items) = output else { return output }
            let placed = items.map { item in
                var item = item
                item.gameTime = calibration.gameTime(of: item.event)
                return item
            }
            return .earlier(placed.sorted {
                (calibration.historyKey(of: $0.event), $0.event.id) < (calibration.historyKey(of: $1.event), $1.event.id)
            })
        }
    }

    /// `outputs` with the messages written before the reader joined gathered into one block
    /// where the first of them was, and only the last report of offsets.
    static func gathered(_ outputs: [RoomOutput]) -> [RoomOutput] {
        let lastReport = outputs.lastIndex { if case .offsetsChanged = $0 { true } else { false } }
        var gathered: [RoomOutput] = []
        var block: Int?
        for (index, output) in outputs.enumerated() {
            switch output {
            case .earlier(let messages):
                if let block, case .earlier(let before) = gathered[block] {
                    gathered[block] = .earlier(before + messages)
                } else {
                    block = gathered.count
                    gathered.append(output)
                }
            case .offsetsChanged(let report):
                guard index == lastReport else { continue }
                // What earlier reports in the batch noticed is still news.
                var merged = report
                for case .offsetsChanged(let earlier) in outputs[..<index] { merged.noticed.formUnion(earlier.noticed) }
                gathered.append(.offsetsChanged(merged))
            default:
                gathered.append(output)
            }
        }
        return gathered
    }

    /// Whether `event` is history a late joiner catches up on, shown quietly: written before
    /// its writer knew the reader had joined (its context does not hold the reader's latest
    /// join), and more than ``earlierSlack`` before the join by the writer's clock. Both: a
    /// node that joins a moment after the reader writes without knowing of it, and its words
    /// are news.
    public func isEarlier(_ event: Event) -> Bool {
        event.origin != reader && event.context[reader] < readerJoinSeq
            && event.createdAt < readerJoinedAt - Self.earlierSlack
    }

    /// How long before the reader's join an event must have been written to be history: 5 s,
    /// beyond the skew of clocks kept by NTP, well under the span of a game.
    public static let earlierSlack = TimeSpan.seconds(5)

    /// Loads events from the store after a restart: nothing is announced again, and chat
    /// messages in `shown` are not shown again; messages not yet shown are scheduled as usual.
    /// `faults` (proofs of equivocation kept in the store) are applied first.
    public mutating func restore(
        _ events: [Event], faults: [Equivocation] = [], shown: Set<EventID>, now: WallTime
    ) -> [RoomOutput] {
        var delivered: [Event] = []
        // Only proofs about origins whose first event is stored count (see
        // ``RoomLog/Rejection/strangerConflict``): a store an older node let strangers fill
        // shrinks back to what a member did.
        let members = Set(events.filter { $0.seq == 1 }.map(\.origin))
        for proof in faults where members.contains(proof.origin) { log.quarantine(proof, now: now) }
        for event in events.compactMap(opened) {
            if case .accepted(let newly) = log.insert(event, now: now) { delivered += newly }
        }
        let unshown = delivered.filter { !shown.contains($0.id) }
        var outputs = apply(delivered.filter { !$0.body.isHeldBack }, now: now, announce: false)
        // Scores shown before the restart stand again, silently, in game order.
        for event in calibration.historyOrder(delivered.filter { $0.body.isScore && shown.contains($0.id) }) {
            _ = standScore(event)
        }
        outputs += apply(unshown.filter(\.body.isHeldBack), now: now, announce: true)
        return outputs
    }

    /// Shows whatever hold-back time has come, and gives up on events that waited too long for
    /// their context (see ``RoomLog/expire(now:)``).
    public mutating func wake(now: WallTime) -> [RoomOutput] {
        var outputs = present(schedule.releaseDue(now: now))
        if let expiry = log.nextExpiry, expiry <= now {
            let given = log.expire(now: now)
            tally.abandoned += given.abandoned.count
            tally.droppedAhead += given.dropped.count
            discarded += given.dropped
            outputs += apply(given.delivered, now: now, announce: true)
        }
        return outputs
    }

    /// Gives an origin the room refused a slot another chance (``RoomLog/reconsider(_:)``).
    public mutating func reconsider(_ origin: NodeID) {
        log.reconsider(origin)
    }

    /// The events dropped since the last call (see ``wake(now:)``), to delete from a store.
    public mutating func takeDiscarded() -> [EventID] {
        defer { discarded = [] }
        return discarded
    }

    // MARK: Pausing

    /// Whether the reader's stream is paused: nothing is shown until ``resume(now:)``.
    public var isPaused: Bool { schedule.isHolding }

    /// The reader paused its stream (DVR, a snack): no message is shown until it resumes, since
    /// its stream is not reaching anyone's moments. The reader's own messages still show.
    public mutating func pause() {
        schedule.hold(true)
    }

    /// The reader's stream plays again: shows what is due now. Compose the paused span as this
    /// reader's delay nudge first, so held messages are re-timed by it and peers ahead keep
    /// waiting for this stream.
    public mutating func resume(now: WallTime) -> [RoomOutput] {
        schedule.hold(false)
        return present(schedule.releaseDue(now: now))
    }

    /// Stops (or resumes) prompting for a calibration label on this node only.
    public mutating func ignore(label: CalibrationLabel, _ ignored: Bool = true) {
        calibrating.pendingMarks.ignore(label, ignored)
    }
}
