/// The knowledge half of ``Membership``: applying claims about peers (from contact, gossip and
/// this node's own probing) in one order, and choosing what to gossip.
extension Membership {
    /// How far above its own incarnation a claim about this node may be and still be refuted or
    /// caught up with: 2⁴⁰ ms is 35 years of restarts (incarnations start at the start time in ms).
    static let maxIncarnationLead: UInt64 = 1 << 40

    /// Whether the claim "`state` at `incarnation`" replaces what this node holds of `peer`:
    /// a higher incarnation always does; at the same incarnation only a worse state does
    /// (alive < suspect < gone). SWIM's order, the same on every node.
    static func claim(_ state: PeerState, at incarnation: UInt64, beats peer: Peer) -> Bool {
        incarnation == peer.incarnation ? state.rawValue > peer.state.rawValue : incarnation > peer.incarnation
    }

    /// Sets a known peer's state and incarnation, starting or stopping its suspicion (raised by
    /// `accuser`, this node by default) and marking the change as fresh gossip; reports a change
    /// of state.
    mutating func setState(
        _ id: NodeID, _ state: PeerState, incarnation: UInt64, now: MonotonicTime, accuser: NodeID? = nil
    ) -> [MembershipDirective] {
        guard var peer = peers[id] else { return [] }
        let old = peer
        guard (old.state, old.incarnation) != (state, incarnation) else { return [] }
        peer.state = state
        peer.incarnation = incarnation
        peers[id] = peer
        peers.entries[id]?.changedAt = now
        // Who could not reach it while it was only doubted confirms the suspicion.
        let confirmed = peers.entries[id]?.doubt?.confirmedBy.subtracting([accuser ?? me]) ?? []
        peers.entries[id]?.suspicion =
            state == .suspect ? Suspicion(since: now, accuser: accuser ?? me, confirmedBy: confirmed) : nil
        if state != .alive { peers.entries[id]?.doubt = nil }
        peers.entries[id]?.rumour = nil
        if state == .gone { peers.entries[id]?.goneProbedAt = now }
        return old.state == state ? [] : [.peerChanged(id: id, nick: peer.nick, from: old.state, to: state)]
    }

    /// Direct contact with node `id` at `now` (it probed us or answered): it is at `address` with
    /// what it told us, answers this period's probe, and claims "alive at `incarnation`".
    mutating func contact(
        _ id: NodeID, nick: String, incarnation: UInt64, rooms: [String], address: PeerAddress,
        foundBy: PeerSource, rttSample: TimeSpan?, now: MonotonicTime, announcedPort: UInt16? = nil
    ) -> [MembershipDirective] {
        let rooms = Array(rooms.prefix(WireLimits.maxRoomsPerNode))
        hearsay[id] = nil
        guard var peer = peers[id] else {
            guard makeRoom(verified: true, for: address) else { return [] }
            peers[id] = Peer(
                id: id, nick: nick, address: address, rooms: rooms, state: .alive, incarnation: incarnation,
                lastSeen: now, rtt: rttSample, foundBy: foundBy, vouched: incarnation, announcedPort: announcedPort)
            peers.entries[id]?.changedAt = now
            peers.entries[id]?.lastContact = now
            return [.peerChanged(id: id, nick: nick, from: nil, to: .alive)]
        }
        // From another address: it may have moved (a NAT's new mapping), or someone passed its
        // datagram on. It moves only if its known address stops answering (Membership+Trust).
        let moveChecks = address != peer.address ? checkMove(id, to: address, payer: address.description, now: now) : []
        peer.vouched = max(peer.vouched, incarnation)
        peer.nick = nick
        peer.rooms = rooms
        if let announcedPort { peer.announcedPort = announcedPort }
        if let sample = rttSample.map({ min($0, TimeSpan.max / 8) }) {
            peer.rtt = peer.rtt.map { ($0 * 7 + sample) / 8 } ?? sample  // TCP's SRTT; both <= max / 8
        }
        peers[id] = peer
        noteContact(id, now: now)
        guard Self.claim(.alive, at: incarnation, beats: peer) else { return moveChecks }
        return setState(id, .alive, incarnation: incarnation, now: now) + moveChecks
    }

