/// Equivocation: an origin that signed two different events with one id.
///
/// The log keeps the faulty origin's events *below* the lowest proven seq (they are consistent
/// everywhere, or a lower proof will turn up) and drops the rest, delivered or not: every node
/// that learns the proof ends with the same events of that origin, whatever it showed before.
/// From then on the origin's events at or past that seq are refused, and no one else's event
/// waits for them (``isMet(_:)``).
extension RoomLog {
    /// Quarantines the proof's origin from its seq on (a lower proof than one already held moves
    /// the line down; a higher one changes nothing) and returns the events that were waiting for
    /// the dropped ones and are now delivered. The caller checked both signatures.
    @discardableResult
    public mutating func quarantine(_ proof: Equivocation, now: WallTime = .epoch) -> [Event] {
        guard proof.room == room else { return [] }
        let origin = proof.origin
        if let known = faults[origin], known.seq <= proof.seq { return [] }
        faults[origin] = proof
        let kept = Int(proof.seq - 1)

        if var events = prefix[origin], events.count > kept {
            events.removeSubrange(kept...)
            prefix[origin] = events.isEmpty ? nil : events
            chains[origin]?.removeSubrange(kept...)
            if chains[origin]?.isEmpty == true { chains[origin] = nil }
        }
        if let buffered = ahead[origin] {
            for (seq, event) in buffered where seq >= proof.seq {
                ahead[origin]![seq] = nil
                aheadBytes[origin, default: 0] -= event.encodedByteCount
                bufferedBytes -= event.encodedByteCount
            }
            if ahead[origin]?.isEmpty == true {
                ahead[origin] = nil
                aheadBytes[origin] = nil
            }
        }
        vector[origin] = min(vector[origin], UInt64(kept))
        if deliveredVector[origin] > UInt64(kept) {
            deliveryOrder.removeAll { $0.origin == origin && $0.seq >= proof.seq }
            abandoned = abandoned.filter { $0.origin != origin || $0.seq < proof.seq }
            deliveredVector[origin] = UInt64(kept)
        }
        dependents[origin] = [:]
        for events in prefix.values {
            for event in events { noteDependents(of: event) }
        }
        for events in ahead.values {
            for event in events.values { noteDependents(of: event) }
        }
        // Events of others that waited for the dropped ones may go now.
        undeliveredOrigins.formUnion(prefix.keys.filter { UInt64(prefix[$0]!.count) > deliveredVector[$0] })
        let delivered = deliverReady()
        updateStalls(now: now)
        return delivered
    }

    /// `remote` with each faulty origin's entry cut below its quarantine, and without the
    /// unseated origins (`RoomLog+Seats`): what this node could ever hold of what a peer's vector
    /// claims. Compare a peer's digest through this, or a peer that has not heard of the fault (or
    /// that seated an origin this node did not) would look forever like it holds events this node
    /// lacks.
    public func capped(_ remote: VersionVector) -> VersionVector {
        var capped = remote
        for (origin, proof) in faults where capped[origin] >= proof.seq {
            capped[origin] = proof.seq - 1
        }
        for origin in remote.origins where unseated.origins.contains(origin) {
            capped[origin] = 0
        }
        return capped
    }

    /// The proofs a peer with vector `remote` needs: it still holds events of a faulty origin at
    /// or past the quarantined seq (it has not seen the proof), or it holds events of others
    /// whose context names them (a late joiner: it will never get the dropped events, and without
    /// the proof those events would wait for them until it gives up).
    public func evidence(missingFrom remote: VersionVector) -> [Equivocation] {
        faults.values.filter { proof in
            remote[proof.origin] >= proof.seq
                || (dependents[proof.origin] ?? [:]).contains { remote[$0.key] >= $0.value }
        }.sorted { $0.origin < $1.origin }
    }

    /// The proofs a peer needs to deliver `events`: those of the faulty origins their contexts
    /// name at or past the quarantined seq.
    public func evidence(for events: some Sequence<Event>) -> [Equivocation] {
        guard !faults.isEmpty else { return [] }
        var needed: [NodeID: Equivocation] = [:]
        for event in events {
            for (origin, proof) in faults where needed[origin] == nil && event.context[origin] >= proof.seq {
                needed[origin] = proof
            }
        }
        return needed.values.sorted { $0.origin < $1.origin }
    }

    /// Records `event` as a dependent of each faulty origin whose dropped seqs its context names.
    mutating func noteDependents(of event: Event) {
        for (origin, proof) in faults where event.origin != origin && event.context[origin] >= proof.seq {
            let known = dependents[origin]?[event.origin] ?? .max
            dependents[origin, default: [:]][event.origin] = min(known, event.seq)
        }
    }
}
