/// The signature checks a batch of events needs when its events link (``Event/previous``): one
/// for the top of each run of an origin's consecutive seqs, none for the events below it.
///
/// An event is authentic when its own signature checks, or when the origin's next event in the
/// room is authentic and names this one's ``Event/digest`` as its ``Event/previous``: the
/// origin signed that digest, and only this event has it. A pull of a busy origin's hour then
/// costs one Ed25519 check per batch, not one per event; a lone event (a push of one line) costs
/// its own check, as before.
///
/// The check comes in two steps, so that the shell can spread the signature checks over its
/// cores: ``needed`` are the events whose signatures must check if every one does (the tops of
/// the runs, and every event no other one links to); ``authentic(given:)`` takes their verdicts
/// and walks each run down from its top. An event whose link turns out not to hold (its successor's
/// signature failed) has its own signature checked then, so a batch costs at most one check per
/// event, as it did before links.
///
/// ```swift
/// let check = LinkedCheck(events)
/// let verdicts = check.needed.map { events[$0].hasValidSignature }  // on every core
/// let valid = check.authentic(given: verdicts)
/// ```
public struct LinkedCheck: Sendable {
    /// The batch, in its order.
    public let events: [Event]
    /// Indexes into ``events`` of the signatures to check, ascending.
    public let needed: [Int]
    /// For each event, the indexes of the events of its origin's next seq in the room (usually
    /// none or one; two when the origin equivocated there).
    private let successors: [[Int]]
    /// For each event with a successor that names a link, its digest.
    private let digests: [EventDigest?]
    /// The events' indexes by (room, origin), each run from the highest seq down.
    private let descending: [[Int]]

    private struct Origin: Hashable {
        let room: String
        let origin: NodeID
    }

    public init(_ events: [Event]) {
        self.events = events
        guard events.count > 1 else {
            // A push of one line: its own check, and nothing to group.
            needed = Array(events.indices)
            successors = events.map { _ in [] }
            digests = events.map { _ in nil }
            descending = [needed]
            return
        }
        var bySeq: [Origin: [UInt64: [Int]]] = [:]
        for (index, event) in events.enumerated() {
            bySeq[Origin(room: event.room, origin: event.origin), default: [:]][event.seq, default: []].append(index)
        }
        var successors = [[Int]](repeating: [], count: events.count)
        var digests = [EventDigest?](repeating: nil, count: events.count)
        var linked = [Bool](repeating: false, count: events.count)
        var descending: [[Int]] = []
        for seqs in bySeq.values {
            for (seq, indexes) in seqs {
                guard seq < .max, let next = seqs[seq + 1] else { continue }
                let links = next.filter { !events[$0].previous.isNone }
                guard !links.isEmpty else { continue }
                for index in indexes {
                    successors[index] = links
                    let digest = events[index].digest
                    digests[index] = digest
                    linked[index] = links.contains { events[$0].previous == digest }
                }
            }
            descending.append(seqs.keys.sorted(by: >).flatMap { seqs[$0]! })
        }
        self.successors = successors
        self.digests = digests
        self.descending = descending
        needed = events.indices.filter { !linked[$0] }
    }

    /// The authentic events, in the batch's order, given the verdicts of ``needed`` (in its
    /// order). Checks any other signature it then needs (only when a link failed).
    public func authentic(given verdicts: [Bool]) -> [Event] {
        precondition(verdicts.count == needed.count, "one verdict for each needed check")
        var verdict = [Bool?](repeating: nil, count: events.count)
        for (index, valid) in zip(needed, verdicts) { verdict[index] = valid }
        var valid = [Bool](repeating: false, count: events.count)
        for run in descending {
            for index in run {
                let vouched = digests[index].map { digest in
                    successors[index].contains { valid[$0] && events[$0].previous == digest }
                } ?? false
                valid[index] = vouched || (verdict[index] ?? events[index].hasValidSignature)
            }
        }
        return zip(events, valid).compactMap { $1 ? $0 : nil }
    }

    /// The authentic events of `events`, in their order, checked on this thread.
    public static func valid(_ events: [Event]) -> [Event] {
        let check = LinkedCheck(events)
        return check.authentic(given: check.needed.map { events[$0].hasValidSignature })
    }
}
