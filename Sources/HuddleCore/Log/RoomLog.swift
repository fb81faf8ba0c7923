/// One room's replicated log: every event this node holds, and the causal order it shows them in.
///
/// Events arrive in any order, duplicated, over UDP pushes and TCP pulls. The log stores each
/// once (by ``EventID``), tracks the contiguous prefix it holds per origin (``vector``), and
/// *delivers* an event only once everything in its causal context has been delivered, so the
/// ``deliveryOrder`` always respects causality. Inserting the same set of events in any order
/// gives the same stored set, the same vectors and the same delivered set.
///
/// A peer can misbehave in three ways the log contains (each in its own file):
/// - **Equivocation** (`RoomLog+Faults`): two signed events with one id are proof of fault; the
///   origin is quarantined from that seq on, and its events stop gating anyone's delivery.
/// - **Waiting forever** (`RoomLog+Waiting`): an event whose gap or context is not filled within
///   ``RoomLogLimits/maxWait`` is given up on, so it cannot block the room.
/// - **Flooding** (``RoomLogLimits``): events held past a gap are bounded per origin, per room and
///   for strangers, and so is the number of origins.
/// Chain fingerprints (`RoomLog+Fingerprints`) let two nodes whose vectors agree find out that
/// they hold different events.
///
/// The log does not check signatures: the shell verifies an event before inserting it.
///
/// ```swift
/// var log = RoomLog(room: "superbowl")
/// let outcome = log.insert(event, now: now)   // .accepted(delivered: [...]), .equivocation(...), ...
/// log.missing(for: peerVector, limit: 256)    // what a peer lacks, for anti-entropy
/// ```
public struct RoomLog: Sendable {
    /// How far past the contiguous prefix an origin's event may be and still be buffered. Pulls
    /// fill gaps in seq order and pushes arrive roughly in order, so a few batches' worth is
    /// plenty.
    public static let maximumGap: UInt64 = 4 * UInt64(WireLimits.maxEventsPerBatch)

    public let room: String
    public var limits: RoomLogLimits

    /// Per origin, events `seq 1...n` held contiguously, packed: `prefix[o][i]` is seq `i + 1`.
    var prefix: [NodeID: PackedEvents] = [:]
    /// Per origin, the chain fingerprint after each event of `prefix` (see `RoomLog+Fingerprints`).
    var chains: [NodeID: ChunkedArray<UInt64>] = [:]
    /// Events that arrived ahead of a gap in their origin's sequence, and their encoded bytes.
    var ahead: [NodeID: [UInt64: Event]] = [:]
    var aheadBytes: [NodeID: Int] = [:]
    /// Bytes of all events held ahead of a gap, every origin together.
    public internal(set) var bufferedBytes = 0
    /// For each origin, the highest contiguous seq held (the anti-entropy summary).
    public internal(set) var vector = VersionVector()
    /// For each origin, the highest seq delivered (shown) or given up on. Always ≤ ``vector``.
    public internal(set) var deliveredVector = VersionVector()
    /// Every delivered event id, in the order it was delivered.
    public internal(set) var deliveryOrder = DeliveryOrder()
    /// Origins whose contiguous prefix holds events not yet delivered.
    var undeliveredOrigins: Set<NodeID> = []
    /// Proof of equivocation per faulty origin: the lowest seq it is known to have signed twice.
    public internal(set) var faults: [NodeID: Equivocation] = [:]
    /// Events held but given up on (their context never came): they count as delivered for the
    /// causal order, and are never shown.
    public internal(set) var abandoned: Set<EventID> = []
    /// Per waiting origin, what it waits on and since when (see `RoomLog+Waiting`).
    var stalls: [NodeID: Stall] = [:]
    /// Per faulty origin, per other origin, the lowest seq of that origin's held events whose
    /// context names the faulty origin's dropped seqs: a peer holding it needs the proof to
    /// deliver it (see `RoomLog+Faults`).
    var dependents: [NodeID: [NodeID: UInt64]] = [:]
    /// Conflicts seen from origins whose join is not held (see ``Rejection/strangerConflict``).
    var pendingProofs: [NodeID: Equivocation] = [:]
    /// Origins whose first event found no slot (see `RoomLog+Seats`).
    var unseated = UnseatedOrigins()
    /// The origins seated in reserved slots, and the seat each took (``ReservedSeat``).
    var reservedSeats: [NodeID: ReservedSeat] = [:]

