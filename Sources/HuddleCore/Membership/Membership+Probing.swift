/// The probing half of ``Membership``: periods, probes, and when to wake up next.
extension Membership {
    /// Whom an outstanding probe was for.
    enum ProbeTarget: Hashable, Sendable {
        case peer(NodeID)
        case seed(PeerAddress)
    }

    /// A probe we sent and have not seen answered.
    struct OutstandingProbe: Hashable, Sendable {
        var target: ProbeTarget
        var address: PeerAddress
        /// The send time the probe carries: ours, or for a probe run for another node, its.
        var sentAt: MonotonicTime
        /// When we sent it.
        var at: MonotonicTime
        /// For a probe run for another node (a ``ProbeRequest``): that node, to forward the ack to.
        var relayFor: NodeID? = nil
        /// When the requester is owed a ``Nack`` if no ack came (`nil` once sent or answered).
        var nackAt: MonotonicTime? = nil
        /// For a probe sent through a relay (a ``RelayMessage``): the relay.
        var via: NodeID? = nil
        /// Sent in answer to a probe from an address that had not proven itself: its ack is a
        /// newcomer's first proof, after which it is told who else is here.
        var asking = false
    }

    /// An unresolved seed address.
    struct SeedProbe: Hashable, Sendable {
        var lastProbeAt: MonotonicTime?
    }

    /// One protocol period: the peer probed in it and how that is going.
    struct Period: Hashable, Sendable {
        var target: NodeID
        var startedAt: MonotonicTime
        /// The peer's incarnation when the period began: an unanswered period suspects it at this
        /// one only, never at one it has since refuted with.
        var incarnation: UInt64
        var attempts = 0
        var answered = false
        /// Whether a probe of the period was answered from the peer's own address (else the
        /// period may have been answered only through helpers or relays).
        var answeredDirectly = false
        /// Whether the peer answered the period through a helper or a relay.
        var answeredThroughOthers = false
        /// Helpers asked this period that are known to answer (see ``PeerEntry/speaksIndirect``).
        var helpers: Set<NodeID> = []
        /// Those of them whose nack or forwarded ack arrived.
        var heardBack: Set<NodeID> = []
    }

    /// Ends the period that is over (doubting or suspecting its peer if nobody answered), starts
    /// the next if one is due, and sends the period's next probe if it is due, with requests to
    /// helpers from the first retry on.
    mutating func runPeriod(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        if let ended = period, (ended.startedAt + periodLength) <= now {
            period = nil
            if ended.answeredThroughOthers, !ended.answeredDirectly, peers[ended.target] != nil {
                // Answered, but only through others: the direct path does not work.
                loseDirect(ended.target)
            }
            if !ended.answered {
                // Helpers that answer were asked and said nothing: the silence may be ours.
                if !ended.helpers.subtracting(ended.heardBack).isEmpty { raiseHealth() }
                if let peer = peers[ended.target], peer.state == .alive, peer.incarnation == ended.incarnation {
                    directives += periodFailed(peer, startedAt: ended.startedAt, now: now)
                }
            }
        }
        if period == nil, nextPeriodAt <= now {
            // Periods tick on from the first tick, idle ones too: a peer met between two does
            // not start one early.
            nextPeriodAt = now + periodLength
            if let target = nextTarget() {
                period = Period(target: target.id, startedAt: now, incarnation: target.incarnation)
                peers.entries[target.id]?.probeSoon = false
            }
            // Peers that answer only through others: probed directly (has the path healed?) and
            // through relays, every period.
            directives += probeLostPeers(now: now)
            // Peers across a NAT, maybe: kept open (Membership+KeepAlive).
            directives += keepAlive(now: now)
            // Peers that reached us first and have not shown they receive where they say.
            directives += proveAddresses(now: now)
            // Doubted peers are probed every period besides the ring's, directly and through
            // helpers, until they answer or are suspected.
            for id in peers.ids(where: { $0.doubt != nil }) where id != period?.target {
                guard let peer = peers[id], peer.state == .alive else { continue }
                peers.entries[id]?.probeSoon = false
                directives.append(probe(peer.address, target: .peer(id), now: now))
                directives += askHelpers(toReach: id, now: now)
            }
        }
        if var current = period, !current.answered, current.attempts < config.probeAttempts,
            attemptDue(current) <= now
        {
            if let peer = peers[current.target], peer.state != .gone {
                current.attempts += 1
                period = current
                directives.append(probe(peer.address, target: .peer(peer.id), now: now))
                if current.attempts > 1 { directives += askHelpers(toReach: peer.id, now: now) }
            } else {
                current.attempts = config.probeAttempts  // gone or forgotten meanwhile: no more probes
                period = current
            }
        }
        return directives
    }

    /// This node's wake-up came `now`, `lateness` after it asked: it was not running (a
    /// starved CPU, a stopped process). That is a sign of poor local health, and the time it
    /// missed does not count against its peers: the running period and every doubt are moved
    /// on by it, so acks that arrived meanwhile are read before anyone is judged.
    mutating func wokeLate(by lateness: TimeSpan) {
        guard config.maxHealth > 0 else { return }
        raiseHealth()
        if var current = period {
            current.startedAt = current.startedAt + lateness
            period = current
        }
        nextPeriodAt = nextPeriodAt + lateness
        peers.updateEach { entry in
            entry.doubt?.since += lateness
            entry.suspicion?.since += lateness
        }
    }

