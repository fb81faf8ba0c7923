/// One room's replicated log: every event this node holds, and the causal order it shows them in.
///
/// Events arrive in any order, duplicated, over UDP pushes and TCP pulls. The log stores each
/// once (by ``EventID``), tracks the contiguous prefix it holds per origin (``vector``), and
/// *delivers* an event only once everything in its causal context has been delivered, so the
/// ``deliveryOrder`` always respects causality. Inserting the same set of events in any order
/// gives the same stored set, the same vectors and the same delivered set.
///
/// The log does not check signatures: the shell verifies an event before inserting it.
///
/// ```swift
/// var log = RoomLog(room: "superbowl")
/// let outcome = log.insert(event)        // .accepted(delivered: [...]) or .rejected(...)
/// log.missing(for: peerVector, limit: 256)   // what a peer lacks, for anti-entropy
/// ```
public struct RoomLog: Sendable {
    /// How far past the contiguous prefix an origin's event may be and still be buffered. Pulls
    /// fill gaps in seq order and pushes arrive roughly in order, so a few batches' worth is
    /// plenty; it bounds what one origin can make the log hold without its context. (Many
    /// origins, each a new key, are bounded only by the room's membership: a limit to add if
    /// Huddle ever leaves the home network.)
    public static let maximumGap: UInt64 = 4 * UInt64(WireLimits.maxEventsPerBatch)

    public let room: String

    /// Per origin, events `seq 1...n` held contiguously: `prefix[o][i]` is seq `i + 1`.
    private var prefix: [NodeID: [Event]] = [:]
    /// Events that arrived ahead of a gap in their origin's sequence.
    private var ahead: [NodeID: [UInt64: Event]] = [:]
    /// For each origin, the highest contiguous seq held (the anti-entropy summary).
    public private(set) var vector = VersionVector()
    /// For each origin, the highest seq delivered (shown). Always ≤ ``vector``.
    public private(set) var deliveredVector = VersionVector()
    /// Every delivered event id, in the order it was delivered.
    public private(set) var deliveryOrder: [EventID] = []
    /// Origins whose contiguous prefix holds events not yet delivered.
    private var undeliveredOrigins: Set<NodeID> = []

    public init(room: String) {
        self.room = room
    }

    /// What happened to an inserted event.
    public enum InsertOutcome: Equatable, Sendable {
        /// Stored. `delivered` lists the events (this one and any it unblocked) that became
        /// deliverable, in causal order; it is empty if the event waits for its context.
        case accepted(delivered: [Event])
        /// Already held; nothing changed.
        case duplicate
        /// Not stored; nothing changed.
        case rejected(Rejection)
    }

    /// Why an event was refused.
    public enum Rejection: Equatable, Sendable, CustomStringConvertible {
        case wrongRoom(String)
        case zeroSequence
        /// The event's context does not name exactly its origin's previous event.
        case inconsistentContext
        /// Its seq is more than ``RoomLog/maximumGap`` past what the log holds of its origin.
        case tooFarAhead

        public var description: String {
            switch self {
            case .wrongRoom(let room): "event belongs to room \"\(room)\""
            case .zeroSequence: "sequence number 0"
            case .inconsistentContext: "causal context does not follow the origin's previous event"
            case .tooFarAhead: "sequence number too far ahead of what is held"
            }
        }
    }

    // MARK: Reading

    /// Number of events held (delivered or waiting).
    public var count: Int {
        prefix.values.reduce(0) { $0 + $1.count } + ahead.values.reduce(0) { $0 + $1.count }
    }

    /// Number of events held but not yet deliverable.
    public var waitingCount: Int { count - deliveryOrder.count }

    /// Whether the event is held (delivered or waiting).
    public func contains(_ id: EventID) -> Bool {
        vector.contains(id) || ahead[id.origin]?[id.seq] != nil
    }

    /// The held event with this id.
    public func event(_ id: EventID) -> Event? {
        if vector.contains(id), id.seq > 0 { return prefix[id.origin]?[Int(id.seq - 1)] }
        return ahead[id.origin]?[id.seq]
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
            for seq in range.seqs {
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

    /// Stores `event` if it is new and well-formed, then delivers whatever became deliverable.
    public mutating func insert(_ event: Event) -> InsertOutcome {
        guard event.room == room else { return .rejected(.wrongRoom(event.room)) }
        guard event.seq > 0 else { return .rejected(.zeroSequence) }
        guard event.context[event.origin] == event.seq - 1 else { return .rejected(.inconsistentContext) }
        if contains(event.id) { return .duplicate }
        let held = vector[event.origin]
        guard event.seq - held <= Self.maximumGap else { return .rejected(.tooFarAhead) }

        if event.seq == held + 1 {
            prefix[event.origin, default: []].append(event)
            absorbAhead(of: event.origin)
        } else {
            ahead[event.origin, default: [:]][event.seq] = event
        }
        return .accepted(delivered: deliverReady())
    }

    /// The next event this node originates: the following seq, with everything delivered so far
    /// as its context. Sign it and ``insert(_:)`` it.
    public func nextEventHeader(origin: NodeID) -> (id: EventID, context: VersionVector) {
        let seq = vector[origin] + 1
        var context = deliveredVector
        context[origin] = seq - 1
        return (EventID(origin: origin, seq: seq), context)
    }

    /// Moves buffered events that now continue the origin's contiguous prefix into it.
    private mutating func absorbAhead(of origin: NodeID) {
        var next = UInt64(prefix[origin]?.count ?? 0) + 1
        while let event = ahead[origin]?.removeValue(forKey: next) {
            prefix[origin, default: []].append(event)
            next += 1
        }
        if ahead[origin]?.isEmpty == true { ahead[origin] = nil }
        vector[origin] = next - 1
        undeliveredOrigins.insert(origin)
    }

    /// Delivers, until nothing changes, each origin's next held event whose context is delivered.
    /// Origins are visited in id order so a given arrival order always delivers the same way.
    private mutating func deliverReady() -> [Event] {
        var newlyDelivered: [Event] = []
        var progress = true
        while progress, !undeliveredOrigins.isEmpty {
            progress = false
            for origin in undeliveredOrigins.sorted() {
                let events = prefix[origin]!
                var next = Int(deliveredVector[origin])
                while next < events.count, deliveredVector.dominates(events[next].context) {
                    deliveredVector[origin] = events[next].seq
                    deliveryOrder.append(events[next].id)
                    newlyDelivered.append(events[next])
                    next += 1
                    progress = true
                }
                if next == events.count { undeliveredOrigins.remove(origin) }
            }
        }
        return newlyDelivered
    }
}