    public init(room: String, limits: RoomLogLimits = RoomLogLimits()) {
        self.room = room
        self.limits = limits
    }

    /// What happened to an inserted event.
    public enum InsertOutcome: Equatable, Sendable {
        /// Stored. `delivered` lists the events (this one and any it unblocked) that became
        /// deliverable, in causal order; it is empty if the event waits for its context.
        case accepted(delivered: [Event])
        /// Already held; nothing changed.
        case duplicate
        /// A different event with this id is held: the origin equivocated. The log quarantined it
        /// (see ``quarantine(_:)``); `delivered` lists events that no longer wait for it. Also the
        /// outcome of an origin's first event when a conflict it made as a stranger was pending
        /// (see ``Rejection/strangerConflict``): the event is stored, and the proof with it.
        case equivocation(Equivocation, delivered: [Event])
        /// Not stored; nothing changed.
        case rejected(Rejection)
        /// Not stored: the origin's first event found no slot (``Rejection/tooManyOrigins``). The
        /// origin is remembered as unseated, so no event waits for it; `delivered` lists the
        /// events that were waiting for it and are delivered now (see `RoomLog+Seats`).
        case unseated(delivered: [Event])
    }

    /// Why an event was refused.
    public enum Rejection: Equatable, Sendable, CustomStringConvertible {
        case wrongRoom(String)
        case zeroSequence
        /// The event's context does not name exactly its origin's previous event.
        case inconsistentContext
        /// Its seq is more than ``RoomLog/maximumGap`` past what the log holds of its origin.
        case tooFarAhead
        /// Its origin is quarantined from this seq on.
        case quarantined
        /// Holding it would pass a ``RoomLogLimits`` bound (named).
        case overBudget(String)
        /// The room already holds events of ``RoomLogLimits/maxOrigins`` origins, or of all but
        /// the ``RoomLogLimits/reservedOrigins`` and this origin may not take a reserved slot.
        case tooManyOrigins
        /// A second version of an event from an origin whose first event (its join) this log
        /// does not hold: not a proof of equivocation yet, since fresh keys cost nothing and such
        /// proofs would pile up without end. The log remembers it (in memory, a bounded number:
        /// ``RoomLogLimits/maxPendingProofs``) and proves the fault if the origin's join comes;
        /// it is forgotten with the origin's waiting events.
        case strangerConflict
        /// A void (``EventBody/voided(from:)``) of seqs not before it, of the origin's join, or of
        /// more than ``SeqLease/block`` of them.
        case invalidVoid

        public var description: String {
            switch self {
            case .wrongRoom(let room): "event belongs to room \"\(room)\""
            case .zeroSequence: "sequence number 0"
            case .inconsistentContext: "causal context does not follow the origin's previous event"
            case .tooFarAhead: "sequence number too far ahead of what is held"
            case .quarantined: "its origin signed two different events with one id"
            case .overBudget(let what): "over the limit of \(what)"
            case .tooManyOrigins: "the room holds events of too many origins"
            case .strangerConflict: "a second version of an event from an origin that never joined"
            case .invalidVoid: "it voids its origin's join, more than one lease, or seqs not before it"
            }
        }
    }

    // MARK: Reading

    /// Number of events held (delivered or waiting).
    public var count: Int {
        prefix.values.reduce(0) { $0 + $1.count } + ahead.values.reduce(0) { $0 + $1.count }
    }

    /// Number of events held but neither delivered nor given up on.
    public var waitingCount: Int {
        var waiting = ahead.values.reduce(0) { $0 + $1.count }
        for origin in undeliveredOrigins {
            waiting += (prefix[origin]?.count ?? 0) - Int(deliveredVector[origin])
        }
        return waiting
    }

    /// Whether the event is held (delivered or waiting).
    public func contains(_ id: EventID) -> Bool {
        vector.contains(id) || ahead[id.origin]?[id.seq] != nil
    }

