/// Who is out there: the peers one node knows, whether each is alive, suspect or gone, how far
/// away it is (round-trip time) and which rooms it is in, as a pure state machine.
///
/// It does no I/O, reads no clock and draws no random numbers. The shell owns the UDP socket and
/// a timer; it passes its monotonic clock in as `now` (**microseconds**), feeds every received
/// ``Probe`` and ``Ack`` with the datagram's source address, calls ``heard(from:now:)`` for any
/// other valid message from a node, and carries out the ``MembershipDirective``s that come back:
/// send a message, report a state change, wake up for ``tick(now:)`` at a time. It calls
/// ``tick(now:)`` once at start, after adding its seeds.
///
/// ```swift
/// var membership = Membership(me: id, nick: "alice", port: 7400, incarnation: 1)
/// membership.rooms = ["superbowl"]
/// membership.addSeed(PeerAddress(parsing: "192.0.2.12:7400")!)
/// membership.tick(now: 0)
/// // [.send(.probe(...), to: 192.0.2.12:7400), .scheduleTick(at: 1_000_000)]
/// membership.receive(ack, from: PeerAddress(host: "192.0.2.12", port: 7400), now: 420)
/// // [.peerChanged(id: bob, nick: "bob", from: nil, to: .alive), ...]; bob's rtt is 420 µs
/// ```
///
/// How it works:
/// - Every alive or suspect peer, and every seed address nobody has answered from yet, is probed
///   each ``MembershipConfig/probeInterval``; a gone peer each ``MembershipConfig/goneProbeInterval``,
///   so one that comes back is noticed. Probes and acks carry this node's rooms and a sample of
///   its alive and suspect peers, so one seed is enough to learn everyone.
/// - A peer is alive while we hear from it directly (a probe, an ack, or any message passed to
///   ``heard(from:now:)``), suspect after ``MembershipConfig/suspectAfter`` of silence and gone
///   after ``MembershipConfig/goneAfter``. What others gossip never changes a known peer's state;
///   it only introduces unknown peers (as alive, so they get probed) and, with a higher
///   incarnation, moves a known peer to a new address.
/// - Everything a peer could inflate is bounded: known peers (``MembershipConfig/maxPeers``),
///   rooms per peer (``WireLimits/maxRoomsPerNode``), peer lists (``WireLimits/maxPeersPerList``
///   read, ``MembershipConfig/maxGossipPeers`` sent, always within ``WireLimits/maxDatagramBytes``),
///   and unanswered probes (forgotten after ``MembershipConfig/goneAfter``).
/// - Whatever is sent or reported is ordered by node id (then address), never by dictionary order.
public struct Membership: Sendable {
    /// This node.
    public let me: NodeID
    /// This node's nick, sent in probes and acks.
    public var nick: String
    /// The port this node listens on (UDP and TCP), sent in probes.
    public let port: UInt16
    /// This node's incarnation, sent in probes and acks (the shell raises it on every start).
    public let incarnation: UInt64
    /// Timing and bounds.
    public let config: MembershipConfig
    /// Everyone this node knows, by id, gone peers included.
    public private(set) var peers: [NodeID: Peer] = [:]

    /// This node's rooms, sent in probes and acks. Setting it keeps the first
    /// ``WireLimits/maxRoomsPerNode`` distinct rooms that can go on the wire (at most
    /// ``WireLimits/maxRoomBytes`` bytes, no control characters), in the order given.
    public var rooms: [String] {
        get { ownRooms }
        set { ownRooms = Self.wireRooms(newValue) }
    }

    /// Seed addresses nobody has answered from yet, in order.
    public var seeds: [PeerAddress] { seedProbes.keys.sorted() }

