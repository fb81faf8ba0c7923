/// Relaying: two peers that cannot reach each other (a strict NAT, a firewall, a path that broke)
/// talk through a live common peer. No relay server: any node relays for the rooms it is in.
///
/// Rules that keep it safe (``accept(_:from:now:)``):
/// - A node relays only for a vouched, live peer (one that signed its own probe or ack to it),
///   and only a datagram that came from that peer's address;
/// - only to a vouched, live peer, with a room the three share (a relayed event must be of a room
///   the two share, or of an unadvertised private room: a direct message);
/// - only payloads that prove themselves: events signed by their origins, and probes, acks and
///   goodbyes signed by the requester itself (``RelayMessage/relayableKinds``);
/// - never a relay of a relay (a relay holds no relay, and one is forwarded only from its own
///   sender's address), and nothing to the datagram's source;
/// - at most ``relaying.budget`` datagrams a second per requester and in all.
///
/// In the shell (what a node does with it; the test harness `RelayNetwork` does all of it):
///
/// ```swift
/// // 1. After every call into membership, carry out the relay outbox too.
/// for directive in membership.takeRelayDirectives() {
///     switch directive {
///     case .sendVia(let message, let target, let relay):   // sign like .send, then wrap
///         let inner = identity.signed(withCard(message)).encoded()
///         if let wrapped = RelayMessage(from: me, to: target, payload: inner) { send(wrapped.encoded(), to: relay) }
///     case .routeChanged(_, let nick, let route):           // "* bea is reachable only through bob"
///         say(route.relay.map { "\(nick) is reachable only through \(membership.peers[$0]!.nick)" }
///             ?? "\(nick) is reachable directly again")
///     }
/// }
/// // 2. A datagram whose envelope says relay (before the message decoder, which refuses kind 10):
/// if RelayMessage.isRelay(bytes), let relay = try? RelayMessage(decoding: bytes) {
///     switch membership.accept(relay, from: source, now: now) {
///     case .forward(let address): send(bytes, to: address)        // untouched
///     case .refuse(let why): count(.relayRefused, why)
///     case .deliver(let content, _, let via):                     // check signatures as always, then
///         switch content {
///         case .message(.probe(let probe)): perform(membership.receive(probe, via: via, now: now))
///         case .message(.ack(let ack)): perform(membership.receive(ack, via: via, now: now))
///         case .message(.leaving(let leaving)): perform(membership.receive(leaving, now: now))
///         case .message(.events(let events)): ingest(events, from: source)   // like a push
///         case .sound(let window): hear(window)                   // like one sent directly
///         default: break                                           // a relay carries nothing else
///         }
///     }
/// }
/// // 3. Every push, answer to a digest (events), proof and goodbye to peer `id`:
/// if let (datagram, address) = membership.route(to: id).datagram(bytes, from: me, to: id) { send(datagram, to: address) }
/// ```
extension Membership {
    /// What to do with a relay datagram that arrived at `now` from `source`: deliver its payload
    /// (it is for this node, from a vouched, live relay), forward it untouched (this node relays
    /// it), or refuse it. The shell still checks the payload's signatures before handling it.
    public mutating func accept(_ relay: RelayMessage, from source: PeerAddress, now: MonotonicTime) -> RelayVerdict {
        guard relay.from != relay.to, relay.from != me else { return .refuse(.misdirected) }
        if let signer = relay.signer, signer != relay.from { return .refuse(.notItsOwn) }
        if relay.to == me {
            // Delivered by a peer that vouched for itself, at its own address.
            guard let relayer = livePeer(at: source), relayer.id != relay.from else { return .refuse(.stranger) }
            return .deliver(relay.content, sender: relay.from, relay: relayer.id)
        }
        guard let requester = peers[relay.from], requester.vouched > 0, requester.state != .gone,
            requester.address == source
        else { return .refuse(.stranger) }
        guard let target = peers[relay.to], target.vouched > 0, target.state != .gone, target.address != source else {
            return .refuse(.unknownTarget)
        }
        let shared = Set(ownRooms).intersection(requester.rooms).intersection(target.rooms)
        guard !shared.isEmpty else { return .refuse(.noSharedRoom) }
        let theirs = Set(requester.rooms).intersection(target.rooms)
        if case .sound(let window) = relay.content, !theirs.contains(window.room) { return .refuse(.noSharedRoom) }
        if case .events(let events) = relay.message {
            let advertised = Set(requester.rooms).union(target.rooms).union(ownRooms)
            for event in events where !theirs.contains(event.room) {
                // A direct message's room is private and advertised by nobody; any other must be shared.
                guard event.room.hasPrefix("~"), !advertised.contains(event.room) else { return .refuse(.noSharedRoom) }
            }
        }
        guard relaying.budget.admit(relay.from, now: now) else { return .refuse(.overRate) }
        return .forward(to: target.address)
    }

