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
        var sentAt: Int64
    }

    /// An unresolved seed address.
    struct SeedProbe: Hashable, Sendable {
        var lastProbeAt: Int64?
    }

    /// One protocol period: the peer probed in it and how that is going.
    struct Period: Hashable, Sendable {
        var target: NodeID
        var startedAt: Int64
        /// The peer's incarnation when the period began: an unanswered period suspects it at this
        /// one only, never at one it has since refuted with.
        var incarnation: UInt64
        var attempts = 0
        var answered = false
    }

    /// Ends the period that is over (suspecting its peer if nobody answered), starts the next if
    /// one is due, and sends the period's next probe if it is due.
    mutating func runPeriod(now: Int64) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        if let ended = period, ended.startedAt.clampedAdding(config.probeInterval) <= now {
            period = nil
            if !ended.answered, let peer = peers[ended.target], peer.state == .alive,
                peer.incarnation == ended.incarnation
            {
                directives += setState(peer.id, .suspect, incarnation: peer.incarnation, now: now)
            }
        }
        if period == nil, nextPeriodAt <= now {
            // Periods tick on from the first tick, idle ones too: a peer met between two does
            // not start one early.
            nextPeriodAt = now.clampedAdding(config.probeInterval)
            if let target = nextTarget() {
                period = Period(target: target.id, startedAt: now, incarnation: target.incarnation)
                lastTarget = target.id
                probeSoon.remove(target.id)
            }
        }
        if var current = period, !current.answered, current.attempts < config.probeAttempts,
            attemptDue(current) <= now
        {
            if let peer = peers[current.target], peer.state != .gone {
                current.attempts += 1
                directives.append(probe(peer.address, target: .peer(peer.id), now: now))
            } else {
                current.attempts = config.probeAttempts  // gone or forgotten meanwhile: no more probes
            }
            period = current
        }
        return directives
    }

    /// The first alive or suspect peer by id after the last period's, wrapping around.
    private func nextTarget() -> Peer? {
        let candidates = peers.values.filter { $0.state != .gone }
        let after = lastTarget ?? me
        return candidates.filter { $0.id > after }.min { $0.id < $1.id }
            ?? candidates.min { $0.id < $1.id }
    }

    /// When the period's next probe is due: its attempts are evenly spaced over the period.
    private func attemptDue(_ period: Period) -> Int64 {
        period.startedAt.clampedAdding(config.probeInterval / Int64(config.probeAttempts) * Int64(period.attempts))
    }

    /// Builds a probe to `address`, remembers it, and returns the directive to send it.
    mutating func probe(_ address: PeerAddress, target: ProbeTarget, now: Int64) -> MembershipDirective {
        let sequence = nextSequence
        nextSequence &+= 1
        var probe = Probe(
            from: me, nick: nick, incarnation: incarnation, sequence: sequence, sentAt: now, port: port,
            rooms: rooms, peers: [])
        let recipient: NodeID? = if case .peer(let id) = target { id } else { nil }
        probe.peers = gossip(
            to: recipient, destination: address,
            budget: WireLimits.maxDatagramBytes - WireMessage.probe(probe).encodedByteCount, now: now)
        outstanding[sequence] = OutstandingProbe(target: target, address: address, sentAt: now)
        return .send(.probe(probe), to: address)
    }

    /// When gone peer `id` is next to be probed (`Int64.min` if it never was: at the next tick).
    func goneProbeDue(_ id: NodeID) -> Int64 {
        goneProbedAt[id].map { $0.clampedAdding(config.goneProbeInterval) } ?? .min
    }

    func seedDue(_ seed: SeedProbe) -> Int64 {
        seed.lastProbeAt.map { $0.clampedAdding(config.probeInterval) } ?? .min
    }

    /// The earliest time a probe or a state change is due, not before `now`; `nil` if nothing is
    /// pending at all.
    func nextDue(now: Int64) -> Int64? {
        var due: Int64?
        func consider(_ time: Int64) { due = min(due ?? time, time) }
        if let period {
            if !period.answered && period.attempts < config.probeAttempts { consider(attemptDue(period)) }
            consider(period.startedAt.clampedAdding(config.probeInterval))
        } else if peers.values.contains(where: { $0.state != .gone }) {
            consider(nextPeriodAt)
        }
        for peer in peers.values {
            switch peer.state {
            case .alive: break
            case .suspect: consider((suspectedAt[peer.id] ?? now).clampedAdding(config.suspicionTimeout))
            case .gone: consider(goneProbeDue(peer.id))
            }
        }
        if !probeSoon.isEmpty { consider(now) }
        for seed in seedProbes.values {
            consider(seedDue(seed))
        }
        return due.map { max($0, now) }
    }

    /// A `.scheduleTick(at:)` if something is due before the wake-up the shell already has.
    mutating func rescheduleIfEarlier(now: Int64) -> [MembershipDirective] {
        guard let due = nextDue(now: now), scheduledTick.map({ due < $0 }) ?? true else { return [] }
        scheduledTick = due
        return [.scheduleTick(at: due)]
    }
}
