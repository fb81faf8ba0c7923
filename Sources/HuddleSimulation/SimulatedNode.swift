import HuddleCore

/// One node of a simulation: the same pure state machines a real node runs (``Membership``,
/// ``Replication``, ``RoomSession``), wired the way the `Node` actor wires them, with a virtual
/// clock and the network in place of sockets. Time is virtual microseconds.
struct SimulatedNode {
    let index: Int
    let identity: NodeIdentity
    let address: PeerAddress
    let room: String
    var membership: Membership
    var replication: Replication
    var session: RoomSession
    /// When each state machine wants its next tick.
    var membershipTickAt: Int64 = 0
    var replicationTickAt: Int64 = 0

    /// What handling one input did.
    struct Effects {
        /// Datagrams (and TCP messages) to send, in order.
        var sends: [Send] = []
        /// Chat events this node showed.
        var shown: [EventID] = []
        /// Peers whose state this node reported changed, and to what.
        var changes: [(id: NodeID, to: PeerState)] = []
    }

    struct Send {
        var message: WireMessage
        var to: PeerAddress
        /// Sent over TCP: the network retransmits it instead of losing it.
        var reliable: Bool
    }

    init(index: Int, identity: NodeIdentity, room: String, seed: UInt64, membership config: MembershipConfig) {
        self.index = index
        self.identity = identity
        self.room = room
        address = Self.address(of: index)
        membership = Membership(
            me: identity.id, nick: "n\(index)", port: 7400, incarnation: 1, config: config,
            random: SplitMix64(seed: seed ^ 0x5EED))
        membership.rooms = [room]
        replication = Replication(random: SplitMix64(seed: seed))
        session = RoomSession(room: room, reader: identity.id)
    }

    /// Node `index`'s address: 10.0.x.y, port 7400.
    static func address(of index: Int) -> PeerAddress {
        PeerAddress(host: "10.0.\(index / 250).\(index % 250 + 1)", port: 7400)
    }

    /// When the node next needs ``tick(now:)``.
    var nextTick: Int64 { min(membershipTickAt, replicationTickAt) }

    // MARK: Inputs

    /// Another node was found (as mDNS would report it).
    mutating func discovered(_ other: SimulatedNode, now: Int64) -> Effects {
        var effects = Effects()
        perform(
            membership.addDiscovered(
                id: other.identity.id, nick: "n\(other.index)", address: other.address, rooms: [room], now: now),
            now: now, into: &effects)
        return effects
    }

    /// This node makes an event (a join, a chat message) and pushes it.
    mutating func originate(_ body: EventBody, now: Int64) -> (Event, Effects) {
        var effects = Effects()
        let (event, outputs) = try! session.compose(body, now: now / 1000, signer: identity)
        collect(outputs, into: &effects)
        for peer in membership.alivePeers(inRoom: room) {
            effects.sends.append(Send(message: .events([event]), to: peer.address, reliable: false))
        }
        perform(replication.originated(event, state: replicationState, now: now), now: now, into: &effects)
        return (event, effects)
    }

    /// Time passed.
    mutating func tick(now: Int64) -> Effects {
        var effects = Effects()
        if membershipTickAt <= now {
            perform(membership.tick(now: now), now: now, into: &effects)
        }
        if replicationTickAt <= now {
            perform(replication.tick(now: now, rooms: [room: replicationState]), now: now, into: &effects)
        }
        return effects
    }

