/// What Membership and Replication ask for, turned into effects; and the node's timers.
extension NodeMachine {
    // MARK: Sending

    /// Pushes new events to every live peer of the room, one datagram each.
    mutating func push(_ events: [Event], room: String) {
        let peers = roomPeers(room)
        guard !peers.isEmpty else { return }
        send(.events(events), toPeers: peers)
    }

    mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) {
        guard !addresses.isEmpty else { return }
        let trusted = membership.trustedAddresses()
        var size: Int?
        let allowed = addresses.filter { address in
            if trusted.contains(address) { return true }
            size = size ?? message.encodedByteCount
            return membership.mayShip(size!, to: address)
        }
        counters.withheld += addresses.count - allowed.count
        guard !allowed.isEmpty else { return }
        counters.packetsOut += allowed.count
        emit(.send(message, to: allowed))
    }

    /// Sends a datagram as it is (a relay's, a sound window) to `address`, unless the address has
    /// not proven itself and nobody's credit pays for it (docs/PROTOCOL.md, "Trust").
    mutating func transmit(_ bytes: [UInt8], to address: PeerAddress) {
        guard membership.mayShip(bytes.count, to: address) else {
            counters.withheld += 1
            return
        }
        counters.packetsOut += 1
        emit(.datagram(bytes, to: address))
    }

    /// Pushes both events of a proof of equivocation: whoever receives them proves the fault
    /// to itself. One datagram if both fit, else one each.
    mutating func pushEvidence(_ proof: Equivocation, to peers: [Peer]) {
        guard !peers.isEmpty else { return }
        let both = WireMessage.events([proof.first, proof.second])
        if both.encoded().count <= RelayMessage.maxPayloadBytes {
            send(both, toPeers: peers)
        } else {
            for event in [proof.first, proof.second] { send(.events([event]), toPeers: peers) }
        }
    }

    /// ``pushEvidence(_:to:)`` for the peer at `address`, as Replication names it.
    mutating func pushEvidence(_ proof: Equivocation, toPeerAt address: PeerAddress) {
        if let peer = membership.livePeer(at: address) {
            pushEvidence(proof, to: [peer])
        } else {
            for event in [proof.first, proof.second] { send(.events([event]), to: [address]) }
        }
    }

    // MARK: Membership

    mutating func perform(_ directives: [MembershipDirective], now: NodeTime) {
        var vouchedChanged = false
        for directive in directives {
            switch directive {
            case .send(let message, let address):
                // Probes and acks are signed: only this node speaks for itself.
                send(identity.signed(withCard(message)), to: [address])
            case .peerChanged(let id, let nick, _, let to):
                vouchedChanged = true
                show(.peer(id: id, nick: nick, state: to, left: false))
                // Offered the rooms once it answers at its address (.peerProven), not before.
                if to == .alive, let peer = membership.peers[id], membership.vouchesForAddress(peer) {
                    perform(replication.peerAlive(peer, sharedRooms: joined.filter(peer.rooms.contains)), now: now)
                }
            case .peerProven(let id):
                vouchedChanged = true
                if let peer = membership.peers[id], peer.state == .alive {
                    perform(replication.peerAlive(peer, sharedRooms: joined.filter(peer.rooms.contains)), now: now)
                }
            case .peerLeft(let id, let nick):
                vouchedChanged = true
                show(.peer(id: id, nick: nick, state: .gone, left: true))
            case .peerMoved(let id, _):
                // Its new address is exempt from rate limits, and it is offered what the dead one lost.
                vouchedChanged = true
                if let peer = membership.peers[id] {
                    perform(replication.peerAlive(peer, sharedRooms: joined.filter(peer.rooms.contains)), now: now)
                }
            case .scheduleTick(let at):
                membershipTickAt = at
            case .forward(let message, let address):
                // A peer's own signed ack to a probe run for another node: passed on untouched.
                send(message, to: [address])
            }
        }
        performRelayDirectives()
        noteVouched(changed: vouchedChanged)
    }

    /// Tells the world when the peers that vouched for their addresses changed. A goodbye names the
    /// incarnation that ends: the current one, also after a refutation. A proof moves no state (an
    /// address that answered is no news to the reader), but makes a peer live: exempt from rate
    /// limits, and told when this node leaves.
    mutating func noteVouched(changed: Bool = false) {
        if changed || membership.incarnation != lastVouched.incarnation || membership.proofs != lastVouched.proofs {
            let vouched = vouchedAddresses
            let proofs = membership.proofs
            defer { lastVouched.proofs = proofs }
            guard vouched != lastVouched.addresses || membership.incarnation != lastVouched.incarnation else { return }
            lastVouched = (vouched, membership.incarnation, proofs)
            checkBudgets.exempt = vouched
            emit(.vouchedPeers(vouched, incarnation: membership.incarnation))
            reconsiderUnseated()
        }
    }

    /// The origins a room refused a slot that have a node behind them now (vouched for) get
    /// another chance (``RoomLog/reconsider(_:)``). A node that takes a big room in from scratch
    /// (a late joiner, a node back from a power cut) fills the open slots with whoever comes
    /// first, before it has vouched for anyone; without this, the members after them would stay
    /// unseated for good, and their lines never shown.
    mutating func reconsiderUnseated() {
        for room in joined {
            guard let unseated = rooms[room]?.log.unseatedOrigins else { continue }
            for origin in unseated where membership.hasVouched(origin) { rooms[room]?.reconsider(origin) }
        }
    }

    /// The addresses of live peers that signed their own word to this node and answered a probe
    /// of ours there (docs/PROTOCOL.md, "Trust"): exempt from rate limits (a DNS-SD announcement
    /// names any address, and a signed probe only shows a key), and who a goodbye goes to.
    var vouchedAddresses: Set<PeerAddress> {
        Set(membership.peers.values.filter { membership.isProven($0.id) }.map(\.address))
    }

    /// mDNS found nobody: the reader is told why, unless a peer reached this node some other way
    /// (`--peer`, or it found this node).
    mutating func nobodyAnnounced(ownAnnouncementSeen: Bool) {
        guard membership.peers.isEmpty else { return }
        say(.alone(rooms: joined.map { name(of: $0) }, mdnsWorks: ownAnnouncementSeen))
    }

    /// Addresses a peer was found at (mDNS, as a test or the simulator would say). A node of
    /// another protocol version is never a peer (nothing it sends can be read here): the reader
    /// is told once which of the two should update.
    mutating func discovered(
        id: NodeID, nick: String, address: PeerAddress, rooms: [String], protocolVersion: Int, now: NodeTime
    ) {
        guard id != identity.id else { return }
        let ours = Int(WireProtocol.version)
        guard protocolVersion == ours else {
            if unanswered.tellOnce(id) {
                say(.otherProtocol(nick: nick, address: address, theirs: protocolVersion, ours: ours))
            }
            return
        }
        perform(membership.addDiscovered(id: id, nick: nick, address: address, rooms: rooms, now: now.monotonic), now: now)
        unanswered.announced(id, now: now.monotonic)
    }

    // MARK: Replication

    mutating func perform(_ directives: [ReplicationDirective], now: NodeTime) {
        for directive in directives {
            switch directive {
            case .sendDigest(let room, let address):
                guard let log = rooms[room]?.log else { continue }
                // A digest is not signed, so no relay carries it: a peer reached only through
                // another hears of what it misses from the pushes and the digests of others.
                send(
                    .digest(RoomDigest(from: identity.id, room: room, vector: log.vector, fingerprints: log.fingerprints)),
                    toPeerAt: address)
            case .pushMissing(let room, let have, let address):
                guard let log = rooms[room]?.log else { continue }
                let events = committedOnly(log.push(missingFor: have, config: replication.config), room: room)
                guard !events.isEmpty else { continue }
                // Proofs first, if the events name an equivocator's dropped seqs.
                for proof in log.evidence(for: events) { pushEvidence(proof, toPeerAt: address) }
                send(.events(events), toPeerAt: address)
            case .pull(let room, let peer, let address):
                schedulePull(PullRequest(room: room, peer: peer, address: address))
            case .pushEvidence(let proof, let address):
                pushEvidence(proof, toPeerAt: address)
            case .recheck(let room, let peer, let origin, let from, let address):
                schedulePull(PullRequest(room: room, peer: peer, address: address, recheck: origin, from: from))
            case .scheduleTick(let at):
                replicationTickAt = at
            }
        }
    }

    // MARK: Timers

    /// The timer wakes at least this often.
    public static let maximumSleep = TimeSpan.seconds(1)

    /// Runs whatever is due: hold-back releases, the membership tick, anti-entropy rounds.
    mutating func tick(now: NodeTime) {
        // Messages held in a room this node has left stay held: nobody is reading there.
        for room in joined {
            guard let wake = rooms[room]?.nextWake, wake <= now.wall else { continue }
            let (outputs, discarded) = withRoom(room, now: now) { ($0.wake(now: now.wall), $0.takeDiscarded()) }
            if !discarded.isEmpty { emit(.persist(.delete(discarded, room: room))) }
            show(outputs, room: room, now: now)
        }
        if membershipTickAt <= now.monotonic {
            perform(membership.tick(now: now.monotonic), now: now)
        }
        if replicationTickAt <= now.monotonic {
            var states: [String: Replication.RoomState] = [:]
            for room in joined { states[room] = replicationState(room) }
            perform(replication.tick(now: now.monotonic, rooms: states), now: now)
        }
        pictureTick(now: now)
        for peer in unanswered.due(now: now.monotonic, peers: membership.peers, ownPort: port) {
            say(.unanswered(peer))
        }
    }

    /// When ``tick(now:)`` is next due, on the monotonic clock every driver's timer runs on: the
    /// membership and replication ticks, the next hold-back release and a wait for delivery's
    /// next poll (due on the wall clock), and at the latest ``maximumSleep`` from now.
    public func nextDeadline(now: NodeTime) -> MonotonicTime {
        var deadline = min(now.monotonic + Self.maximumSleep, membershipTickAt, replicationTickAt)
        // Both due on the wall clock: as long after `now` as they are after `now.wall`.
        let onTheWall = joined.compactMap { rooms[$0]?.nextWake } + [deliveryWait?.nextPoll].compactMap { $0 }
        if let due = onTheWall.min() {
            deadline = min(deadline, now.monotonic + max(.zero, due - now.wall))
        }
        return deadline
    }
}