    /// The held event with this id.
    public func event(_ id: EventID) -> Event? {
        if vector.contains(id), id.seq > 0 {
            guard let events = prefix[id.origin], !events.isHole(at: Int(id.seq - 1)) else { return nil }
            return events[Int(id.seq - 1)]
        }
        return ahead[id.origin]?[id.seq]
    }

    /// Whether this exact event is held, in the log or as half of a proof of equivocation: a copy
    /// needs no signature check (and a proof pushed again by gossip is no news).
    public func holds(_ event: Event) -> Bool {
        if self.event(event.id) == event { return true }
        guard let proof = faults[event.origin] else { return false }
        return proof.first == event || proof.second == event
    }

    /// Every delivered event, in delivery (causal) order.
    public var delivered: [Event] { deliveryOrder.map { event($0)! } }

    /// Events this log holds contiguously that a peer with vector `remote` lacks: at most `limit`
    /// of them, ascending by origin then seq. Repeat with the peer's new vector to page through a
    /// long history; the peer's log buffers whatever arrives before its context.
    public func missing(for remote: VersionVector, limit: Int = .max) -> [Event] {
        var out: [Event] = []
        for range in vector.ranges(missingFrom: remote) {
            guard let events = prefix[range.origin] else { continue }
            for seq in range.seqs where !events.isHole(at: Int(seq - 1)) {
                guard out.count < limit else { return out }
                out.append(events[Int(seq - 1)])
            }
        }
        return out
    }

    /// Events a peer with vector `remote` misses, packed for one message: at most `maxEvents` of
    /// them and at most `maxBytes` of encoded events (but always one, if any is missing), in the
    /// order of ``missing(for:limit:)``; `more` says whether the peer misses further events.
    ///
    /// ```swift
    /// let (events, more) = log.batch(missingFor: request.have, maxEvents: 1024, maxBytes: 2_000_000)
    /// ```
    public func batch(missingFor remote: VersionVector, maxEvents: Int, maxBytes: Int) -> (events: [Event], more: Bool) {
        let wanted = max(1, maxEvents)
        let candidates = missing(for: remote, limit: wanted + 1)
        var batch: [Event] = []
        var bytes = 0
        for event in candidates.prefix(wanted) {
            bytes += event.encodedByteCount
            if bytes > maxBytes, !batch.isEmpty { return (batch, true) }
            batch.append(event)
        }
        return (batch, candidates.count > batch.count)
    }

    // MARK: Writing

    /// Why `event` would be refused, checked without changing anything and without its signature:
    /// the shell drops such events before spending a signature check on them. `nil` means it
    /// would be stored, or (a different event with a held id) is evidence of equivocation.
    ///
    /// `held` is how far the origin's prefix will reach when the event is inserted, if events
    /// before it in the same batch extend it (a pull brings an origin's events in seq order):
    /// an event that continues them is not past a gap. `reserved` says whether an origin may
    /// take one of the room's last ``RoomLogLimits/reservedOrigins`` slots (by default every
    /// origin may: restoring from the store, this node's own events).
    public func rejection(
        of event: Event, held: UInt64? = nil, aheadAllowance: Int = .max, reserved: (NodeID) -> ReservedSeat = { _ in .unlimited }
    ) -> Rejection? {
        guard event.room == room else { return .wrongRoom(event.room) }
        guard event.seq > 0 else { return .zeroSequence }
        guard event.context[event.origin] == event.seq - 1 else { return .inconsistentContext }
        if let rejection = voidRejection(of: event) { return rejection }
        if let fault = faults[event.origin], event.seq >= fault.seq { return .quarantined }
        if contains(event.id) { return nil }
        let held = max(held ?? 0, vector[event.origin])
        // An event below `held` continues the batch's own events (or is another version of one):
        // not past a gap. (Subtracting first would trap on it.)
        guard event.seq > held else { return nil }
        guard event.seq - held <= Self.maximumGap else { return .tooFarAhead }
        if prefix[event.origin] == nil, event.seq == held + 1 {
            if originCount >= limits.maxOrigins || (isPastOpenSlots && !admits(reserved(event.origin))) {
                return .tooManyOrigins
            }
        }
        guard event.seq > held + 1 else { return nil }
        return aheadRejection(of: event, held: held, allowance: aheadAllowance)
    }

