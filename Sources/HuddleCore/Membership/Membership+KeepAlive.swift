/// Keeping NATs open: a peer this node did not find on its own link may be across a router that
/// translates, whose mapping for the pair lives only while this side keeps sending, and dies with
/// a reboot (`conntrack -F`): what the peer sends to the old mapping is dropped there, and only
/// this side can open a new one. SWIM's ring alone sends a peer something once in N periods; a
/// quiet room sends nothing else. So each period, besides the ring's peer, every alive peer not
/// found over mDNS is probed too (up to ``MembershipConfig/keepAlivePeers``, those probed longest
/// ago first, the ring's probes counted). After a reboot the first of these probes opens a new
/// mapping; the peer answers it there, moves this node to it
/// (``MembershipDirective/peerMoved(id:to:)``) and offers it what the dead mapping lost. A
/// keep-alive that goes unanswered counts against nobody: only the ring's probes do.
extension Membership {
    /// The keep-alive probes due at the start of a period: alive peers not found over mDNS that
    /// this period does not probe anyway (its target, doubted peers, peers whose direct path is
    /// lost are probed by their own rules).
    mutating func keepAlive(now: MonotonicTime) -> [MembershipDirective] {
        guard config.keepAlivePeers > 0 else { return [] }
        // The ring's probe keeps its peer open too.
        if let target = period?.target { peers.entries[target]?.keptAliveAt = now }
        let due = peers.entries.values
            .filter { entry in
                let peer = entry.peer
                return peer.state == .alive && peer.foundBy != .mdns && peer.id != period?.target
                    && entry.doubt == nil && relaying.paths[peer.id]?.directLost != true
            }
            .sorted { ($0.keptAliveAt ?? .distantPast, $0.peer.id) < ($1.keptAliveAt ?? .distantPast, $1.peer.id) }
            .prefix(config.keepAlivePeers)
            .map(\.peer)
        return due.map { peer in
            peers.entries[peer.id]?.keptAliveAt = now
            return probe(peer.address, target: .peer(peer.id), now: now)
        }
    }
}
