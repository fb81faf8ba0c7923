/// What arrives from peers: datagrams (events, digests, membership) and pulls' answers.
///
/// Events go through three gates before a room's log takes them: the screen (cheap checks on
/// what can be seen without the signature), the sender's budget of signature checks, and the
/// signature itself. What fails is counted by why and dropped; nothing a peer sends can stop
/// the node.
extension NodeMachine {
    /// A decoded datagram from `source`. Events are screened, checked against the sender's budget
    /// of signature checks (`NodeMachine+Admission`) and verified; probes and acks must be signed
    /// by their sender.
    mutating func receive(_ message: WireMessage, from source: PeerAddress, now: NodeTime) {
        counters.packetsIn += 1
        membership.arrived(message.encodedByteCount, from: source)
        if message.isMembership, !message.hasValidMembershipSignature {
            return countDropped(.badSignature)
        }
        switch message {
        case .events(let sealed):
            receive(events: sealed, from: source, now: now)
        case .digest(let digest):
            perform(membership.heard(from: digest.from, at: source, now: now.monotonic), now: now)
            // The other side of a direct room this node is not in yet says it holds something.
            if !joined.contains(digest.room), rooms[entry: digest.room].directPeer == digest.from { enterDirect(digest.room, now: now) }
            // Only a known node is answered, and at its known address: a digest with a forged
            // source cannot aim this node's pushes at anyone else.
            guard joined.contains(digest.room), let log = rooms[digest.room]?.log,
                let peer = membership.peers[digest.from]
            else { return }
            // From elsewhere than the peer's known address: it moved (a NAT's new port), and an
            // answer to the old address would die there; or someone names it. Answered once the
            // address is checked (above) and the peer moved, which offers it the room again.
            guard peer.address == source else { return }
            noteHeld(room: digest.room, seq: digest.vector[identity.id], by: peer.id)
            perform(
                replication.digestReceived(
                    room: digest.room, from: peer, remote: log.capped(digest.vector), local: log.vector,
                    divergent: log.divergence(from: digest.vector, fingerprints: digest.fingerprints),
                    evidence: log.evidence(missingFrom: digest.vector), now: now.monotonic),
                now: now)
        case .probe(let probe):
            perform(membership.receive(probe, from: source, now: now.monotonic), now: now)
            read(card: probe.agreementKey, roomTags: probe.roomTags, rooms: probe.rooms, of: probe.from, nick: probe.nick, now: now)
        case .leaving(let leaving):
            perform(membership.receive(leaving, now: now.monotonic), now: now)
        case .ack(let ack):
            perform(membership.receive(ack, from: source, now: now.monotonic), now: now)
            read(card: ack.agreementKey, roomTags: ack.roomTags, rooms: ack.rooms, of: ack.from, nick: ack.nick, now: now)
        case .probeRequest(let request):
            perform(membership.receive(request, from: source, now: now.monotonic), now: now)
        case .nack(let nack):
            perform(membership.receive(nack, from: source, now: now.monotonic), now: now)
        case .syncRequest, .syncResponse, .pieceRequest, .piece:
            countDropped(.misplaced)
        }
    }

    /// The events of a datagram (or of a relay datagram): screened, checked against the sender's
    /// budget of signature checks, verified (one check for a linked run, ``LinkedCheck``), then
    /// taken room by room.
    mutating func receive(events sealed: [Event], from source: PeerAddress, now: NodeTime) {
        var screened = screen(sealed, now: now)
        let allowed = signatureChecks(screened.count, from: source, now: now)
        if allowed < screened.count {
            countDropped(.checkBudget, count: screened.count - allowed)
            screened.removeSubrange(allowed...)
        }
        let valid = LinkedCheck.valid(screened)
        if valid.count < screened.count {
            badSignatures(screened.count - valid.count, from: source, now: now)
            countDropped(.badSignature, count: screened.count - valid.count)
        }
        for (room, events) in Dictionary(grouping: valid, by: \.room).sorted(by: { $0.key < $1.key }) {
            ingest(events, room: room, from: source, now: now)
        }
    }

    /// The answer to a peer's pull (nothing for a room this node has not loaded), without this
    /// node's own events whose commit is under way.
    public func syncResponse(to request: SyncRequest) -> SyncResponse {
        guard var response = rooms[request.room]?.log.response(to: request) else {
            return SyncResponse(room: request.room, events: [], more: false)
        }
        response.events = committedOnly(response.events, room: request.room)
        return response
    }