    /// Stores `event` if it is new and well-formed, then delivers whatever became deliverable.
    /// `now` (the wall clock) starts the clock on anything that has to wait (see ``expire(now:)``);
    /// `aheadAllowance` caps ``bufferedBytes`` for this insert (a node's budget across rooms);
    /// `reserved` is as in ``rejection(of:held:aheadAllowance:reserved:)``.
    public mutating func insert(
        _ event: Event, now: WallTime = .epoch, aheadAllowance: Int = .max, reserved: (NodeID) -> ReservedSeat = { _ in .unlimited }
    ) -> InsertOutcome {
        if let held = self.event(event.id), event.room == room {
            guard let proof = Equivocation(held, event) else { return .duplicate }
            // Only a member's equivocation is proven and kept: at most one per origin slot. A
            // stranger's waits for its join, within a budget.
            guard prefix[event.origin] != nil else {
                let hasSpace = pendingProofs.count < limits.maxPendingProofs
                if pendingProofs[event.origin].map({ proof.seq < $0.seq }) ?? hasSpace {
                    pendingProofs[event.origin] = proof
                }
                return .rejected(.strangerConflict)
            }
            return .equivocation(proof, delivered: quarantine(proof, now: now))
        }
        // A voided seq: whatever came for it is not a second version of anything.
        if isHole(event.id) { return .duplicate }
        if let rejection = rejection(of: event, aheadAllowance: aheadAllowance, reserved: reserved) {
            if rejection == .tooManyOrigins { return .unseated(delivered: unseat(event.origin, now: now)) }
            return .rejected(rejection)
        }

        if event.seq == vector[event.origin] + 1 {
            if event.seq == 1 {
                unseated.remove(event.origin)
                if isPastOpenSlots, case let seat = reserved(event.origin), seat.host != nil { reservedSeats[event.origin] = seat }
            }
            append(event)
            absorbAhead(of: event.origin)
            // The origin joined: a conflict seen while it was a stranger is proof now.
            if let proof = pendingProofs.removeValue(forKey: event.origin) {
                // Quarantining first, so that nothing at or past the proof is ever delivered.
                return .equivocation(proof, delivered: quarantine(proof, now: now))
            }
        } else {
            ahead[event.origin, default: [:]][event.seq] = event
            aheadBytes[event.origin, default: 0] += event.encodedByteCount
            bufferedBytes += event.encodedByteCount
            // A void that reaches back to the prefix fills its stretch with holes at once.
            if let seqs = event.voidedSeqs, seqs.lowerBound <= vector[event.origin] + 1 { absorbAhead(of: event.origin) }
        }
        noteDependents(of: event)
        let delivered = deliverReady()
        updateStalls(now: now)
        return .accepted(delivered: delivered)
    }

    /// The next event this node originates: the following seq, with everything delivered so far
    /// as its context. Sign it and ``insert(_:now:aheadAllowance:reserved:)`` it.
    /// `after`: the highest seq the origin may have used already (``SeqLease``), when past the
    /// prefix: the event then voids what lies between (``EventBody/voided(from:)``).
    /// `previous` links it to the origin's event before it, when this log holds that one (not
    /// past a void).
    public func nextEventHeader(
        origin: NodeID, after: UInt64 = 0
    ) -> (id: EventID, context: VersionVector, previous: EventDigest) {
        let seq = max(vector[origin], after) + 1
        var context = deliveredVector
        context[origin] = seq - 1
        let previous = event(EventID(origin: origin, seq: seq - 1))?.digest ?? .none
        return (EventID(origin: origin, seq: seq), context, previous)
    }

    /// Origins whose first event is held: members, or former members. Strangers (only events
    /// past a gap) do not count; their budget is bytes (``RoomLogLimits/maxRoomAheadBytes``).
    var originCount: Int { prefix.count }

    /// Whether the open origin slots are all taken: a new origin needs a reserved one.
    var isPastOpenSlots: Bool { originCount >= limits.maxOrigins - limits.reservedOrigins }

