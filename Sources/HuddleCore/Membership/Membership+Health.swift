/// The Lifeguard half of ``Membership`` (Dadgar, Phillips and Currey, 2018): local health that
/// stretches this node's own timing when it looks slow itself, doubt before suspicion, and a
/// suspicion timeout that shrinks as other members confirm it.
extension Membership {
    /// A suspicion of one peer at its current incarnation.
    struct Suspicion: Hashable, Sendable {
        /// When it began here.
        var since: MonotonicTime
        /// Who raised it: this node (its own probes went unanswered) or the member whose gossip
        /// brought it. Not a confirmation.
        var accuser: NodeID
        /// Other members that independently said the same: gossiped the suspicion (or the peer
        /// gone), or could not reach the peer when asked to probe it.
        var confirmedBy: Set<NodeID> = []
    }

    /// An alive peer that left a period unanswered: probed in every period, suspected once it has
    /// been silent for ``MembershipConfig/silenceBeforeSuspicion``.
    struct Doubt: Hashable, Sendable {
        /// When the first unanswered probe of the silence went out.
        var since: MonotonicTime
        /// Members that could not reach it either (their nacks, their gossip), carried into the
        /// suspicion as confirmations.
        var confirmedBy: Set<NodeID> = []
    }

    /// Suspect or gone claims about a peer this node heard from directly a moment ago.
    struct Rumour: Hashable, Sendable {
        var incarnation: UInt64
        var state: PeerState
        var senders: Set<NodeID>
        var since: MonotonicTime
    }

    /// One indirect probe: the peer to reach and the send time the helpers' probes carry.
    struct IndirectKey: Hashable, Sendable {
        var target: NodeID
        var sentAt: MonotonicTime
    }

    /// The helpers asked for one ``IndirectKey``, and when.
    struct IndirectRequest: Hashable, Sendable {
        var helpers: Set<NodeID>
        var at: MonotonicTime
    }

    /// The factor this node's own timing is stretched by: 1 + its health score.
    public var healthMultiplier: Int64 { Int64(1 + health) }

    /// The protocol period, stretched by local health.
    var periodLength: TimeSpan { config.probeInterval * healthMultiplier }

    /// How long a probe waits for its ack before the next attempt (and the helpers) go out: the
    /// period over its attempts. Also how long a helper waits before it nacks.
    var probeTimeout: TimeSpan { periodLength / Int64(config.probeAttempts) }

    /// The silence that makes a doubted peer suspect, stretched by local health.
    var silenceBeforeSuspicion: TimeSpan { config.silenceBeforeSuspicion * healthMultiplier }

    /// A wake-up this much later than asked for means this node was not running: it is slow.
    var lateTick: TimeSpan { max(.microseconds(1), config.probeInterval / Int64(config.probeAttempts) / 2) }

    mutating func raiseHealth() { health = min(config.maxHealth, health + 1) }
    mutating func lowerHealth() { health = max(0, health - 1) }

    /// How long peer `id`'s suspicion lasts, after Lifeguard: with C confirmations out of K that
    /// could come, `max(min, max − (max − min) · log(C + 1) / log(K + 1))`; K is
    /// ``MembershipConfig/indirectProbes``, or fewer when fewer other peers are alive.
    func suspicionTimeout(of id: NodeID) -> TimeSpan {
        let longest = config.suspicionTimeout
        let shortest = config.minSuspicionTimeout
        let others = peers.values.filter { $0.state == .alive && $0.id != id }.count
        let expected = min(config.indirectProbes, others)
        guard expected > 0, longest > shortest else { return shortest }
        let confirmed = min(peers.entries[id]?.suspicion?.confirmedBy.count ?? 0, expected)
        let fraction = Double(confirmed + 1).binaryLogarithm / Double(expected + 1).binaryLogarithm
        return max(shortest, longest - .microseconds(Int64(Double((longest - shortest).microseconds) * fraction)))
    }

    /// When peer `id`'s suspicion runs out (`nil` if it is not suspect).
    func suspicionEnds(_ id: NodeID) -> MonotonicTime? {
        peers.entries[id]?.suspicion.map { $0.since + suspicionTimeout(of: id) }
    }

    /// Member `member` says peer `id` is not answering: a confirmation of our suspicion or doubt.
    mutating func confirm(_ id: NodeID, by member: NodeID) {
        guard member != me, member != id else { return }
        if var suspicion = peers.entries[id]?.suspicion, member != suspicion.accuser {
            suspicion.confirmedBy.insert(member)
            peers.entries[id]?.suspicion = suspicion
        }
        peers.entries[id]?.doubt?.confirmedBy.insert(member)
    }

    /// Whether peer `id` reached this node itself within the silence before suspicion: then one
    /// gossip record saying it is suspect or gone is not believed.
    func heardDirectly(_ id: NodeID, now: MonotonicTime) -> Bool {
        guard let contact = peers.entries[id]?.lastContact else { return false }
        return (now - contact) < silenceBeforeSuspicion
    }

    /// A period of ours to `peer` ended unanswered: it is doubted from the period's start on (at
    /// once suspect when no silence is asked for, as in plain SWIM).
    mutating func periodFailed(_ peer: Peer, startedAt: MonotonicTime, now: MonotonicTime) -> [MembershipDirective] {
        if peers.entries[peer.id]?.doubt == nil { peers.entries[peer.id]?.doubt = Doubt(since: startedAt) }
        return silenceBeforeSuspicion == .zero ? setState(peer.id, .suspect, incarnation: peer.incarnation, now: now) : []
    }

    /// Doubted peers that have now been silent for the silence before suspicion become suspect,
    /// by id.
    mutating func suspectTheSilent(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for id in peers.ids(where: { $0.doubt != nil }) {
            guard let doubt = peers.entries[id]?.doubt, let peer = peers[id], peer.state == .alive else {
                peers.entries[id]?.doubt = nil
                continue
            }
            guard (now - doubt.since) >= silenceBeforeSuspicion else { continue }
            directives += setState(id, .suspect, incarnation: peer.incarnation, now: now)
        }
        return directives
    }
}

extension Double {
    /// log₂ of a positive finite value, from its exponent and significand (the core imports no
    /// Foundation): exact to about 1e-12, plenty for a timeout.
    var binaryLogarithm: Double {
        precondition(self > 0 && isFinite, "log of a non-positive or infinite value")
        let y = (significand - 1) / (significand + 1)  // significand in [1, 2): y in [0, 1/3)
        var term = y
        var sum = 0.0
        for n in stride(from: 1, through: 41, by: 2) {
            sum += term / Double(n)
            term *= y * y
        }
        return Double(exponent) + 2 * sum / 0.693_147_180_559_945_3
    }
}
