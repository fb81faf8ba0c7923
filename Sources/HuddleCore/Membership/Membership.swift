/// Who is out there: the peers one node knows, whether each is alive, suspect or gone, how far
/// away it is (round-trip time) and which rooms it is in, as a pure state machine after SWIM
/// (Das, Gupta and Motivala, 2002): one probe target per period, suspicion that the suspected
/// node refutes by raising its incarnation, and news spread in the probes and acks themselves.
///
/// It does no I/O, reads no clock and draws no random numbers. The shell owns the UDP socket and
/// a timer; it passes its monotonic clock in as `now` (a ``MonotonicTime``), feeds every received
/// ``Probe`` and ``Ack`` with the datagram's source address, calls ``heard(from:now:)`` for any
/// other valid message from a node, and carries out the ``MembershipDirective``s that come back:
/// send a message, report a state change, wake up for ``tick(now:)`` at a time. It calls
/// ``tick(now:)`` once at start, after adding its seeds.
///
/// ```swift
/// var membership = Membership(me: id, nick: "alice", port: 7400, incarnation: 1)
/// membership.rooms = ["superbowl"]
/// membership.addSeed(PeerAddress(parsing: "192.0.2.12:7400")!)
/// membership.tick(now: .start)
/// // [.send(.probe(...), to: 192.0.2.12:7400), .scheduleTick(at: .start + .seconds(1))]
/// membership.receive(ack, from: PeerAddress(host: "192.0.2.12", port: 7400), now: .start + .microseconds(420))
/// // [.peerChanged(id: bob, nick: "bob", from: nil, to: .alive), ...]; bob's rtt is 420 µs
/// ```
///
/// How it works:
/// - **Probing.** Each ``MembershipConfig/probeInterval`` (a period) one alive or suspect peer
///   is probed: the next by id after the last one (a ring), so each peer is probed once in N
///   periods and, with every node doing the same, about one probe a period reaches any node.
///   The ring is two, taken in turns: peers announced over DNS-SD or named by the viewer, and, a
///   host at a time, peers proven only by answering; keys that answer probes stretch only their
///   own ring (``nextTarget()``).
///   While none of the period's probes is answered, up to ``MembershipConfig/probeAttempts`` go
///   out, evenly spaced; with each retry up to ``MembershipConfig/indirectProbes`` other alive
///   members are asked to probe the peer for us (a ``ProbeRequest``, SWIM's ping-req): each
///   forwards the peer's signed ack, or says it got none (a ``Nack``). Each node sends about two
///   membership datagrams a period (a probe and an ack), however many peers it has.
/// - **Doubt before suspicion (Lifeguard).** A period that ends unanswered makes an alive peer
///   *doubted*, which nobody is told; a doubted peer is probed (directly and through helpers)
///   in every period besides the ring's target until it answers. Only when it has answered
///   nothing, directly or through helpers, for ``MembershipConfig/silenceBeforeSuspicion`` is it
///   suspect: a node frozen for two seconds, or a lossy path, is not reported as "not answering".
/// - **Suspicion and refutation.** A suspect peer is gone after a timeout unless it refutes: a
///   node that hears itself called suspect or gone at its own incarnation or above raises its
///   incarnation past it, and "alive at the new incarnation" beats the suspicion everywhere. The
///   timeout is Lifeguard's dynamic one: ``MembershipConfig/suspicionTimeout`` while nobody else
///   confirms, shrinking toward ``MembershipConfig/minSuspicionTimeout`` as other members do (a
///   peer gossiping the same suspicion, a helper's nack).
/// - **Local health (Lifeguard).** A score that rises when this node itself looks slow (its
///   wake-up came late, helpers it asked sent no nack, it had to refute a suspicion of itself) and
///   falls with each period answered at once; the period, the probe timeout and the silence before
///   suspicion are stretched by (1 + score), so a starved node does not accuse healthy peers. The
///   time a late wake-up missed is added to the running period, so acks that arrived meanwhile are
///   read before the period is judged.
/// - **One order for every claim.** A peer's (state, incarnation) is replaced by a claim with a
///   higher incarnation, or with the same incarnation and a worse state (alive < suspect < gone).
///   Claims come from gossip, from this node's own probing, and from the peer itself (a probe or
///   ack carries its incarnation: "alive at i"). Every node applies the same order, so all
///   converge on the same view. One exception: a suspect or gone claim about a peer this node has
///   heard from directly within ``MembershipConfig/silenceBeforeSuspicion`` is not taken on one
///   gossip record; the peer is doubted (probed every period) until it answers, or a second member
///   makes the same claim.
/// - **Gossip.** Probes and acks carry peer records: first the recipient's own record if this
///   node thinks it suspect or gone (so it can refute), then the states that changed in the last
///   ``MembershipConfig/freshGossipFor``, newest first, then a rotating window of the alive and
///   suspect peers, so one seed is enough to learn everyone. Unknown nodes gossiped as alive are
///   probed, and become peers when they answer (`Membership+Hearsay`); gone and suspect ones are
///   not.
/// - **Probed at once, outside the ring:** a peer just learned of (by gossip or DNS-SD), one
///   that moved, one we think suspect or gone that sends us anything (so it hears the claim and
///   refutes), and, after this node's rooms change, everyone (peers learn rooms from probes and
///   acks). A gone peer is probed every ``MembershipConfig/goneProbeInterval``, so one that comes
///   back is noticed.
/// - Everything a peer could inflate is bounded: known peers (``MembershipConfig/maxPeers``),
///   rooms per peer (``WireLimits/maxRoomsPerNode``), peer lists (``WireLimits/maxPeersPerList``
///   read, ``MembershipConfig/maxGossipPeers`` sent, always within ``WireLimits/maxDatagramBytes``),
///   and unanswered probes (forgotten after a period plus the suspicion timeout).
/// - **Only a peer speaks for itself.** Probes and acks are signed (the shell checks them), so
///   what a peer says of itself is its own. Peer records are hearsay: a claim is believed only at
///   an incarnation the peer itself has signed; past that, the peer is asked.
/// - Whatever is sent or reported is ordered by node id (then address), never by dictionary order.
public struct Membership: Sendable {
    /// This node.
    public let me: NodeID
    /// This node's nick, sent in probes and acks.
    public var nick: String
    /// The port this node listens on (UDP and TCP), sent in probes.
    public let port: UInt16
    /// This node's incarnation, sent in probes and acks. The shell starts it (higher on every
    /// start); it rises past any claim that this node is suspect or gone.
    public internal(set) var incarnation: UInt64
    /// Timing and bounds.
    public let config: MembershipConfig
    /// Everyone this node knows, by id, gone peers included, with all that is kept about each
    /// (``PeerTable``): a peer leaves in one line.
    public internal(set) var peers = PeerTable()