    /// A message arrived from `source`.
    mutating func receive(_ message: WireMessage, from source: PeerAddress, now: Int64) -> Effects {
        var effects = Effects()
        switch message {
        case .events(let events):
            ingest(events, from: source, now: now, into: &effects)
        case .digest(let digest):
            perform(membership.heard(from: digest.from, now: now), now: now, into: &effects)
            guard digest.room == room, let peer = membership.peers[digest.from] else { break }
            let log = session.log
            perform(
                replication.digestReceived(
                    room: room, from: peer, remote: log.capped(digest.vector), local: log.vector,
                    divergent: log.divergence(from: digest.vector, fingerprints: digest.fingerprints),
                    evidence: log.evidence(missingFrom: digest.vector), now: now),
                now: now, into: &effects)
        case .probe(let probe):
            perform(membership.receive(probe, from: source, now: now), now: now, into: &effects)
        case .ack(let ack):
            perform(membership.receive(ack, from: source, now: now), now: now, into: &effects)
        case .probeRequest(let request):
            perform(membership.receive(request, from: source, now: now), now: now, into: &effects)
        case .nack(let nack):
            perform(membership.receive(nack, from: source, now: now), now: now, into: &effects)
        case .leaving(let leaving):
            perform(membership.receive(leaving, now: now), now: now, into: &effects)
        case .syncRequest(let request):
            effects.sends.append(
                Send(message: .syncResponse(session.log.response(to: request)), to: source, reliable: true))
        case .syncResponse(let response):
            let before = session.log.vector
            ingest(response.events, from: nil, now: now, into: &effects)
            let peer = membership.peers.values.first { $0.address == source }
            if response.more, session.log.vector != before, let peer {
                effects.sends.append(Send(message: syncRequest(), to: peer.address, reliable: true))
            } else if let peer {
                replication.pullFinished(room: room, peer: peer.id)
            }
        }
        return effects
    }

    // MARK: Pieces

    private var replicationState: Replication.RoomState {
        Replication.RoomState(peers: membership.alivePeers(inRoom: room), log: session.log)
    }

    private func syncRequest(recheck origin: NodeID? = nil, from seq: UInt64 = 1) -> WireMessage {
        var have = session.log.vector
        if let origin { have[origin] = min(have[origin], seq - 1) }
        return .syncRequest(SyncRequest(from: identity.id, room: room, have: have, limit: 1024))
    }

    private mutating func ingest(_ events: [Event], from source: PeerAddress?, now: Int64, into effects: inout Effects) {
        // As the node does: replication hears of the events that were new.
        var fresh: [Event] = []
        for event in events where event.room == room && !session.log.holds(event) {
            let (outcome, outputs) = session.ingest(event, now: now / 1000)
            collect(outputs, into: &effects)
            if case .accepted = outcome { fresh.append(event) }
        }
        perform(
            replication.received(room: room, events: fresh, from: source, state: replicationState, now: now),
            now: now, into: &effects)
    }

    private func collect(_ outputs: [RoomOutput], into effects: inout Effects) {
        for output in outputs {
            if case .message(let shown) = output { effects.shown.append(shown.event.id) }
            if case .earlier(let messages) = output { effects.shown += messages.map(\.event.id) }
        }
    }

    private mutating func perform(_ directives: [MembershipDirective], now: Int64, into effects: inout Effects) {
        for directive in directives {
            switch directive {
            case .send(let message, let address):
                effects.sends.append(Send(message: message, to: address, reliable: false))
            case .forward(let message, let address):
                effects.sends.append(Send(message: message, to: address, reliable: false))
            case .peerLeft(let id, _):
                effects.changes.append((id, .gone))
            case .peerChanged(let id, _, _, let to):
                effects.changes.append((id, to))
                if to == .alive, let peer = membership.peers[id], peer.rooms.contains(room) {
                    perform(replication.peerAlive(peer, sharedRooms: [room]), now: now, into: &effects)
                }
            case .scheduleTick(let at):
                membershipTickAt = at
            }
        }
    }

    private mutating func perform(_ directives: [ReplicationDirective], now: Int64, into effects: inout Effects) {
        for directive in directives {
            switch directive {
            case .sendDigest(let room, let address):
                let digest = RoomDigest(
                    from: identity.id, room: room, vector: session.log.vector, fingerprints: session.log.fingerprints)
                effects.sends.append(Send(message: .digest(digest), to: address, reliable: false))
            case .pushMissing(_, let have, let address):
                let events = session.log.push(missingFor: have, config: replication.config)
                if !events.isEmpty { effects.sends.append(Send(message: .events(events), to: address, reliable: false)) }
            case .pull(_, _, let address):
                effects.sends.append(Send(message: syncRequest(), to: address, reliable: true))
            case .pushEvidence(let proof, let address):
                effects.sends.append(Send(message: .events([proof.first, proof.second]), to: address, reliable: false))
            case .recheck(_, _, let origin, let seq, let address):
                effects.sends.append(Send(message: syncRequest(recheck: origin, from: seq), to: address, reliable: true))
            case .scheduleTick(let at):
                replicationTickAt = at
            }
        }
    }
}