    private var ownRooms: [String] = []
    /// When each known peer was last probed; missing means "probe at the next tick".
    private var lastProbeAt: [NodeID: Int64] = [:]
    /// Unresolved seeds, with when each was last probed.
    private var seedProbes: [PeerAddress: SeedProbe] = [:]
    /// Our probes not answered yet, by sequence number.
    private var outstanding: [UInt64: OutstandingProbe] = [:]
    private var nextSequence: UInt64 = 1
    /// Where the next peer list starts in the id-sorted candidates, so every peer gets gossiped.
    private var gossipCursor = 0
    /// The last wake-up time handed to the shell, to tell it when something falls due earlier.
    private var scheduledTick: Int64?

    /// A node that knows nobody yet.
    public init(me: NodeID, nick: String, port: UInt16, incarnation: UInt64, config: MembershipConfig = .init()) {
        self.me = me
        self.nick = nick
        self.port = port
        self.incarnation = incarnation
        self.config = config
    }

    /// The alive and suspect peers in `room`, by id: where the room's events are pushed.
    public func alivePeers(inRoom room: String) -> [Peer] {
        peers.values
            .filter { $0.state != .gone && $0.rooms.contains(room) }
            .sorted { $0.id < $1.id }
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
    /// alive: the state changes only by contact.
    public mutating func addDiscovered(
        id: NodeID, nick: String, address: PeerAddress, rooms: [String], now: Int64
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
                lastProbeAt[id] = nil
            }
            peers[id] = peer
        } else if makeRoom() {
            peers[id] = Peer(
                id: id, nick: nick, address: address, rooms: rooms, state: .alive, incarnation: 0, lastSeen: now,
                rtt: nil, foundBy: .mdns)
            directives.append(.peerChanged(id: id, nick: nick, from: nil, to: .alive))
        }
        return directives + rescheduleIfEarlier(now: now)
    }

    /// Moves time forward to `now`: peers silent for too long become suspect or gone, due
    /// probes are sent, unanswered probes older than ``MembershipConfig/goneAfter`` are
    /// forgotten. The last directive is always `.scheduleTick(at:)`: the next time anything is
    /// due, at most one ``MembershipConfig/probeInterval`` away.
    ///
    /// Directives come in this order: state changes by id, probes to peers by id, probes to seeds
    /// by address, the wake-up.
    public mutating func tick(now: Int64) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        outstanding = outstanding.filter { now.clampedSubtracting($0.value.sentAt) < config.goneAfter }

        let ids = peers.keys.sorted()
        for id in ids {
            guard var peer = peers[id] else { continue }
            let silence = now.clampedSubtracting(peer.lastSeen)
            let state: PeerState =
                if silence >= config.goneAfter { .gone }
                else if silence >= config.suspectAfter && peer.state == .alive { .suspect }
                else { peer.state }
            if state != peer.state {
                directives.append(.peerChanged(id: id, nick: peer.nick, from: peer.state, to: state))
                peer.state = state
                peers[id] = peer
            }
        }
        for id in ids {
            guard let peer = peers[id], probeDue(peer) <= now else { continue }
            lastProbeAt[id] = now
            directives.append(probe(peer.address, target: .peer(id), now: now))
        }
        for address in seedProbes.keys.sorted() {
            guard let seed = seedProbes[address], seedDue(seed) <= now else { continue }
            seedProbes[address]?.lastProbeAt = now
            directives.append(probe(address, target: .seed(address), now: now))
        }

        let idle = now.clampedAdding(max(config.probeInterval, 1))
        let wake = max(min(nextDue(now: now) ?? idle, idle), now.clampedAdding(1))
        scheduledTick = wake
        directives.append(.scheduleTick(at: wake))
        return directives
    }

    /// Handles a probe that arrived at `now` from `source` (the datagram's source address).
    ///
    /// Answers with an ack to the probe's host and listening port, echoing its sequence number
    /// and send time; the sender becomes (or stays) alive at `source.host`:`probe.port` with the
    /// nick, rooms and incarnation it sent; its peer list is merged. A probe from this node itself
    /// is not answered (a seed that turns out to be this node is dropped).
    ///
    /// Directives: the ack, then state changes (the sender first, then gossiped peers by list
    /// order), then a `.scheduleTick(at:)` if something new is due before the last wake-up.
    public mutating func receive(_ probe: Probe, from source: PeerAddress, now: Int64) -> [MembershipDirective] {
        guard probe.from != me else {
            if let sent = outstanding[probe.sequence], sent.sentAt == probe.sentAt,
                case .seed(let seed) = sent.target
            {
                outstanding[probe.sequence] = nil
                seedProbes[seed] = nil
            }
            return []
        }
        let sender = PeerAddress(host: source.host, port: probe.port == 0 ? source.port : probe.port)
        var ack = Ack(
            from: me, nick: nick, incarnation: incarnation, sequence: probe.sequence, echoedSentAt: probe.sentAt,
            rooms: rooms, peers: [])
        ack.peers = gossip(
            excluding: probe.from, destination: sender,
            budget: WireLimits.maxDatagramBytes - WireMessage.ack(ack).encodedByteCount)
        var directives: [MembershipDirective] = [.send(.ack(ack), to: sender)]

        seedProbes[sender] = nil
        directives += contact(
            probe.from, nick: probe.nick, incarnation: probe.incarnation, rooms: probe.rooms, address: sender,
            foundBy: .inbound, rttSample: nil, now: now)
        directives += merge(probe.peers, sentBy: probe.from, now: now)
        return directives + rescheduleIfEarlier(now: now)
    }

    /// Handles an ack that arrived at `now` from `source`.
    ///
    /// It is matched to our probe by sequence number alone (a probe sent to "localhost:7400" may
    /// be answered from 127.0.0.1:7400): a matched probe to a seed resolves the seed to the node
    /// that answered, and a matched send time gives a round-trip sample (`now − echoedSentAt`).
    /// The sender becomes (or stays) alive at the address we probed (or, unmatched, at its known
    /// address, else at `source`), with the nick, rooms and incarnation it sent; its peer list is
    /// merged.
    ///
    /// Directives: state changes (the sender first), then a `.scheduleTick(at:)` if something new
    /// is due before the last wake-up.
    public mutating func receive(_ ack: Ack, from source: PeerAddress, now: Int64) -> [MembershipDirective] {
        guard ack.from != me else { return [] }
        var address = peers[ack.from]?.address ?? source
        var foundBy = PeerSource.inbound
        var rttSample: Int64?
        let sent = outstanding.removeValue(forKey: ack.sequence)
        if let sent {
            address = sent.address
            if ack.echoedSentAt == sent.sentAt {
                rttSample = max(0, now.clampedSubtracting(sent.sentAt))
            }
            switch sent.target {
            case .seed(let seed):
                seedProbes[seed] = nil
                foundBy = .seed
            case .peer:
                foundBy = .gossip
            }
        }
        var directives = contact(
            ack.from, nick: ack.nick, incarnation: ack.incarnation, rooms: ack.rooms, address: address,
            foundBy: foundBy, rttSample: rttSample, now: now)
        if let sent, peers[ack.from] != nil, lastProbeAt[ack.from] == nil {
            lastProbeAt[ack.from] = sent.sentAt  // a seed just answered: its probe counts as this peer's
        }
        directives += merge(ack.peers, sentBy: ack.from, now: now)
        return directives + rescheduleIfEarlier(now: now)
    }

    /// Any valid message from node `id` arrived at `now`: if it is a known peer it is alive, and
    /// a `.peerChanged` reports a return from suspect or gone. Unknown ids are ignored.
    public mutating func heard(from id: NodeID, now: Int64) -> [MembershipDirective] {
        guard id != me, var peer = peers[id] else { return [] }
        let old = peer.state
        peer.state = .alive
        peer.lastSeen = max(peer.lastSeen, now)
        peers[id] = peer
        let change: [MembershipDirective] =
            old == .alive ? [] : [.peerChanged(id: id, nick: peer.nick, from: old, to: .alive)]
        return change + rescheduleIfEarlier(now: now)
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
    /// Call ``Membership/tick(now:)`` when the local monotonic clock reaches `at` (µs).
    case scheduleTick(at: Int64)
}