    /// The next alive or suspect peer in the ring (``isInRing(_:)``): the ring is two, taken in
    /// turns. The inner one holds the peers DNS-SD announced or the viewer named
    /// (``isAnnounced(_:)``), each in turn by id; the outer one those proven only by
    /// answering, taken a host at a time (each host in turn, and that host's next peer by id).
    /// So keys that answer probes stretch only their own ring, and only by their hosts: a
    /// hundred of them kept a dead friend "alive" for 88 s when every peer took its turn in one
    /// ring (issue 45). An announced friend is probed every second period, one that reached
    /// this node first every (hosts in the outer ring × 2) periods, however many keys there are.
    private mutating func nextTarget() -> Peer? {
        let ring = peers.values.filter { $0.state != .gone && isInRing($0) }
        let inner = ring.filter { isAnnounced($0) }
        let outer = Dictionary(grouping: ring.filter { !isAnnounced($0) }, by: \.address.host)
        func next(in candidates: [Peer], after last: NodeID?) -> Peer? {
            let after = last ?? me
            return candidates.filter { $0.id > after }.min { $0.id < $1.id } ?? candidates.min { $0.id < $1.id }
        }
        outerTurn.toggle()
        outerCursor = outerCursor.filter { outer[$0.key] != nil }
        let hosts = outer.keys.sorted()
        if outerTurn || inner.isEmpty,
            let host = hosts.first(where: { $0 > lastOuterHost ?? "" }) ?? hosts.first,
            let target = next(in: outer[host] ?? [], after: outerCursor[host])
        {
            lastOuterHost = host
            outerCursor[host] = target.id
            return target
        }
        guard let target = next(in: inner, after: lastTarget) else { return nil }
        lastTarget = target.id
        return target
    }

    /// When the period's next probe is due: its attempts are evenly spaced over the period.
    private func attemptDue(_ period: Period) -> MonotonicTime {
        period.startedAt + probeTimeout * Int64(period.attempts)
    }

    /// Builds a probe to `address`, remembers it, and returns the directive to send it. A probe
    /// run for another node carries that node's send time and is owed a nack after the probe
    /// timeout.
    mutating func probe(
        _ address: PeerAddress, target: ProbeTarget, now: MonotonicTime, sentAt: MonotonicTime? = nil,
        relayFor: NodeID? = nil, asking: Bool = false
    ) -> MembershipDirective {
        let sequence = nonces.next()
        var probe = Probe(
            from: me, nick: nick, incarnation: incarnation, sequence: sequence, sentAt: sentAt ?? now, port: port,
            rooms: rooms, peers: [])
        let recipient: NodeID? = if case .peer(let id) = target { id } else { nil }
        // Gossip goes only to an address that has proven itself (or that this node's side named).
        if isTrusted(address) {
            probe.peers = gossip(
                to: recipient, destination: address,
                budget: WireLimits.maxDatagramBytes - WireMessage.probe(probe).encodedByteCount, now: now)
        }
        outstanding[sequence] = OutstandingProbe(
            target: target, address: address, sentAt: sentAt ?? now, at: now, relayFor: relayFor,
            nackAt: relayFor.map { _ in now + probeTimeout }, asking: asking)
        return .send(.probe(probe), to: address)
    }

    /// When gone peer `id` is next to be probed (``MonotonicTime/distantPast`` if it never was: at the next tick).
    func goneProbeDue(_ id: NodeID) -> MonotonicTime {
        peers.entries[id]?.goneProbedAt.map { $0 + config.goneProbeInterval } ?? .distantPast
    }

    func seedDue(_ seed: SeedProbe) -> MonotonicTime {
        seed.lastProbeAt.map { $0 + periodLength } ?? .distantPast
    }

    /// The earliest time a probe or a state change is due, not before `now`; `nil` if nothing is
    /// pending at all.
    func nextDue(now: MonotonicTime) -> MonotonicTime? {
        var due: MonotonicTime?
        func consider(_ time: MonotonicTime) { due = min(due ?? time, time) }
        if let period {
            if !period.answered && period.attempts < config.probeAttempts { consider(attemptDue(period)) }
            consider(period.startedAt + periodLength)
        } else if peers.values.contains(where: { $0.state != .gone }) {
            consider(nextPeriodAt)
        }
        for peer in peers.values {
            switch peer.state {
            case .suspect: consider(suspicionEnds(peer.id) ?? now)
            case .alive:
                if let doubt = peers.entries[peer.id]?.doubt { consider(doubt.since + silenceBeforeSuspicion) }
            case .gone: consider(goneProbeDue(peer.id))
            }
        }
        if peers.entries.values.contains(where: \.probeSoon) { consider(now) }
        if let settle = movesDue() { consider(settle) }
        if let heard = hearsayDue() { consider(heard) }
        for seed in seedProbes.values {
            consider(seedDue(seed))
        }
        for sent in outstanding.values {
            if let nackAt = sent.nackAt { consider(nackAt) }
        }
        return due.map { max($0, now) }
    }

    /// A `.scheduleTick(at:)` if something is due before the wake-up the shell already has.
    mutating func rescheduleIfEarlier(now: MonotonicTime) -> [MembershipDirective] {
        guard let due = nextDue(now: now), scheduledTick.map({ due < $0 }) ?? true else { return [] }
        scheduledTick = due
        return [.scheduleTick(at: due)]
    }
}