    /// Merges a peer list gossiped by `sender`: each record is a claim about a peer, applied by
    /// ``claim(_:at:beats:)`` if its incarnation is one the peer itself has signed (``Peer/vouched``).
    /// A claim past that is hearsay nobody can check (a restart, or a forgery such as "gone at
    /// 2⁶⁴ − 1", which no refutation could beat): the peer is probed at once instead, and at the
    /// record's address too if it differs; its own signed answer decides. Unknown peers gossiped
    /// as alive are not added: they are hearsay, probed until they answer (`Membership+Hearsay`). A claim
    /// that this node is suspect or gone at its incarnation or above raises the incarnation past
    /// it: the refutation, carried by everything this node sends from now on.
    mutating func merge(_ records: [PeerRecord], sentBy sender: NodeID, now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for record in records.prefix(WireLimits.maxPeersPerList) where record.id != sender {
            if record.id == me {
                refute(record)
                continue
            }
            guard !record.host.isEmpty, record.port != 0 else { continue }
            let address = PeerAddress(host: record.host, port: record.port)
            guard let peer = peers[record.id] else {
                // Hearsay: probed, a peer only once it answers (Membership+Hearsay).
                if record.state == .alive { noteHearsay(record.id, at: address, via: sender, now: now) }
                continue
            }
            if record.state != .alive, record.incarnation == peer.incarnation, peer.state != .alive {
                confirm(record.id, by: sender)  // the same suspicion, from another member
            }
            guard Self.claim(record.state, at: record.incarnation, beats: peer) else { continue }
            guard record.incarnation <= peer.vouched else {
                peers.entries[record.id]?.probeSoon = true
                if address != peer.address {
                    directives += checkMove(record.id, to: address, payer: (peers[sender]?.address ?? address).description, now: now)
                }
                continue
            }
            if record.state != .alive, heardDirectly(record.id, now: now), !secondClaim(record, sentBy: sender, now: now) {
                continue
            }
            let accuser: NodeID? = record.state == .suspect ? sender : nil
            directives += setState(record.id, record.state, incarnation: record.incarnation, now: now, accuser: accuser)
        }
        return directives
    }

    /// A suspect or gone claim about a peer that reached this node itself a moment ago: taken only
    /// when a second member makes it (at the same incarnation or above). Until then the peer is
    /// doubted, so it is probed in every period and suspected by this node's own silence.
    private mutating func secondClaim(_ record: PeerRecord, sentBy sender: NodeID, now: MonotonicTime) -> Bool {
        var rumour = peers.entries[record.id]?.rumour
            ?? Rumour(incarnation: record.incarnation, state: record.state, senders: [], since: now)
        if record.incarnation > rumour.incarnation {
            rumour = Rumour(incarnation: record.incarnation, state: record.state, senders: [], since: now)
        }
        guard record.incarnation == rumour.incarnation else { return false }
        rumour.senders.insert(sender)
        peers.entries[record.id]?.rumour = rumour
        if rumour.senders.count >= 2 { return true }
        if peers.entries[record.id]?.doubt == nil {
            peers.entries[record.id]?.doubt = Doubt(since: now)
            peers.entries[record.id]?.probeSoon = true
        }
        peers.entries[record.id]?.doubt?.confirmedBy.insert(sender)
        return false
    }

    /// Answers a claim about this node: "suspect" or "gone" at its incarnation or above is
    /// refuted by rising past it (a sign of poor local health: others could not reach it in
    /// time); "alive" at a higher one is caught up with.
    private mutating func refute(_ record: PeerRecord) {
        // Far past anything this node has used: forged (to push it to 2⁶⁴ − 1, where it could
        // never refute again). Its earlier runs stayed well within the lead.
        guard record.incarnation <= incarnation.addingReportingOverflow(Self.maxIncarnationLead).partialValue
            || incarnation > .max - Self.maxIncarnationLead
        else { return }
        if record.state != .alive, record.incarnation >= incarnation, record.incarnation < .max {
            incarnation = record.incarnation + 1
            raiseHealth()
        } else if record.incarnation > incarnation {
            incarnation = record.incarnation
        }
    }

