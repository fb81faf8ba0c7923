/// Everyone ``Membership`` knows, by id: one entry per peer, holding the peer as others may read
/// it (``Peer``) and everything SWIM keeps about it. A peer leaves in one line,
/// `peers[id] = nil`, and nothing about it stays behind: there is no other map keyed by peer to
/// keep in step.
///
/// Read it as a dictionary of peers: `peers[id]`, `peers.values`, `peers.keys`, `peers.count`.
public struct PeerTable: Sendable {
    /// The entries, by id.
    var entries: [NodeID: PeerEntry] = [:]

    /// The peer `id`, if known. Within the module, setting a peer keeps what is kept about it
    /// (or starts an empty entry for a new one), and setting `nil` drops the whole entry.
    public internal(set) subscript(id: NodeID) -> Peer? {
        get { entries[id]?.peer }
        set {
            guard let newValue else {
                entries[id] = nil
                return
            }
            if entries[id] != nil {
                entries[id]!.peer = newValue
            } else {
                entries[id] = PeerEntry(peer: newValue)
            }
        }
    }

    /// Every known peer, gone ones included, in no particular order.
    public var values: Values { Values(entries: entries.values) }
    /// Every known peer's id, in no particular order.
    public var keys: [NodeID: PeerEntry].Keys { entries.keys }
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// Each peer's `transform`ed, by id.
    public func mapValues<T>(_ transform: (Peer) throws -> T) rethrows -> [NodeID: T] {
        try entries.mapValues { try transform($0.peer) }
    }

    /// Changes every entry in place.
    mutating func updateEach(_ change: (inout PeerEntry) -> Void) {
        var index = entries.values.startIndex
        while index != entries.values.endIndex {
            change(&entries.values[index])
            entries.values.formIndex(after: &index)
        }
    }

    /// The ids of the entries that satisfy `condition`, sorted.
    func ids(where condition: (PeerEntry) -> Bool) -> [NodeID] {
        entries.compactMap { condition($0.value) ? $0.key : nil }.sorted()
    }

    /// The known peers, as a dictionary's values are: a view, not a copy.
    public struct Values: Collection, Sendable {
        let entries: [NodeID: PeerEntry].Values
        public var startIndex: [NodeID: PeerEntry].Index { entries.startIndex }
        public var endIndex: [NodeID: PeerEntry].Index { entries.endIndex }
        public func index(after index: [NodeID: PeerEntry].Index) -> [NodeID: PeerEntry].Index {
            entries.index(after: index)
        }
        public subscript(index: [NodeID: PeerEntry].Index) -> Peer { entries[index].peer }
    }
}

/// What ``Membership`` keeps about one peer beyond the ``Peer`` itself (SWIM's and Lifeguard's
/// bookkeeping, the checks of its address). All of it leaves with the peer.
public struct PeerEntry: Sendable {
    /// The peer, as others may read it.
    public internal(set) var peer: Peer
    /// Its suspicion, while it is suspect (at its current incarnation): since when, who raised it,
    /// who confirmed it.
    var suspicion: Membership.Suspicion?
    /// Alive, but it left a period unanswered; not suspected yet (nobody is told).
    var doubt: Membership.Doubt?
    /// Suspect or gone claims gossiped about it while it reaches this node directly: one is not
    /// enough.
    var rumour: Membership.Rumour?
    /// When it last reached this node itself: its own probe, ack (direct or forwarded), or another
    /// message of its own.
    var lastContact: MonotonicTime?
    /// When its state or incarnation last changed, for fresh gossip.
    var changedAt: MonotonicTime?
    /// When it was last probed while gone.
    var goneProbedAt: MonotonicTime?
    /// When it was last kept alive (`Membership+KeepAlive`).
    var keptAliveAt: MonotonicTime?
    /// The newest probe received from it (incarnation, sequence): an older one is a replay, and
    /// must not move it to wherever it was replayed from.
    var lastProbe: ProbeStamp?
    /// The check of whether it moved to another address (`Membership+Trust`), while one runs.
    var move: Membership.AddressCheck?
    /// When its last check of another address started (see `Membership.checkMove`).
    var addressCheckedAt: MonotonicTime?
    /// It has shown it speaks ``ProbeRequest`` and ``Nack`` (it sent one, or forwarded an ack for
    /// this node): only such helpers' silence counts against this node's health.
    var speaksIndirect = false
    /// To be probed at the next tick, outside the ring.
    var probeSoon = false

    init(peer: Peer) {
        self.peer = peer
    }
}
