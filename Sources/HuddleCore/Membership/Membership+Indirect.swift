/// Indirect probes (SWIM's ping-req, with Lifeguard's nack): asking other members to reach a peer
/// whose direct probe went unanswered, and being asked.
extension Membership {
    /// Most probes this node runs for others at once: a flood of requests costs at most this many
    /// probes in flight.
    static let maxRelays = 16

    /// Asks up to ``MembershipConfig/indirectProbes`` alive members, chosen at random, to probe
    /// `target` for us; remembers whom, so their forwarded acks and nacks are recognised.
    mutating func askHelpers(toReach target: NodeID, now: MonotonicTime) -> [MembershipDirective] {
        guard config.indirectProbes > 0 else { return [] }
        var candidates = peers.values.filter { $0.state == .alive && $0.id != target }.sorted { $0.id < $1.id }
        candidates.shuffle(using: &random)
        let helpers = candidates.prefix(config.indirectProbes)
        guard !helpers.isEmpty else { return [] }
        let key = IndirectKey(target: target, sentAt: now)
        indirect[key] = IndirectRequest(helpers: Set(helpers.map(\.id)), at: now)
        if period?.target == target {
            period?.helpers.formUnion(helpers.map(\.id).filter { peers.entries[$0]?.speaksIndirect == true })
        }
        return helpers.sorted { $0.id < $1.id }.map { helper in
            .send(.probeRequest(ProbeRequest(from: me, target: target, sentAt: now)), to: helper.address)
        }
    }

    /// Handles a request, arrived at `now`, to probe another node for its sender.
    ///
    /// Only a known, not gone sender is helped, only about a known peer other than itself and this
    /// node, and with at most ``maxRelays`` probes in flight for others: the probe goes to the
    /// address this node knows for the target, carrying the request's send time. The target's ack
    /// is forwarded to the sender (``MembershipDirective/forward(_:to:)``), or a ``Nack`` goes to
    /// the sender after this node's probe timeout. The request is not taken as contact with its
    /// sender: unlike a probe it carries nothing that tells a replay from a fresh one.
    ///
    /// Directives: the probe, then a `.scheduleTick(at:)` if something new is due before the last
    /// wake-up.
    public mutating func receive(
        _ request: ProbeRequest, from source: PeerAddress, now: MonotonicTime
    ) -> [MembershipDirective] {
        guard request.from != me, let requester = peers[request.from], requester.state != .gone else { return [] }
        peers.entries[request.from]?.speaksIndirect = true
        guard request.target != me, request.target != request.from, let target = peers[request.target],
            outstanding.values.filter({ $0.relayFor != nil }).count < Self.maxRelays,
            !outstanding.values.contains(where: {
                $0.relayFor == request.from && $0.target == .peer(request.target) && $0.sentAt == request.sentAt
            })
        else { return rescheduleIfEarlier(now: now) }
        let send = probe(
            target.address, target: .peer(target.id), now: now, sentAt: request.sentAt, relayFor: request.from)
        return [send] + rescheduleIfEarlier(now: now)
    }

    /// Handles a helper's nack: it could not reach the target either. That confirms our doubt or
    /// suspicion of the target, and tells us the helper is up (its nack arrived). Nacks for
    /// requests we did not make, or from members we did not ask, are ignored.
    public mutating func receive(_ nack: Nack, from source: PeerAddress, now: MonotonicTime) -> [MembershipDirective] {
        let key = IndirectKey(target: nack.target, sentAt: nack.sentAt)
        guard nack.from != me, peers[nack.from] != nil, indirect[key]?.helpers.contains(nack.from) == true else {
            return []
        }
        indirect[key]?.helpers.remove(nack.from)
        peers.entries[nack.from]?.speaksIndirect = true
        noteContact(nack.from, now: now)
        if period?.target == nack.target { period?.heardBack.insert(nack.from) }
        confirm(nack.target, by: nack.from)
        return rescheduleIfEarlier(now: now)
    }

    /// Nacks owed for probes run for others that went unanswered for the probe timeout, by
    /// requester then target.
    mutating func dueNacks(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [(NodeID, NodeID, MembershipDirective)] = []
        for (sequence, sent) in outstanding {
            guard let requester = sent.relayFor, let nackAt = sent.nackAt, nackAt <= now,
                case .peer(let target) = sent.target
            else { continue }
            outstanding[sequence]?.nackAt = nil
            guard let peer = peers[requester], peer.state != .gone else { continue }
            directives.append(
                (requester, target, .send(.nack(Nack(from: me, target: target, sentAt: sent.sentAt)), to: peer.address)))
        }
        return directives.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }

    /// Peer `id` reached this node itself at `now`: it answers this period's probe if it is its
    /// target, and is no longer doubted.
    mutating func noteContact(_ id: NodeID, now: MonotonicTime) {
        guard var entry = peers.entries[id] else { return }
        entry.peer.lastSeen = max(entry.peer.lastSeen, now)
        entry.lastContact = max(entry.lastContact ?? now, now)
        entry.doubt = nil
        entry.rumour = nil
        peers.entries[id] = entry
        answerPeriod(of: id)
    }

    /// Marks this period answered if `id` is its target; an answer to the period's first probe,
    /// before any retry, is a sign of good health.
    mutating func answerPeriod(of id: NodeID) {
        guard var current = period, current.target == id, !current.answered else { return }
        current.answered = true
        period = current
        if current.attempts <= 1 { lowerHealth() }
    }
}
