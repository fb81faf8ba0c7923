/// Bounded waiting: nothing the log holds waits forever.
///
/// An event waits for a gap in its origin's seqs, or for a causal context the log does not hold.
/// Repair fills either within seconds when the missing events exist: whoever made an event holds
/// its context. When they do not (a peer signed a context that can never be met, or sent seqs
/// past a gap nobody can fill), the log gives up after ``RoomLogLimits/maxWait``:
/// - the first event waiting for its context is **abandoned**: it counts as delivered, so events
///   that name it in their context go on, but it is never shown;
/// - events held past a gap are **dropped**: anti-entropy brings them again if they were real.
extension RoomLog {
    /// What an origin waits on: the first seq held but not deliverable, or the first missing seq
    /// of a gap; and since when.
    struct Stall: Hashable, Sendable {
        var seq: UInt64
        var isGap: Bool
        var since: WallTime
    }

    /// What ``expire(now:)`` gave up on.
    public struct Expiry: Equatable, Sendable {
        /// Events that waited for their context too long; never shown.
        public var abandoned: [Event] = []
        /// Events held past a gap that were dropped (no longer held).
        public var dropped: [EventID] = []
        /// Events that no longer wait for the abandoned ones, in causal order.
        public var delivered: [Event] = []

        public var isEmpty: Bool { abandoned.isEmpty && dropped.isEmpty && delivered.isEmpty }
    }

    /// When ``expire(now:)`` will next give up on something, if anything waits.
    public var nextExpiry: WallTime? {
        stalls.values.map(\.since).min().map { $0 + limits.maxWait }
    }

    /// Gives up on whatever has waited ``RoomLogLimits/maxWait`` or longer at `now`.
    public mutating func expire(now: WallTime) -> Expiry {
        var expiry = Expiry()
        for (origin, stall) in stalls.sorted(by: { $0.key < $1.key }) where now - stall.since >= limits.maxWait {
            if stall.isGap {
                for event in ahead.removeValue(forKey: origin)?.values ?? [:].values {
                    bufferedBytes -= event.encodedByteCount
                    expiry.dropped.append(event.id)
                }
                aheadBytes[origin] = nil
                pendingProofs[origin] = nil
            } else if let events = prefix[origin], stall.seq >= 1, stall.seq <= UInt64(events.count) {
                let event = events[Int(stall.seq - 1)]
                deliveredVector[origin] = stall.seq
                abandoned.insert(event.id)
                expiry.abandoned.append(event)
            }
        }
        expiry.dropped.sort()
        guard !expiry.abandoned.isEmpty || !expiry.dropped.isEmpty else { return expiry }
        expiry.delivered = deliverReady()
        updateStalls(now: now)
        return expiry
    }

    /// Restarts the wait clock of each origin whose first waiting event changed.
    mutating func updateStalls(now: WallTime) {
        var current: [NodeID: Stall] = [:]
        for origin in undeliveredOrigins.union(ahead.keys) {
            let stall: Stall
            if UInt64(prefix[origin]?.count ?? 0) > deliveredVector[origin] {
                stall = Stall(seq: deliveredVector[origin] + 1, isGap: false, since: now)
            } else if ahead[origin] != nil {
                stall = Stall(seq: vector[origin] + 1, isGap: true, since: now)
            } else {
                continue
            }
            if let old = stalls[origin], old.seq == stall.seq, old.isGap == stall.isGap {
                current[origin] = old
            } else {
                current[origin] = stall
            }
        }
        stalls = current
    }
}