    /// The events of one datagram or pull batch worth a signature check: in a joined room, not a
    /// copy of one held (or of one earlier in the batch), and not refused by the room's log on
    /// what it can see without the signature (``RoomLog/rejection(of:held:aheadAllowance:reserved:)``).
    /// The rest are counted and dropped, so a datagram of copies costs one check, not hundreds.
    /// An event with a held id but other contents passes: once its signature checks, it proves
    /// its origin equivocated.
    mutating func screen(_ events: [Event], now: NodeTime) -> [Event] {
        var seen = Set<Event>()
        var kept: [Event] = []
        // How far each origin's prefix reaches with the batch's earlier events: a pull brings
        // a new origin's events in seq order, and those are not past a gap.
        var reach: [String: [NodeID: UInt64]] = [:]
        var allowances: [String: Int] = [:]
        for sealed in events {
            // The first message of a direct room this node is not in yet brings it in, if it opens.
            if !joined.contains(sealed.room), rooms[entry: sealed.room].directPeer != nil, rooms[entry: sealed.room].key?.open(sealed) != nil {
                enterDirect(sealed.room, now: now)
            }
            guard joined.contains(sealed.room), let session = rooms[sealed.room] else {
                countDropped(.notJoined)
                continue
            }
            let log = session.log
            // Events compare by their wire bytes, so a copy of a held event is known before it
            // is opened: a replayed private datagram costs no decryption.
            guard !log.holds(sealed) else {
                counters.count(.duplicate)
                continue
            }
            // A private room's events are opened next: what the log compares and shows is the
            // body inside. One the room's key does not open was not written by a member.
            guard let event = session.opened(sealed) else {
                countDropped(.unreadable)
                continue
            }
            guard seen.insert(event).inserted else {
                counters.count(.duplicate)
                continue
            }
            let held = reach[event.room]?[event.origin] ?? log.vector[event.origin]
            let allowance = allowances[event.room] ?? aheadAllowance(for: event.room)
            allowances[event.room] = allowance
            // A first event refused a slot still gets its signature checked: the log then
            // remembers its origin as unseated, so nobody's message waits for it (RoomLog+Seats).
            if let rejection = log.rejection(of: event, held: held, aheadAllowance: allowance, reserved: reservedSeat),
                rejection != .tooManyOrigins || log.isUnseated(event.origin)
            {
                countDropped(NodeCounters.Drop(rejection))
                continue
            }
            if event.seq == held + 1 { reach[event.room, default: [:]][event.origin] = event.seq }
            kept.append(event)
        }
        return kept
    }

    /// Whether `origin` may take one of a room's reserved origin slots
    /// (``RoomLogLimits/reservedOrigins``): there is a node behind it, this one (no share) or a
    /// live peer whose address answered (within its host's share; one found only by answering,
    /// within the share of all such, ``ReservedSeat``). A fresh key's join is not enough.
    func reservedSeat(_ origin: NodeID) -> ReservedSeat {
        Self.reservedSeat(origin, me: identity.id, membership: membership)
    }

    static func reservedSeat(_ origin: NodeID, me: NodeID, membership: Membership) -> ReservedSeat {
        if origin == me { return .unlimited }
        guard membership.hasVouched(origin), let peer = membership.peers[origin] else { return .refused }
        return membership.isAnnounced(peer) ? .announced(peer.address.host) : .host(peer.address.host)
    }

    /// How many bytes `room`'s log may hold past gaps, given what the other rooms hold.
    func aheadAllowance(for room: String) -> Int {
        Self.maximumBufferedBytes - rooms.sessions.reduce(0) { $0 + ($1.room == room ? 0 : $1.log.bufferedBytes) }
    }

    /// Applies verified events: store first (so a crash loses nothing it showed), then show.
    /// Only events the room's log accepted are stored. Two versions of one event quarantine
    /// their origin: the proof is stored and pushed to the room's live peers. `source` is the
    /// address a datagram came from (`nil` for a pull): where to ask first if the events reveal
    /// a gap. Returns the room's version vector afterwards, or `nil` if this node is not in it.
    @discardableResult
    mutating func ingest(_ events: [Event], room: String, from source: PeerAddress?, now: NodeTime) -> VersionVector? {
        guard joined.contains(room) else { return nil }
        let allowance = aheadAllowance(for: room)
        let reserved = { [membership, me = identity.id] (origin: NodeID) in Self.reservedSeat(origin, me: me, membership: membership) }
        var drops: [NodeCounters.Drop] = []
        let (fresh, proofs, outputs, vector) = withRoom(room, now: now) { session in
            var fresh: [Event] = []
            var proofs: [Equivocation] = []
            let events = events.filter { $0.room == room }
            let (outcomes, outputs) = session.ingest(events, now: now.wall, aheadAllowance: allowance, reserved: reserved)
            for (event, outcome) in zip(events, outcomes) {
                switch outcome {
                case .accepted: fresh.append(event)
                case .duplicate: drops.append(.duplicate)
                case .equivocation(let proof, _):
                    proofs.append(proof)
                    // A join that proved a conflict its origin made as a stranger is kept too.
                    if event != proof.first, event != proof.second { fresh.append(event) }
                case .rejected(let rejection): drops.append(NodeCounters.Drop(rejection))
                case .unseated: drops.append(.tooManyOrigins)
                }
            }
            return (fresh, proofs, outputs, session.log.vector)
        }
        for drop in drops { counters.count(drop) }
        counters.eventsReceived += fresh.count
        // An event a peer signed over this node's events shows the peer holds them.
        for event in fresh where event.origin != identity.id && event.context[identity.id] > 0 {
            noteHeld(room: room, seq: event.context[identity.id], by: event.origin)
        }
        if !fresh.isEmpty { emit(.persist(.events(fresh, own: false))) }
        for proof in proofs { emit(.persist(.fault(proof))) }
        for proof in proofs {
            pushEvidence(proof, to: membership.alivePeers(inRoom: room))
        }
        show(outputs, room: room, now: now)
        picturesArrived(fresh.compactMap { $0.body.isSealed ? rooms[room]?.opened($0) : $0 }, room: room, now: now)
        perform(
            replication.received(
                room: room, events: fresh, from: source, state: replicationState(room), now: now.monotonic),
            now: now)
        return vector
    }
}