    /// This node's rooms, sent in probes and acks. Setting it keeps the first
    /// ``WireLimits/maxRoomsPerNode`` distinct rooms that can go on the wire (at most
    /// ``WireLimits/maxRoomBytes`` bytes, no control characters), in the order given; a change
    /// gets every alive and suspect peer probed at the next tick, so each learns it.
    public var rooms: [String] {
        get { ownRooms }
        set {
            let rooms = Self.wireRooms(newValue)
            guard rooms != ownRooms else { return }
            ownRooms = rooms
            peers.updateEach { if $0.peer.state != .gone { $0.probeSoon = true } }
        }
    }

    /// Seed addresses nobody has answered from yet, in order.
    public var seeds: [PeerAddress] { seedProbes.keys.sorted() }

    var ownRooms: [String] = []
    /// The current period's probe target, if a period is running.
    var period: Period?
    /// When the next period may start.
    var nextPeriodAt: MonotonicTime = .distantPast
    /// The inner ring's last target: the next is the first peer by id after it (``nextTarget()``).
    var lastTarget: NodeID?
    /// The outer ring's last host, the last target of each of its hosts, and whether the latest
    /// period was the outer ring's turn (``nextTarget()``).
    var lastOuterHost: String?
    var outerCursor: [String: NodeID] = [:]
    var outerTurn = false
    /// How many times a peer's address became proven (`Membership+Trust`): a shell that keeps the
    /// set of live peers' addresses recomputes it when this changes.
    public internal(set) var proofs = 0
    /// What may go to addresses that have not proven themselves (`Membership+Trust`).
    public internal(set) var sendCredit = SendCredit()
    /// Nodes only gossip named, waiting to answer (see `Membership+Hearsay`).
    var hearsay: [NodeID: Hearsay] = [:]
    /// Our indirect probes in flight: which helpers were asked to reach whom, with which send time.
    var indirect: [IndirectKey: IndirectRequest] = [:]
    /// The local health score, 0 ... ``MembershipConfig/maxHealth``.
    public internal(set) var health = 0
    /// Chooses helpers for indirect probes.
    var random: SplitMix64
    /// Unresolved seeds, with when each was last probed.
    var seedProbes: [PeerAddress: SeedProbe] = [:]
    /// Our probes not answered yet, by sequence number.
    var outstanding: [UInt64: OutstandingProbe] = [:]
    /// Our probes' sequence numbers: rising, with a nonce only this node knows.
    var nonces: ProbeNonces
    /// Where the next rotating window starts in the id-sorted candidates, so every peer gets gossiped.
    var gossipCursor = 0
    /// The last wake-up time handed to the shell, to tell it when something falls due earlier.
    var scheduledTick: MonotonicTime?
    /// Routes and relays, apart from SWIM's core (see `Membership+Routes`, `Membership+Relay`).
    var relaying = Relaying()