    /// Handles a probe that reached this node through `relay` (a ``RelayVerdict/deliver(_:sender:relay:)``
    /// whose signature the shell checked). As a direct probe, except that the sender's address is
    /// not moved to where the datagram came from (the relay's), the path through `relay` is noted,
    /// and the ack goes back the same way (``RelayDirective/sendVia(_:to:relay:)``). A sender not
    /// known yet becomes a peer at the address gossip gave for it, if any.
    ///
    /// Directives: state changes (the sender first), then a `.scheduleTick(at:)` if something new is
    /// due before the last wake-up; the ack and any change of route wait in ``takeRelayDirectives()``.
    public mutating func receive(_ probe: Probe, via relay: NodeID, now: MonotonicTime) -> [MembershipDirective] {
        guard probe.from != me, probe.from != relay, let relayer = peers[relay], relayer.state != .gone else {
            return []
        }
        guard !isReplay(probe) else { return [] }
        let address = peers[probe.from]?.address ?? hearsay[probe.from]?.address ?? PeerAddress(host: "", port: probe.port)
        var changes = contact(
            probe.from, nick: probe.nick, incarnation: probe.incarnation, rooms: probe.rooms, address: address,
            foundBy: .inbound, rttSample: nil, now: now, announcedPort: probe.port == 0 ? nil : probe.port)
        guard peers[probe.from] != nil else { return changes }
        peers.entries[probe.from]?.lastProbe = ProbeStamp(incarnation: probe.incarnation, sequence: probe.sequence)
        notePath(probe.from, via: relay, rtt: nil, now: now)
        changes += merge(probe.peers, sentBy: probe.from, now: now)

        var ack = Ack(
            from: me, nick: nick, incarnation: incarnation, sequence: probe.sequence, echoedSentAt: probe.sentAt,
            rooms: rooms, peers: [])
        ack.peers = gossip(
            to: probe.from, destination: address,
            budget: RelayMessage.maxPayloadBytes - WireMessage.ack(ack).encodedByteCount, now: now)
        queueRelay(.sendVia(.ack(ack), to: probe.from, relay: relayer.address))
        noteRouteChanges()
        return changes + rescheduleIfEarlier(now: now)
    }

    /// Handles an ack that reached this node through `relay`: the answer to a probe of ours sent
    /// through it (matched by sequence number) gives that path's round trip. The sender is in
    /// contact, at the address this node already holds for it (or gossip gave); its peer list is
    /// merged. Directives as for ``receive(_:via:now:)`` of a probe.
    public mutating func receive(_ ack: Ack, via relay: NodeID, now: MonotonicTime) -> [MembershipDirective] {
        guard ack.from != me, ack.from != relay, ack.incarnation >= peers[ack.from]?.vouched ?? 0,
            peers[relay].map({ $0.state != .gone }) == true
        else { return [] }
        var rttSample: TimeSpan?
        if let sent = outstanding[ack.sequence], sent.via == relay, sent.target == .peer(ack.from) {
            outstanding[ack.sequence] = nil
            if ack.echoedSentAt == sent.sentAt { rttSample = max(.zero, now - sent.sentAt) }
        }
        let address = peers[ack.from]?.address ?? hearsay[ack.from]?.address ?? PeerAddress(host: "", port: 0)
        var directives = contact(
            ack.from, nick: ack.nick, incarnation: ack.incarnation, rooms: ack.rooms, address: address,
            foundBy: .gossip, rttSample: nil, now: now)
        guard peers[ack.from] != nil else { return directives }
        notePath(ack.from, via: relay, rtt: rttSample, now: now)
        directives += merge(ack.peers, sentBy: ack.from, now: now)
        if let peer = peers[ack.from], peer.state != .alive { peers.entries[ack.from]?.probeSoon = true }
        noteRouteChanges()
        return directives + rescheduleIfEarlier(now: now)
    }

    /// The relay directives waiting for the shell, oldest first; drain after every call into
    /// this value.
    public mutating func takeRelayDirectives() -> [RelayDirective] {
        defer { relaying.outbox = [] }
        return relaying.outbox
    }

    /// Sends a probe to `id` through `relay` (queued as ``RelayDirective/sendVia(_:to:relay:)``),
    /// remembered so its ack, when it comes back through `relay`, gives that path's round trip.
    mutating func probe(via relay: Peer, to id: NodeID, now: MonotonicTime) {
        let sequence = nonces.next()
        var probe = Probe(
            from: me, nick: nick, incarnation: incarnation, sequence: sequence, sentAt: now, port: port,
            rooms: rooms, peers: [])
        probe.peers = gossip(
            to: id, destination: peers[id]?.address ?? hearsay[id]?.address ?? relay.address,
            budget: RelayMessage.maxPayloadBytes - WireMessage.probe(probe).encodedByteCount, now: now)
        outstanding[sequence] = OutstandingProbe(
            target: .peer(id), address: relay.address, sentAt: now, at: now, via: relay.id)
        queueRelay(.sendVia(.probe(probe), to: id, relay: relay.address))
    }

    /// The vouched, live peer whose address is `address`, if any: who a datagram from there is,
    /// and whom a directive naming only an address (``ReplicationDirective/pushMissing(room:have:to:)``)
    /// is for, so it can be sent along ``route(to:)``.
    public func livePeer(at address: PeerAddress) -> Peer? {
        peers.values.filter { $0.address == address && $0.vouched > 0 && $0.state != .gone }.min { $0.id < $1.id }
    }
}