// MARK: - Internals

extension Membership {
    /// Whom an outstanding probe was for.
    private enum ProbeTarget: Hashable, Sendable {
        case peer(NodeID)
        case seed(PeerAddress)
    }

    /// A probe we sent and have not seen answered.
    private struct OutstandingProbe: Hashable, Sendable {
        var target: ProbeTarget
        var address: PeerAddress
        var sentAt: Int64
    }

    /// An unresolved seed address.
    private struct SeedProbe: Hashable, Sendable {
        var lastProbeAt: Int64?
    }

    /// Builds a probe to `address`, remembers it, and returns the directive to send it.
    private mutating func probe(_ address: PeerAddress, target: ProbeTarget, now: Int64) -> MembershipDirective {
        let sequence = nextSequence
        nextSequence &+= 1
        var probe = Probe(
            from: me, nick: nick, incarnation: incarnation, sequence: sequence, sentAt: now, port: port,
            rooms: rooms, peers: [])
        let recipient: NodeID? = if case .peer(let id) = target { id } else { nil }
        probe.peers = gossip(
            excluding: recipient, destination: address,
            budget: WireLimits.maxDatagramBytes - WireMessage.probe(probe).encodedByteCount)
        outstanding[sequence] = OutstandingProbe(target: target, address: address, sentAt: now)
        return .send(.probe(probe), to: address)
    }