    /// A node that knows nobody yet. `random` chooses the helpers of indirect probes (by default
    /// seeded from the id and incarnation); `nonceKey` is the secret of its probes' nonces
    /// (``NodeIdentity/probeNonceKey(incarnation:)``; by default drawn from `random`, for tests).
    public init(
        me: NodeID, nick: String, port: UInt16, incarnation: UInt64, config: MembershipConfig = .init(),
        random: SplitMix64? = nil, nonceKey: [UInt8]? = nil
    ) {
        self.me = me
        self.nick = nick
        self.port = port
        self.incarnation = incarnation
        self.config = config
        var random = random ?? SplitMix64(seed: incarnation ^ UInt64(truncatingIfNeeded: me.hashValue))
        let key = nonceKey ?? (0..<4).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }
        self.nonces = ProbeNonces(key: key)
        self.random = random
    }

    /// The live (alive or suspect) peers in `room`, by id, whose address stands (proven, named by
    /// this node's side, or relay-only: ``vouchesForAddress(_:)``): where the room's events are
    /// pushed.
    public func alivePeers(inRoom room: String) -> [Peer] {
        peers.values
            .filter { $0.state != .gone && $0.rooms.contains(room) && vouchesForAddress($0) }
            .sorted { $0.id < $1.id }
    }

    /// Whether node `id` is a peer with a node behind it, not gone: it signed a probe or ack to
    /// this node and either answered a probe of ours at its own address (``isProven(_:)``) or,
    /// reachable only through relays, answered through one. A key alone is not enough.
    public func hasVouched(_ id: NodeID) -> Bool {
        guard let peer = peers[id], peer.vouched > 0, peer.state != .gone else { return false }
        return peer.addressProven || relaying.paths[id]?.directLost == true
    }

    /// Adds an address to probe (from `--peer HOST:PORT`) whose node id is not known yet. It is
    /// probed from the next ``tick(now:)`` on, every ``MembershipConfig/probeInterval``, until a
    /// node answers from it (or probes us from exactly that address).
    public mutating func addSeed(_ address: PeerAddress) {
        if seedProbes[address] == nil {
            seedProbes[address] = SeedProbe()
        }
    }

    /// A peer found by DNS-SD. An unknown one is added as alive (``PeerSource/mdns``) and probed
    /// at once; for a known one the nick and rooms are updated, and it is probed at once if its
    /// address changed or it is gone (it may be back). Being announced is not evidence of being
    /// alive: the state changes only by contact or gossip.
    public mutating func addDiscovered(
        id: NodeID, nick: String, address: PeerAddress, rooms: [String], now: MonotonicTime
    ) -> [MembershipDirective] {
        guard id != me else { return [] }
        var directives: [MembershipDirective] = []
        let rooms = Array(rooms.prefix(WireLimits.maxRoomsPerNode))
        if var peer = peers[id] {
            peer.nick = nick
            peer.rooms = rooms
            // Hearsay, or the peer reaching us first, gives way to its own announcement on this
            // network; a seed stays a seed (the user named it).
            if peer.foundBy == .gossip || peer.foundBy == .inbound { peer.foundBy = .mdns }
            if peer.address != address || peer.state == .gone {
                peer.address = address
                peer.announcedPort = address.port
                peers.entries[id]?.probeSoon = true
            }
            peers[id] = peer
        } else if makeRoom() {
            peers[id] = Peer(
                id: id, nick: nick, address: address, rooms: rooms, state: .alive, incarnation: 0, lastSeen: now,
                rtt: nil, foundBy: .mdns)
            peers.entries[id]?.probeSoon = true
            directives.append(.peerChanged(id: id, nick: nick, from: nil, to: .alive))
        }
        return directives + rescheduleIfEarlier(now: now)
    }

    /// Moves time forward to `now`: suspicions that ran out make peers gone, a period that ended
    /// unanswered makes its peer suspect, and the probes that are due go out (the period's, gone
    /// peers', those to probe at once, seeds'). The last directive is always
    /// `.scheduleTick(at:)`: the next time anything is due, at most one
    /// ``MembershipConfig/probeInterval`` away.
    ///
    /// Directives come in this order: state changes (expired suspicions by id, then the period's
    /// peer), the period's probe, probes to gone peers and to peers probed at once by id, probes to
    /// seeds by address, the wake-up.
    public mutating func tick(now: MonotonicTime) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        if let asked = scheduledTick, (now - asked) > lateTick { wokeLate(by: now - asked) }
        outstanding = outstanding.filter { (now - $0.value.at) < config.probeMemory }
        indirect = indirect.filter { (now - $0.value.at) < config.probeMemory }
        forgetStale(now: now)
        directives += settleMoves(now: now)
        directives += watchUnproven(now: now)
        expirePaths(now: now)

        for id in peers.keys.sorted() {
            guard let peer = peers[id], peer.state == .suspect, (suspicionEnds(id) ?? now) <= now else { continue }
            directives += setState(id, .gone, incarnation: peer.incarnation, now: now)
        }
        directives += suspectTheSilent(now: now)
        directives += runPeriod(now: now)
        directives += dueNacks(now: now)

        let due = peers.ids { $0.probeSoon || ($0.peer.state == .gone && goneProbeDue($0.peer.id) <= now) }
        peers.updateEach { $0.probeSoon = false }
        for id in due {
            guard let peer = peers[id] else { continue }
            if peer.state == .gone { peers.entries[id]?.goneProbedAt = now }
            directives.append(probe(peer.address, target: .peer(id), now: now))
        }
        directives += probeHearsay(now: now)
        for address in seedProbes.keys.sorted() {
            guard let seed = seedProbes[address], seedDue(seed) <= now else { continue }
            seedProbes[address]?.lastProbeAt = now
            directives.append(probe(address, target: .seed(address), now: now))
        }

        noteRouteChanges()
        let idle = now + periodLength
        let wake = max(min(nextDue(now: now) ?? idle, idle), now + .microseconds(1))
        scheduledTick = wake
        directives.append(.scheduleTick(at: wake))
        return directives
    }

    /// Handles a probe that arrived at `now` from `source` (the datagram's source address).
    ///
    /// The sender is in direct contact at `source`, the address its datagram came from (behind a
    /// NAT, the router's mapping; `probe.port` is kept as its announced port, for pulls), with the
    /// nick, rooms and incarnation it sent; its peer list is merged (which may raise this node's
    /// incarnation, to refute a claim about it). Then it is answered with an ack to `source`, echoing the
    /// probe's sequence number and send time. A probe from this node itself is not answered (a
    /// seed that turns out to be this node is dropped).
    ///
    /// Directives: the ack, then state changes (the sender first, then gossiped peers by list
    /// order), then a `.scheduleTick(at:)` if something new is due before the last wake-up.
    public mutating func receive(_ probe: Probe, from source: PeerAddress, now: MonotonicTime) -> [MembershipDirective] {
        guard probe.from != me else {
            if let sent = outstanding[probe.sequence], sent.sentAt == probe.sentAt,
                case .seed(let seed) = sent.target
            {
                outstanding[probe.sequence] = nil
                seedProbes[seed] = nil
            }
            return []
        }
        guard !isReplay(probe) else { return [] }
        // Answered where it came from: an answer to the announced port would die at a NAT that
        // gave the sender another one (it keeps the port only when it is free).
        let sender = source
        let announced = probe.port == 0 ? source.port : probe.port
        // From the very address of a seed the user named: the user's word for it, as if it had
        // answered there. (From another port, the seed is resolved, the address not vouched for.)
        let seed = seedProbes.removeValue(forKey: sender) != nil
        seedProbes[PeerAddress(host: source.host, port: announced)] = nil
        // A known peer's probe from an address nobody has proven: its NAT's new mapping, or a
        // stranger passing it on. Not acked there: the check of that address (a probe, which
        // answers the peer's period as well) is what the bytes that came from there pay for.
        let checking = peers[probe.from].map { $0.address != sender && !isTrusted(sender) } ?? false
        var changes = contact(
            probe.from, nick: probe.nick, incarnation: probe.incarnation, rooms: probe.rooms, address: sender,
            foundBy: seed ? .seed : .inbound, rttSample: nil, now: now, announcedPort: announced)
        // Kept for known peers only, so fresh keys cannot grow it past the peer table.
        if peers[probe.from] != nil {
            peers.entries[probe.from]?.lastProbe = ProbeStamp(incarnation: probe.incarnation, sequence: probe.sequence)
        }
        changes += merge(probe.peers, sentBy: probe.from, now: now)
        if checking { return changes + rescheduleIfEarlier(now: now) }
        // From an address that has not proven itself, which this node has not just asked: answered
        // with a probe of ours, which answers the sender's period (and resolves its seed) as an
        // ack would, and asks the address to prove itself. An ack echoes nothing a stranger could
        // not have made up; the probe's nonce it cannot (Membership+Trust).
        if !isTrusted(sender), !outstanding.values.contains(where: { $0.address == sender }), peers[probe.from] != nil {
            return changes + [self.probe(sender, target: .peer(probe.from), now: now, asking: true)]
                + rescheduleIfEarlier(now: now)
        }

        var ack = Ack(
            from: me, nick: nick, incarnation: incarnation, sequence: probe.sequence, echoedSentAt: probe.sentAt,
            rooms: rooms, peers: [])
        // Gossip only to an address that has proven itself: the ack to a forged source stays small.
        if isTrusted(sender) {
            ack.peers = gossip(
                to: probe.from, destination: sender,
                budget: WireLimits.maxDatagramBytes - WireMessage.ack(ack).encodedByteCount, now: now)
        }
        var answer: [MembershipDirective] = [.send(.ack(ack), to: sender)]
        // It answered a probe of ours with one of its own, asking this address to prove itself:
        // the ack does, and a second probe of ours, which it now acks, proves its address here at
        // once, rather than next period (and so what it sends next is not held for credit).
        if !isTrusted(sender), peers[probe.from]?.address == sender,
            outstanding.values.filter({ $0.address == sender }).count < 2
        {
            answer.append(self.probe(sender, target: .peer(probe.from), now: now))
        }
        return answer + changes + rescheduleIfEarlier(now: now)
    }

    /// Handles an ack that arrived at `now` from `source`.
    ///
    /// It is matched to our probe by sequence number alone (a probe sent to "localhost:7400" may
    /// be answered from 127.0.0.1:7400): a matched probe to a seed resolves the seed to the node
    /// that answered, and a matched send time gives a round-trip sample (`now − echoedSentAt`).
    /// The sender is in direct contact at the address we probed (or, unmatched, at its known
    /// address, else at `source`), with the nick, rooms and incarnation it sent; its peer list is
    /// merged. If we still think it suspect or gone, it is probed again at once (that probe
    /// carries the claim, so it refutes).
    ///
    /// Directives: state changes (the sender first), then a `.scheduleTick(at:)` if something new
    /// is due before the last wake-up.
    public mutating func receive(_ ack: Ack, from source: PeerAddress, now: MonotonicTime) -> [MembershipDirective] {
        guard ack.from != me, ack.incarnation >= peers[ack.from]?.vouched ?? 0 else { return [] }
        var address = peers[ack.from]?.address ?? source
        var foundBy = PeerSource.inbound
        var rttSample: TimeSpan?
        var directives: [MembershipDirective] = []
        var sent = outstanding.removeValue(forKey: ack.sequence)
        if let probe = sent, case .peer(let id) = probe.target, id != ack.from {
            // Another node's ack with a sequence number of ours (a helper forwarded it): not an
            // answer to that probe.
            outstanding[ack.sequence] = probe
            sent = nil
        }
        if let sent {
            // A probe sent through a relay went to the relay's address, which is not the peer's.
            if sent.via == nil { address = sent.address }
            if let requester = sent.relayFor {
                // Run for another node: the send time is its, and so is the answer.
                if ack.echoedSentAt == sent.sentAt, let peer = peers[requester], peer.state != .gone {
                    directives.append(.forward(.ack(ack), to: peer.address))
                }
            } else if sent.via == nil, ack.echoedSentAt == sent.sentAt {
                rttSample = max(.zero, now - sent.sentAt)
                directAnswered(ack.from, now: now)
            }
            switch sent.target {
            case .seed(let seed):
                seedProbes[seed] = nil
                foundBy = .seed
            case .peer:
                foundBy = .gossip
            }
        } else if let request = indirect.removeValue(forKey: IndirectKey(target: ack.from, sentAt: ack.echoedSentAt)) {
            // Forwarded by a helper we asked: the peer answered it, so it is up.
            if let helper = request.helpers.first(where: { peers[$0]?.address == source }) {
                peers.entries[helper]?.speaksIndirect = true
                if period?.target == ack.from { period?.heardBack.insert(helper) }
                // The helper reached the peer for us: a relay, and how long it took through it.
                notePath(ack.from, via: helper, rtt: now - ack.echoedSentAt, now: now)
            }
        }
        directives += contact(
            ack.from, nick: ack.nick, incarnation: ack.incarnation, rooms: ack.rooms, address: address,
            foundBy: foundBy, rttSample: rttSample, now: now)
        if let sent, sent.via == nil, noteAnswer(ack.from, probedAt: sent.address, from: source) {
            directives.append(.peerProven(id: ack.from))
            // A newcomer that proved itself is probed again at once: gossip goes only to a proven
            // address, so that probe is the first to tell it who else is here (a round trip after
            // it met us, not a period).
            if sent.asking { peers.entries[ack.from]?.probeSoon = true }
        }
        directives += merge(ack.peers, sentBy: ack.from, now: now)
        if let peer = peers[ack.from], peer.state != .alive { peers.entries[ack.from]?.probeSoon = true }
        noteRouteChanges()
        return directives + rescheduleIfEarlier(now: now)
    }

    /// Whether `probe`, from a known peer, is replayed or from an earlier run: signed, but not news
    /// (below the incarnation the peer has signed, or not newer than its newest probe here).
    func isReplay(_ probe: Probe) -> Bool {
        guard let entry = peers.entries[probe.from] else { return false }
        let stamp = ProbeStamp(incarnation: probe.incarnation, sequence: probe.sequence)
        return probe.incarnation < entry.peer.vouched || entry.lastProbe.map { stamp <= $0 } == true
    }

    /// Forgets what has aged out of every peer's entry: rumours and address checks after
    /// ``MembershipConfig/probeMemory``, changes after ``MembershipConfig/freshGossipFor``
    /// (no longer fresh gossip).
    mutating func forgetStale(now: MonotonicTime) {
        peers.updateEach { entry in
            if let rumour = entry.rumour, (now - rumour.since) >= config.probeMemory { entry.rumour = nil }
            if let checked = entry.addressCheckedAt, (now - checked) >= config.probeMemory { entry.addressCheckedAt = nil }
            if let changed = entry.changedAt, (now - changed) >= config.freshGossipFor { entry.changedAt = nil }
        }
    }

    /// Least time between two checks of where one peer's unsigned messages come from: the probe
    /// timeout a healthy node has (not stretched by local health; a check is one probe).
    var addressCheckInterval: TimeSpan { config.probeInterval / Int64(max(config.probeAttempts, 1)) }

    /// Any other valid message from node `id` arrived at `now` from `source`: it answers this
    /// period's probe if `id` is its peer, and a known peer we think suspect or gone is probed at
    /// once, so it hears the claim and refutes it. Unknown ids are ignored.
    ///
    /// A message that names its sender without a signature (a digest) from an address other than
    /// the peer's known one is a hint that the peer moved: a NAT that rebooted maps it to a new
    /// port, and what goes to the old one dies at the router. Nothing unsigned moves a peer, so
    /// both addresses are probed at once (ICE's triggered check), at most once per
    /// ``addressCheckInterval`` per peer; the peer moves only if the known address stays silent
    /// and the new one answers (``checkMove(_:to:payer:now:)``).
    public mutating func heard(
        from id: NodeID, at source: PeerAddress? = nil, now: MonotonicTime
    ) -> [MembershipDirective] {
        guard id != me, let peer = peers[id] else { return [] }
        noteContact(id, now: now)
        if let source, source != peer.address, peer.state != .gone {
            return checkMove(id, to: source, payer: source.description, now: now) + rescheduleIfEarlier(now: now)
        }
        guard peer.state != .alive else { return [] }
        peers.entries[id]?.probeSoon = true
        return rescheduleIfEarlier(now: now)
    }
}

