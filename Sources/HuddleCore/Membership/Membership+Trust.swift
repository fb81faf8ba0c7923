/// Trust: which addresses have proven themselves, where a peer may move, and what this node may
/// send to an address that has not (docs/PROTOCOL.md, "Trust").
///
/// - **An address proves itself by answering.** A probe's sequence carries 32 bits nobody else
///   can predict (``ProbeNonces``), so a signed ack that echoes it and comes *from the address
///   the probe went to* shows that the peer receives there. Such a peer's address is
///   ``Peer/addressProven``. A key that only signed a probe proves nothing: keys are free and
///   source addresses can be forged.
/// - **A peer moves only when its address stops answering.** A signed probe or ack from another
///   address, a gossip record or an unsigned digest naming one: each starts a check that probes
///   both the known address and the new one. If the known one answers (within a probe timeout),
///   the peer stays; only if it does not and the new one does, the peer moves there
///   (``MembershipDirective/peerMoved(id:to:)``). A NAT that rebooted moves its peers a probe
///   timeout later than before; a stranger who relays a peer's fresh probe to another moves nobody
///   (it cut two nodes off from each other for good, once).
/// - **Nothing more to an unproven address than arrived** (``SendCredit``): datagrams to an
///   address no peer proved, no seed and no DNS-SD announcement named, spend the credit of the
///   host they came from, or of the member that gossiped the address.
extension Membership {
    /// A check of whether a peer moved: both addresses probed, the known one first.
    struct AddressCheck: Hashable, Sendable {
        /// Where it may have moved.
        var candidate: PeerAddress
        var since: MonotonicTime
        /// When the candidate was last probed.
        var askedAt: MonotonicTime
        /// Whose credit probes of the candidate spend: the address that named it.
        var payer: String
        var knownAnswered = false
        var candidateAnswered = false
    }

    /// Whether the peer at `address` has proven it receives there, or the address came from
    /// this node's own side (a seed the user named, a DNS-SD announcement): datagrams to it
    /// spend no credit.
    public func isTrusted(_ address: PeerAddress) -> Bool {
        if seedProbes[address] != nil { return true }
        return peers.values.contains { $0.address == address && hasTrustedAddress($0) }
    }

    /// Every address ``isTrusted(_:)`` holds, at once (for a push to many).
    public func trustedAddresses() -> Set<PeerAddress> {
        var trusted = Set(seedProbes.keys)
        for peer in peers.values where hasTrustedAddress(peer) { trusted.insert(peer.address) }
        return trusted
    }

    /// Whether `peer`'s address answered there, or this node's own side named it: a seed the user
    /// named (where it answered from), a DNS-SD announcement.
    func hasTrustedAddress(_ peer: Peer) -> Bool {
        peer.addressProven || peer.foundBy == .mdns || peer.foundBy == .seed
    }

    /// Whether node `id` is a live peer: not gone, it signed its own word to this node, and its
    /// address answered a probe of this node's (or is a seed the user named, where it answered
    /// from). Its datagrams are exempt from rate limits, and it is told when this node leaves.
    public func isProven(_ id: NodeID) -> Bool {
        peers[id].map { $0.vouched > 0 && $0.state != .gone && ($0.addressProven || $0.foundBy == .seed) } ?? false
    }

    /// `bytes` arrived from `source`: credit for datagrams to addresses not proven yet.
    public mutating func arrived(_ bytes: Int, from source: PeerAddress) {
        sendCredit.earn(bytes, from: source.description)
    }

    /// Whether a datagram of `bytes` may go to `address` now: at once to a trusted address
    /// (``isTrusted(_:)``); otherwise only from the credit of whoever named the address.
    public mutating func mayShip(_ bytes: Int, to address: PeerAddress) -> Bool {
        guard !isTrusted(address) else { return true }
        return sendCredit.spend(bytes, payer: payer(for: address))
    }

    /// The address whose credit pays for datagrams to `address`: the member that gossiped it,
    /// else the address itself. An address, not a host: credit that a host's other sockets
    /// earned (a peer's node talking all evening) paid for datagrams to a port of that host that
    /// a forged source or a stranger's gossip named, up to 4 bytes at the victim for each the
    /// stranger sent (issue 45).
    func payer(for address: PeerAddress) -> String {
        if let check = peers.entries.values.lazy.compactMap(\.move).first(where: { $0.candidate == address }) {
            return check.payer
        }
        if let named = hearsay.values.first(where: { $0.address == address }), let via = named.via,
            let namer = peers[via]
        {
            return namer.address.description
        }
        return address.description
    }

    /// Starts a check of whether peer `id` moved to `candidate`, named by `payer` (an address,
    /// whose credit pays for probes of the candidate): probes
    /// the known address and the candidate at once. At most one check per peer runs; while it
    /// waits for the candidate, news of the same candidate asks it again (its first probe may have
    /// found no credit, or been lost), at most once per ``addressCheckInterval``.
    mutating func checkMove(_ id: NodeID, to candidate: PeerAddress, payer: String, now: MonotonicTime)
        -> [MembershipDirective]
    {
        guard let peer = peers[id], candidate != peer.address, !candidate.host.isEmpty, candidate.port != 0,
            peers.entries[id]?.addressCheckedAt.map({ (now - $0) >= addressCheckInterval }) ?? true
        else { return [] }
        if let check = peers.entries[id]?.move {
            guard check.candidate == candidate, !check.candidateAnswered else { return [] }
            peers.entries[id]?.addressCheckedAt = now
            peers.entries[id]?.move?.askedAt = now
            return [probe(candidate, target: .peer(id), now: now)]
        }
        peers.entries[id]?.addressCheckedAt = now
        peers.entries[id]?.move = AddressCheck(candidate: candidate, since: now, askedAt: now, payer: payer)
        peers.entries[id]?.probeSoon = false
        return [probe(peer.address, target: .peer(id), now: now), probe(candidate, target: .peer(id), now: now)]
    }

