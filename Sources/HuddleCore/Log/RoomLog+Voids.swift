/// Voids: seqs an origin made but lost to a power cut (see ``SeqLease``), which it says will never
/// come (``EventBody/voided(from:)``).
///
/// A node sends its own events once they are committed, not once they are synced: a `kill -9`
/// loses nothing committed, but a power cut can lose the last events it made, and a peer may hold
/// some of them. The node cannot sign those seqs again (a peer holding the first version would
/// take it for equivocation), so it starts past everything it may have used, and its first event
/// says so. Each log then holds, in the voided stretch, the events it has and a *hole* for each
/// one it does not: a hole counts as delivered, is never shown, served, stored or counted in a
/// chain fingerprint, and the event a hole stands for is a duplicate if it comes later. So every
/// log agrees past the void, and an event of the stretch some peer holds is never taken for a
/// second version.
extension Event {
    /// The place of a voided seq this log holds no event for. (No context: its place in the
    /// prefix orders it, and an empty vector costs no allocation, for up to ``SeqLease/block``
    /// holes a void.)
    static func hole(_ id: EventID, room: String) -> Event {
        Event(id: id, room: room, createdAtMilliseconds: 0, context: VersionVector(), body: .voided(from: id.seq), signature: [])
    }

    /// Whether this is a hole (``hole(_:room:)``): a void of nothing with no signature, which no
    /// event that passed the wire can be.
    public var isHole: Bool {
        guard signature.isEmpty, case .voided(let from) = body else { return false }
        return from == seq
    }

    /// The seqs a void voids: from its `from` up to its own seq.
    var voidedSeqs: Range<UInt64>? {
        guard case .voided(let from) = body, !isHole, from <= seq else { return nil }
        return from..<seq
    }
}

extension RoomLog {
    /// Whether the log holds a hole for `id` (a voided seq it holds no event for).
    public func isHole(_ id: EventID) -> Bool {
        vector.contains(id) && id.seq > 0 && prefix[id.origin]?.isHole(at: Int(id.seq - 1)) == true
    }

    /// Why a void would be refused: it must void seqs before its own, never the origin's join
    /// (seq 1: a void must not seat an origin that no log saw join, past the room's origin
    /// slots), and at most ``SeqLease/block`` of them (what an honest node can have leased and
    /// lost: one signed datagram must not make every log hold thousands of holes).
    func voidRejection(of event: Event) -> Rejection? {
        guard case .voided(let from) = event.body else { return nil }
        guard from >= 2, from <= event.seq, event.seq - from <= SeqLease.block else { return .invalidVoid }
        return nil
    }

    /// The chain fingerprint before `void`'s stretch, written over the stretch: what a log holds
    /// of it does not count, so logs that hold different parts of it agree from the void on.
    mutating func flattenChain(under void: Event) -> UInt64 {
        let previous = chains[void.origin]?.last ?? 0
        guard let seqs = void.voidedSeqs, !seqs.isEmpty, var chain = chains[void.origin],
            UInt64(chain.count) == void.seq - 1
        else { return previous }
        let base = seqs.lowerBound > 1 ? chain[Int(seqs.lowerBound - 2)] : 0
        for seq in seqs { chain[Int(seq - 1)] = base }
        chains[void.origin] = chain
        return base
    }
}
