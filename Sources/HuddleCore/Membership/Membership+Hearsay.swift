/// Peers known only from other members' gossip.
///
/// A gossip record is hearsay: anyone who is a peer can list made-up nodes (ten signed probes
/// of 32 fake records once filled the 256-entry peer table, and by gossip the next node's too, so
/// that no newcomer could be added and chat to a real one crawled through anti-entropy). So a
/// node named only by gossip is not a peer yet. It waits here, apart from ``Membership/peers``:
/// - it is probed (at once, then each period) at the address the record gave;
/// - its own signed answer, or a probe of its own, makes it a peer (``Membership/contact``);
/// - unanswered for ``MembershipConfig/hearsayLifetime`` it is forgotten, with nothing said;
/// - at most ``MembershipConfig/maxHearsay`` wait at once, and they never take a peer's place;
/// - it is not gossiped on, announced, pushed to, or exempt from rate limits.
extension Membership {
    /// A node another member named, not heard from yet.
    struct Hearsay: Hashable, Sendable {
        var address: PeerAddress
        /// When it was first named (it is forgotten ``MembershipConfig/hearsayLifetime`` later).
        var since: MonotonicTime
        /// When it was last probed (`nil`: not yet).
        var probedAt: MonotonicTime?
        /// The member that named it: if the node does not answer at its address, it is probed
        /// through this one (a relay), which vouched for it.
        var via: NodeID? = nil
    }

    /// How many nodes are known only by hearsay, waiting to answer.
    public var hearsayCount: Int { hearsay.count }

    /// Notes an unknown node gossiped as alive, to be probed (nothing, if hearsay is full).
    mutating func noteHearsay(_ id: NodeID, at address: PeerAddress, via sender: NodeID? = nil, now: MonotonicTime) {
        guard hearsay[id] == nil, hearsay.count < config.maxHearsay else { return }
        hearsay[id] = Hearsay(address: address, since: now, via: sender)
    }

    /// Probes the hearsay due a probe and forgets what went unanswered too long.
    mutating func probeHearsay(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for id in hearsay.keys.sorted() {
            guard var heard = hearsay[id] else { continue }
            if (now - heard.since) >= config.hearsayLifetime {
                hearsay[id] = nil
                continue
            }
            guard heard.probedAt.map({ (now - $0) >= periodLength }) ?? true else { continue }
            // Unanswered at its address for a period: also through the member that named it.
            if heard.probedAt != nil, let via = heard.via {
                for relay in relayCandidates(for: id, only: via) { probe(via: relay, to: id, now: now) }
            }
            heard.probedAt = now
            hearsay[id] = heard
            directives.append(probe(heard.address, target: .peer(id), now: now))
        }
        return directives
    }

    /// When the hearsay next needs a tick: a probe or a forgetting.
    func hearsayDue() -> MonotonicTime? {
        hearsay.values.map { heard in
            min(heard.since + config.hearsayLifetime,
                heard.probedAt.map { $0 + periodLength } ?? .distantPast)
        }.min()
    }
}