    /// Peer `id`'s signed ack to a probe of ours sent to `address` arrived from `source`. From
    /// the address itself, it proves the peer receives there. True if that made its address
    /// proven (``MembershipDirective/peerProven(id:)``).
    mutating func noteAnswer(_ id: NodeID, probedAt address: PeerAddress, from source: PeerAddress) -> Bool {
        guard source == address, let peer = peers[id] else { return false }
        if peers.entries[id]?.move?.candidate == address { peers.entries[id]?.move?.candidateAnswered = true }
        guard address == peer.address else { return false }
        peers.entries[id]?.move?.knownAnswered = true
        guard !peer.addressProven else { return false }
        proofs += 1
        peers[id]?.addressProven = true
        return true
    }

    /// Settles the checks that are due: a peer whose known address answered stays; one whose
    /// known address stayed silent for a probe timeout while the candidate answered moves there;
    /// a check whose candidate did not answer within a period of being asked is dropped.
    mutating func settleMoves(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for id in peers.ids(where: { $0.move != nil }) {
            guard let check = peers.entries[id]?.move, var peer = peers[id], !check.knownAnswered else {
                peers.entries[id]?.move = nil
                continue
            }
            if check.candidateAnswered, (now - check.since) >= probeTimeout {
                peers.entries[id]?.move = nil
                peer.address = check.candidate
                peer.addressProven = true
                proofs += 1
                peers[id] = peer
                directAnswered(id, now: now)
                // Offered again what went to the dead address (one coming back to life is anyway).
                if peer.state == .alive { directives.append(.peerMoved(id: id, to: check.candidate)) }
            } else if (now - check.askedAt) >= periodLength {
                peers.entries[id]?.move = nil
            }
        }
        return directives
    }

    /// When the next check is due to settle.
    func movesDue() -> MonotonicTime? {
        peers.entries.values.compactMap(\.move)
            .map { $0.candidateAnswered ? $0.since + probeTimeout : $0.askedAt + periodLength }.min()
    }

    /// Whether `peer` was announced on this network over DNS-SD or named by the viewer (a seed):
    /// a standing no number of keys that prove their addresses can buy. Such peers have the inner
    /// probe ring (``nextTarget()``) and the reserved origin slots kept for them
    /// (``ReservedSeat``). Not a peer one of them named in gossip: a member gossips every peer it
    /// knows, a stranger's keys too (lending them standing gave 17 keys a seat past the 16).
    public func isAnnounced(_ peer: Peer) -> Bool {
        peer.foundBy == .mdns || peer.foundBy == .seed
    }

    /// Whether `peer` is in the probe ring, and so watched for failure: its address answered,
    /// this node's side named it, or it answers only through relays. A key that probed us and
    /// never answered at its address is not (a hundred such keys once stretched the time to
    /// notice a dead peer from 6 s to 96 s); it is asked to prove itself each period and
    /// suspected when it falls silent and forgotten once gone (``watchUnproven(now:)``).
    func isInRing(_ peer: Peer) -> Bool {
        hasTrustedAddress(peer) || relaying.paths[peer.id]?.directLost == true
    }

    /// Peers outside the ring, which no period probes: one silent for
    /// ``MembershipConfig/unprovenSilence`` is suspect (and gone a suspicion timeout later, as
    /// any peer), and a gone one is forgotten, with nothing more said.
    mutating func watchUnproven(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for id in peers.keys.sorted() {
            guard let peer = peers[id], !isInRing(peer) else { continue }
            switch peer.state {
            case .alive where (now - (peers.entries[id]?.lastContact ?? peer.lastSeen)) >= config.unprovenSilence:
                directives += setState(id, .suspect, incarnation: peer.incarnation, now: now)
            case .gone:
                forget(id)
            default:
                break
            }
        }
        return directives
    }

    /// Alive peers whose address has not answered a probe of ours yet (one that reached this
    /// node first, from an address it says is its own): probed at the start of each period, at
    /// most ``MembershipConfig/keepAlivePeers`` of them, from the credit their host earned.
    mutating func proveAddresses(now: MonotonicTime) -> [MembershipDirective] {
        let due = peers.entries.values
            .filter { entry in
                let peer = entry.peer
                return peer.state == .alive && !peer.addressProven && peer.id != period?.target && entry.doubt == nil
                    && relaying.paths[peer.id]?.directLost != true && entry.move == nil && entry.keptAliveAt != now
            }
            .map(\.peer)
            .sorted { $0.id < $1.id }
            .prefix(max(config.keepAlivePeers, 1))
        return due.map { probe($0.address, target: .peer($0.id), now: now) }
    }
}