/// When a probe was sent, in its sender's terms: ordered by incarnation, then sequence.
struct ProbeStamp: Comparable, Hashable, Sendable {
    var incarnation: UInt64
    var sequence: UInt64

    static func < (a: ProbeStamp, b: ProbeStamp) -> Bool {
        (a.incarnation, a.sequence) < (b.incarnation, b.sequence)
    }
}

/// What ``Membership`` asks its shell to do.
///
/// The shell keeps a single wake-up: each `.scheduleTick(at:)` replaces the one before.
/// ``Membership/tick(now:)`` always ends with one; `receive` and `heard` return one only when
/// something became due earlier than the wake-up already set.
public enum MembershipDirective: Hashable, Sendable {
    /// Send `message` in one UDP datagram to `address`.
    case send(WireMessage, to: PeerAddress)
    /// A peer's state changed (`from` is `nil` for a peer just learned of): log it, tell the
    /// user, start or stop pushing room events to it.
    case peerChanged(id: NodeID, nick: String, from: PeerState?, to: PeerState)
    /// A peer said goodbye (``Leaving``): it is gone, because it left. Like a change to gone, but
    /// the user is told that it left.
    case peerLeft(id: NodeID, nick: String)
    /// A peer in direct contact answered from another address than its known one, and is known
    /// at `address` from now on (a NAT that rebooted gave it a new port): what was sent to the old
    /// address since it stopped working may be lost, so whatever it should hold is offered again.
    case peerMoved(id: NodeID, to: PeerAddress)
    /// A peer's address answered a probe of this node's from there for the first time
    /// (`Membership+Trust`): it is a live peer from now on, to push to and to offer the rooms.
    case peerProven(id: NodeID)
    /// Call ``Membership/tick(now:)`` when the local monotonic clock reaches `at`.
    case scheduleTick(at: MonotonicTime)
    /// Send `message` to `address` exactly as it is: another node's signed ``Ack`` to a probe
    /// this node ran for `address`'s node (a ``ProbeRequest``). Not to be signed again.
    case forward(WireMessage, to: PeerAddress)
}