    /// Up to ``MembershipConfig/maxGossipPeers`` alive or suspect peers (other than the recipient)
    /// whose records fit in `budget` bytes, sorted by id. Successive lists are consecutive windows
    /// of the id-sorted candidates, so with more peers than fit in one list every peer is still
    /// gossiped.
    private mutating func gossip(excluding recipient: NodeID?, destination: PeerAddress, budget: Int) -> [PeerRecord] {
        let candidates = peers.values
            .filter { $0.state != .gone && $0.id != recipient && $0.address != destination }
            .sorted { $0.id < $1.id }
            .compactMap(Self.record(of:))
        guard !candidates.isEmpty else { return [] }
        let limit = min(config.maxGossipPeers, WireLimits.maxPeersPerList)
        let start = gossipCursor % candidates.count
        var chosen: [PeerRecord] = []
        var bytes = 0
        while chosen.count < min(limit, candidates.count) {
            let record = candidates[(start + chosen.count) % candidates.count]
            guard bytes + record.encodedByteCount <= budget else { break }
            chosen.append(record)
            bytes += record.encodedByteCount
        }
        gossipCursor = (start + chosen.count) % candidates.count
        return chosen.sorted { $0.id < $1.id }
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

    /// Direct contact with node `id` at `now`: it is alive at `address` with what it told us.
    private mutating func contact(
        _ id: NodeID, nick: String, incarnation: UInt64, rooms: [String], address: PeerAddress,
        foundBy: PeerSource, rttSample: Int64?, now: Int64
    ) -> [MembershipDirective] {
        let rooms = Array(rooms.prefix(WireLimits.maxRoomsPerNode))
        guard var peer = peers[id] else {
            guard makeRoom() else { return [] }
            peers[id] = Peer(
                id: id, nick: nick, address: address, rooms: rooms, state: .alive, incarnation: incarnation,
                lastSeen: now, rtt: rttSample, foundBy: foundBy)
            return [.peerChanged(id: id, nick: nick, from: nil, to: .alive)]
        }
        let old = peer.state
        peer.nick = nick
        peer.incarnation = incarnation
        peer.rooms = rooms
        peer.address = address
        peer.state = .alive
        peer.lastSeen = max(peer.lastSeen, now)
        if let sample = rttSample.map({ min($0, Int64.max / 8) }) {
            peer.rtt = peer.rtt.map { ($0 * 7 + sample) / 8 } ?? sample  // TCP's SRTT; both <= max / 8
        }
        peers[id] = peer
        return old == .alive ? [] : [.peerChanged(id: id, nick: nick, from: old, to: .alive)]
    }

    /// Merges a peer list gossiped by `sender`: unknown alive or suspect peers are added as alive
    /// (to be probed); a known peer's state is never changed, but a record with a higher
    /// incarnation moves it to the record's address (probed at the next tick).
    private mutating func merge(_ records: [PeerRecord], sentBy sender: NodeID, now: Int64) -> [MembershipDirective] {
        var directives: [MembershipDirective] = []
        for record in records.prefix(WireLimits.maxPeersPerList) where record.id != me && record.id != sender {
            guard record.state != .gone, !record.host.isEmpty, record.port != 0 else { continue }
            let address = PeerAddress(host: record.host, port: record.port)
            if var peer = peers[record.id] {
                guard record.incarnation > peer.incarnation else { continue }
                peer.incarnation = record.incarnation
                peer.nick = record.nick
                if peer.address != address {
                    peer.address = address
                    lastProbeAt[record.id] = nil
                }
                peers[record.id] = peer
            } else if makeRoom() {
                peers[record.id] = Peer(
                    id: record.id, nick: record.nick, address: address, rooms: [], state: .alive,
                    incarnation: record.incarnation, lastSeen: now, rtt: nil, foundBy: .gossip)
                directives.append(.peerChanged(id: record.id, nick: record.nick, from: nil, to: .alive))
            }
        }
        return directives
    }

    /// Whether one more peer may be added, evicting the gone peer seen longest ago if the table is
    /// full.
    private mutating func makeRoom() -> Bool {
        guard peers.count >= config.maxPeers else { return true }
        let oldestGone = peers.values
            .filter { $0.state == .gone }
            .min { ($0.lastSeen, $0.id) < ($1.lastSeen, $1.id) }
        guard let evicted = oldestGone else { return false }
        peers[evicted.id] = nil
        lastProbeAt[evicted.id] = nil
        return true
    }

    private func probeInterval(for state: PeerState) -> Int64 {
        state == .gone ? config.goneProbeInterval : config.probeInterval
    }

    /// When `peer` is next to be probed (`Int64.min` if it never was: at the next tick).
    private func probeDue(_ peer: Peer) -> Int64 {
        lastProbeAt[peer.id].map { $0.clampedAdding(probeInterval(for: peer.state)) } ?? .min
    }

    private func seedDue(_ seed: SeedProbe) -> Int64 {
        seed.lastProbeAt.map { $0.clampedAdding(config.probeInterval) } ?? .min
    }

    /// The earliest time a probe or a state change is due, not before `now`; `nil` if nothing is
    /// pending at all.
    private func nextDue(now: Int64) -> Int64? {
        var due: Int64?
        func consider(_ time: Int64) { due = min(due ?? time, time) }
        for peer in peers.values {
            consider(probeDue(peer))
            switch peer.state {
            case .alive: consider(peer.lastSeen.clampedAdding(config.suspectAfter))
            case .suspect: consider(peer.lastSeen.clampedAdding(config.goneAfter))
            case .gone: break
            }
        }
        for seed in seedProbes.values {
            consider(seedDue(seed))
        }
        return due.map { max($0, now) }
    }

    /// A `.scheduleTick(at:)` if something is due before the wake-up the shell already has.
    private mutating func rescheduleIfEarlier(now: Int64) -> [MembershipDirective] {
        guard let due = nextDue(now: now), scheduledTick.map({ due < $0 }) ?? true else { return [] }
        scheduledTick = due
        return [.scheduleTick(at: due)]
    }

    /// `rooms` as they may go on the wire: valid, distinct, at most ``WireLimits/maxRoomsPerNode``.
    private static func wireRooms(_ rooms: [String]) -> [String] {
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