    /// Whether an origin with `seat` may take a reserved slot now.
    func admits(_ seat: ReservedSeat) -> Bool {
        switch seat {
        case .refused: false
        case .unlimited: true
        case .announced(let host): reservedSeats.values.count { $0.host == host } < limits.reservedPerHost
        case .host(let host):
            reservedSeats.values.count { $0.host == host } < limits.reservedPerHost
                && reservedSeats.values.count { if case .host = $0 { true } else { false } } < limits.reservedForProven
        }
    }

    private func aheadRejection(of event: Event, held prefixEnd: UInt64, allowance: Int) -> Rejection? {
        let origin = event.origin
        let bytes = event.encodedByteCount
        let held = ahead[origin]?.count ?? 0
        let heldBytes = aheadBytes[origin] ?? 0
        if prefixEnd == 0 {
            if held >= limits.maxStrangerEvents || heldBytes + bytes > limits.maxStrangerBytes {
                return .overBudget("events held from an origin whose join is not held")
            }
            // At most so many strangers at once (``ahead`` holds at most that many, and the
            // room's origins past gaps: counting them is cheap).
            if held == 0, ahead.keys.count(where: { prefix[$0] == nil }) >= limits.maxStrangerOrigins {
                return .overBudget("events held from too many origins whose join is not held")
            }
        } else if held >= limits.maxAheadEvents || heldBytes + bytes > limits.maxAheadBytes {
            return .overBudget("events held past a gap in one origin's seqs")
        }
        if bufferedBytes + bytes > min(limits.maxRoomAheadBytes, allowance) {
            return .overBudget("bytes held past gaps")
        }
        return nil
    }

    /// Appends the origin's next event to its prefix, extending its chain fingerprint.
    private mutating func append(_ event: Event) {
        let previous = flattenChain(under: event)
        prefix[event.origin, default: PackedEvents(origin: event.origin, room: room)].append(event)
        chains[event.origin, default: []].append(Self.chain(previous, event))
    }

    /// Moves buffered events that now continue the origin's contiguous prefix into it.
    /// A seq no event is held for, inside the stretch of a void held ahead, becomes a hole.
    private mutating func absorbAhead(of origin: NodeID) {
        var next = UInt64(prefix[origin]?.count ?? 0) + 1
        let voided = ahead[origin]?.values.compactMap(\.voidedSeqs) ?? []
        while true {
            if let event = ahead[origin]?.removeValue(forKey: next) {
                aheadBytes[origin, default: 0] -= event.encodedByteCount
                bufferedBytes -= event.encodedByteCount
                append(event)
            } else if voided.contains(where: { $0.contains(next) }) {
                append(.hole(EventID(origin: origin, seq: next), room: room))
            } else {
                break
            }
            next += 1
        }
        if ahead[origin]?.isEmpty == true {
            ahead[origin] = nil
            aheadBytes[origin] = nil
        }
        vector[origin] = next - 1
        undeliveredOrigins.insert(origin)
    }

    /// Whether everything in `context` is delivered. A faulty origin's entries count only below
    /// its quarantine: events past it will never be delivered, so they gate nothing.
    func isMet(_ context: VersionVector) -> Bool {
        for origin in context.origins {
            let seq = context[origin]
            if unseated.origins.contains(origin) { continue }
            let needed = faults[origin].map { min(seq, $0.seq - 1) } ?? seq
            if deliveredVector[origin] < needed { return false }
        }
        return true
    }

    /// Delivers, until nothing changes, each origin's next held event whose context is delivered.
    /// Origins are visited in id order so a given arrival order always delivers the same way.
    mutating func deliverReady() -> [Event] {
        var newlyDelivered: [Event] = []
        var progress = true
        while progress, !undeliveredOrigins.isEmpty {
            progress = false
            for origin in undeliveredOrigins.sorted() {
                guard let events = prefix[origin] else {
                    undeliveredOrigins.remove(origin)
                    continue
                }
                var next = Int(deliveredVector[origin])
                while next < events.count {
                    let event = events[next]
                    guard isMet(event.context) else { break }
                    deliveredVector[origin] = event.seq
                    if !event.isHole {
                        deliveryOrder.append(event.id)
                        newlyDelivered.append(event)
                    }
                    next += 1
                    progress = true
                }
                if next >= events.count { undeliveredOrigins.remove(origin) }
            }
        }
        return newlyDelivered
    }
}