    /// The peer records for one probe or ack to `recipient` at `destination`, within `budget`
    /// bytes and ``MembershipConfig/maxGossipPeers``, sorted by id: the recipient's own record if
    /// this node thinks it suspect or gone; then fresh changes, newest first; then the next
    /// window of the alive and suspect peers, so with more peers than fit in one list every peer
    /// is still gossiped. Peers at the destination's address are left out (it knows itself).
    mutating func gossip(
        to recipient: NodeID?, destination: PeerAddress, budget: Int, now: MonotonicTime
    ) -> [PeerRecord] {
        let limit = min(config.maxGossipPeers, WireLimits.maxPeersPerList)
        var chosen: [NodeID: PeerRecord] = [:]
        var bytes = 0
        /// Adds the peer's record if it can go on the wire; false once the list is full.
        func take(_ peer: Peer) -> Bool {
            guard chosen.count < limit else { return false }
            guard chosen[peer.id] == nil, let record = Self.record(of: peer) else { return true }
            guard bytes + record.encodedByteCount <= budget else { return false }
            chosen[peer.id] = record
            bytes += record.encodedByteCount
            return true
        }

        if let recipient, let peer = peers[recipient], peer.state != .alive { _ = take(peer) }
        // A peer that has not shown it receives at its address is not named to anyone.
        let others = peers.values.filter { $0.id != recipient && $0.address != destination && vouchesForAddress($0) }
        let fresh = others
            .compactMap { peer in peers.entries[peer.id]?.changedAt.map { (peer, $0) } }
            .filter { (now - $0.1) < config.freshGossipFor }
            .sorted { ($1.1, $0.0.id) < ($0.1, $1.0.id) }
        for (peer, _) in fresh where !take(peer) { break }

        let window = others.filter { $0.state != .gone }.sorted { $0.id < $1.id }
        if !window.isEmpty {
            let start = gossipCursor % window.count
            var looked = 0
            while looked < window.count, take(window[(start + looked) % window.count]) {
                looked += 1
            }
            gossipCursor = (start + looked) % window.count
        }
        return chosen.values.sorted { $0.id < $1.id }
    }

    /// Whether `peer`'s address may be named to others: it answered there, DNS-SD announced it, or
    /// it is reached only through relays (and answered through one).
    public func vouchesForAddress(_ peer: Peer) -> Bool {
        hasTrustedAddress(peer) || (peer.vouched > 0 && relaying.paths[peer.id]?.directLost == true)
    }

    /// The peer as a gossip record, or `nil` if its nick or host could not go on the wire.
    private static func record(of peer: Peer) -> PeerRecord? {
        guard peer.nick.utf8.count <= WireLimits.maxNickBytes,
            !peer.address.host.isEmpty, peer.address.host.utf8.count <= WireLimits.maxHostBytes,
            peer.address.port != 0,
            WireText.check(ArraySlice(peer.nick.utf8)) == .valid,
            WireText.check(ArraySlice(peer.address.host.utf8)) == .valid
        else { return nil }
        return PeerRecord(
            id: peer.id, nick: peer.nick, host: peer.address.host, port: peer.address.port, state: peer.state,
            incarnation: peer.incarnation)
    }

    /// Whether one more peer may be added (one at `address`, if known), making room if the table
    /// is full. Evicted first: the gone peer seen longest ago. A node that signed its own contact
    /// (`verified`) may also take the place, seen longest ago, of a peer that never has (one
    /// DNS-SD announced; an announcement never takes the place of a peer heard directly), then of
    /// one whose address never answered, then of a peer of the host that holds the most entries
    /// if that is more than an eighth of the table and not the newcomer's own: keys are free, so
    /// one machine's many keys cannot keep everyone else out.
    mutating func makeRoom(verified: Bool = false, for address: PeerAddress? = nil) -> Bool {
        guard peers.count >= config.maxPeers else { return true }
        func oldest(_ candidates: [Peer]) -> Peer? {
            candidates.min { ($0.lastSeen, $0.id) < ($1.lastSeen, $1.id) }
        }
        func ofTheCrowdedHost() -> Peer? {
            let crowded = Dictionary(grouping: peers.values, by: \.address.host)
                .max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }
            guard let (host, held) = crowded, held.count > max(config.maxPeers / 8, 1), host != address?.host else {
                return nil
            }
            return oldest(held)
        }
        let gone = oldest(peers.values.filter { $0.state == .gone })
        let evicted = verified
            ? gone ?? oldest(peers.values.filter { $0.vouched == 0 }) ?? oldest(peers.values.filter { !isInRing($0) })
                ?? ofTheCrowdedHost()
            : gone
        guard let evicted else { return false }
        forget(evicted.id)
        return true
    }

    /// Drops peer `id` and everything kept about it, saying nothing.
    mutating func forget(_ id: NodeID) {
        peers[id] = nil
    }

    /// `rooms` as they may go on the wire: valid, distinct, at most ``WireLimits/maxRoomsPerNode``.
    static func wireRooms(_ rooms: [String]) -> [String] {
        var seen: Set<String> = []
        var kept: [String] = []
        for room in rooms where kept.count < WireLimits.maxRoomsPerNode {
            guard room.utf8.count <= WireLimits.maxRoomBytes, WireText.check(ArraySlice(room.utf8)) == .valid,
                seen.insert(room).inserted
            else { continue }
            kept.append(room)
        }
        return kept
    }
}
