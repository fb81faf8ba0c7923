/// When a node swaps version vectors with its peers, pushes what a peer misses, and pulls what it
/// misses itself: the anti-entropy and repair policy of every room, as a pure state machine.
///
/// Like ``Membership`` it does no I/O, reads no clock (`now` is the shell's monotonic clock) and
/// draws its random choices from the generator it was given. The shell
/// tells it what happened (events arrived, a digest arrived, this node made an event, a peer came
/// alive, time passed) and carries out the ``ReplicationDirective``s that come back.
///
/// ```swift
/// var replication = Replication(random: SplitMix64(seed: 7))
/// // a push from bob left a gap in the room's log: ask bob at once
/// replication.received(room: "superbowl", from: bobAddress, state: room, now: now)
/// // [.sendDigest(room: "superbowl", to: bobAddress), .scheduleTick(at: now + .milliseconds(40))]
/// ```
///
/// The rules:
/// - **Digests are requests.** A digest is a node's version vector for a room. Its receiver
///   pushes, by UDP, what the sender misses (a batch that fits one datagram, at most once per
///   ``ReplicationConfig/answerInterval`` per peer and room), and when it misses something the
///   sender holds: answers with its own digest (so the sender pushes back), or, when it misses
///   more than one datagram carries (``ReplicationConfig/maxPushEvents``), pulls over TCP.
/// - **Repair starts when a gap is seen.** Events that arrive but cannot be shown (their
///   origin's earlier events, or their causal context, are missing) mean something was lost, and
///   so does a digest from a peer that holds events this node lacks: the node sends its digest at
///   once to the peer the events came from (or answers the digest), then again to a random live
///   peer of the room after each of ``ReplicationConfig/repairDelays``, until the gap is closed
///   and it holds all that digest showed.
/// - **A burst ends with digests.** At each of ``ReplicationConfig/tailDelays`` (plus three of
///   the room's longest round trips) after the last event this node made in a room, it sends its
///   digest to every live peer of the room, so a peer that lost the burst's last push (a loss no
///   later push reveals) asks for it.
/// - **Anti-entropy.** Every ``ReplicationConfig/antiEntropyInterval`` each room swaps digests with
///   one random live peer, which repairs whatever the rules above missed (and brings a late
///   joiner or a node back from a crash up to date).
/// - **A clean, busy room needs neither.** Every event carries its maker's delivered vector as
///   its causal context, so an event from another node that covers this node's last event shows
///   every peer that lost the push that it lost it. In a room that has shown no loss for
///   ``ReplicationConfig/lossMemory`` (no gap, no digest showing events this node lacks), the tail
///   digests stop once events from ``ReplicationConfig/witnesses`` other nodes cover this node's
///   last event, and a round skips the room when events from that many other nodes arrived since
///   the last one. Under loss both keep going: they make repair faster, and loss is when the
///   datagrams are worth it.
/// - A peer that comes alive, and every live peer of a room this node joins, get a digest.
/// - At most one pull per room and peer is in flight.
public struct Replication: Sendable {
    public let config: ReplicationConfig
    private var random: SplitMix64
    /// When the next anti-entropy round is due.
    private var nextRoundAt: MonotonicTime?
    /// Rooms with a gap being repaired.
    private var repairs: [String: Repair] = [:]
    /// Rooms whose tail digests are due: when the burst ended and how many rounds went out.
    private var tails: [String: Tail] = [:]
    /// The origins whose events arrived in each room since the last anti-entropy round.
    private var speakers: [String: Set<NodeID>] = [:]
    /// When each room last showed a loss: a gap, or a digest showing events this node lacks.
    private var lossSeenAt: [String: MonotonicTime] = [:]
    /// When each peer was last sent a push in answer to its digest, per room.
    private var lastPush: [RoomPeer: MonotonicTime] = [:]
    /// When each peer was last sent a digest in answer to its own, per room.
    private var lastAnswer: [RoomPeer: MonotonicTime] = [:]
    /// Pulls running now.
    private var pulls: Set<RoomPeer> = []
    /// When each peer's copy of an origin's events was last rechecked, per room.
    private var rechecks: [RoomPeerOrigin: MonotonicTime] = [:]
    /// When each peer was last pushed a proof that an origin equivocated, per room.
    private var evidencePushed: [RoomPeerOrigin: MonotonicTime] = [:]
    /// The wake-up time last handed to the shell.
    private var scheduledTick: MonotonicTime?

    private struct Repair: Sendable {
        /// Digests sent for this gap so far.
        var attempts: Int
        var nextAt: MonotonicTime
        /// What peers' digests showed they hold: the repair lasts until this node holds it too.
        var target = VersionVector()
    }

    private struct Tail: Sendable {
        /// This node's last event in the room.
        var origin: NodeID
        var seq: UInt64
        var burstEnded: MonotonicTime
        /// Added to each of the tail delays: three of the room's longest round trips (each at
        /// most ``ReplicationConfig/maxRoundTrip``).
        var extraDelay: TimeSpan
        var rounds = 0
        /// Other origins whose events' contexts cover this node's last event.
        var witnesses: Set<NodeID> = []

        func due(_ config: ReplicationConfig) -> MonotonicTime {
            burstEnded + config.tailDelays[rounds] + extraDelay
        }
    }

    /// What the shell knows of one joined room, for ``tick(now:rooms:)``.
    public struct RoomState: Sendable {
        /// The room's live peers.
        public var peers: [Peer]
        /// The room log's version vector.
        public var vector: VersionVector
        /// Whether the log holds events it cannot show yet (a gap, or unmet context).
        public var waiting: Bool

        public init(peers: [Peer], vector: VersionVector, waiting: Bool) {
            self.peers = peers
            self.vector = vector
            self.waiting = waiting
        }

        /// A room whose log is `log` (empty if the room is not loaded) and whose live peers are `peers`.
        public init(peers: [Peer], log: RoomLog?) {
            self.init(peers: peers, vector: log?.vector ?? VersionVector(), waiting: (log?.waitingCount ?? 0) > 0)
        }
    }

    private struct RoomPeerOrigin: Hashable, Sendable {
        var room: String
        var peer: NodeID
        var origin: NodeID
    }

    /// A room and a peer.
    public struct RoomPeer: Hashable, Sendable {
        public var room: String
        public var peer: NodeID

        public init(room: String, peer: NodeID) {
            self.room = room
            self.peer = peer
        }
    }

    public init(config: ReplicationConfig = .init(), random: SplitMix64) {
        self.config = config
        self.random = random
    }

    // MARK: Inputs

    /// Time passed: runs the anti-entropy round, tail digests and repair retries that are due,
    /// for the joined `rooms`.
    public mutating func tick(now: MonotonicTime, rooms: [String: RoomState]) -> [ReplicationDirective] {
        var directives: [ReplicationDirective] = []
        let names = rooms.keys.sorted()
        if nextRoundAt.map({ $0 <= now }) ?? true {
            nextRoundAt = now + config.antiEntropyInterval
            for room in names where !isClean(room, now: now) || speakers[room, default: []].count < config.witnesses {
                if let peer = rooms[room]!.peers.randomElement(using: &random) {
                    directives.append(.sendDigest(room: room, to: peer.address))
                }
            }
            speakers = [:]
        }
        for (room, tail) in tails.sorted(by: { $0.key < $1.key }) {
            guard let state = rooms[room] else {
                tails[room] = nil
                continue
            }
            guard tail.due(config) <= now else { continue }
            for peer in state.peers { directives.append(.sendDigest(room: room, to: peer.address)) }
            tails[room]!.rounds += 1
            if tail.rounds + 1 == config.tailDelays.count { tails[room] = nil }
        }
        for (room, repair) in repairs.sorted(by: { $0.key < $1.key }) {
            guard let state = rooms[room], Self.isOpen(repair, state) else {
                repairs[room] = nil
                continue
            }
            guard repair.nextAt <= now else { continue }
            if let peer = state.peers.randomElement(using: &random) {
                directives.append(.sendDigest(room: room, to: peer.address))
            }
            repairs[room]!.attempts += 1
            repairs[room]!.nextAt = now + repairDelay(after: repair.attempts + 1)
        }
        scheduledTick = nil
        return directives + schedule(now: now)
    }

    /// `events` for `room` arrived in a datagram from `source` (`nil`: by a pull) and the new
    /// ones were inserted; `state` is the room afterwards.
    public mutating func received(
        room: String, events: [Event], from source: PeerAddress?, state: RoomState, now: MonotonicTime
    ) -> [ReplicationDirective] {
        if state.waiting { lossSeenAt[room] = now }
        if !events.isEmpty { speakers[room, default: []].formUnion(events.map(\.origin)) }
        if var tail = tails[room] {
            for event in events where event.origin != tail.origin && event.context[tail.origin] >= tail.seq {
                tail.witnesses.insert(event.origin)
            }
            tails[room] = tail.witnesses.count >= config.witnesses && isClean(room, now: now) ? nil : tail
        }
        if let repair = repairs[room] {
            if !Self.isOpen(repair, state) { repairs[room] = nil }
            return []
        }
        guard state.waiting else { return [] }
        repairs[room] = Repair(attempts: 1, nextAt: now + repairDelay(after: 1))
        var directives: [ReplicationDirective] = []
        if let source { directives.append(.sendDigest(room: room, to: source)) }
        return directives + schedule(now: now)
    }

    /// A digest arrived from `peer`, a known node: `remote` is its vector for `room` (capped below
    /// quarantined origins: ``RoomLog/capped(_:)``), `local` this node's. `divergent` names the
    /// origins whose chain fingerprint in the digest differs from this node's at the same seq
    /// (``RoomLog/divergence(from:fingerprints:)``): the peer holds other events than this node.
    /// `evidence` are the proofs of equivocation the peer's vector shows it lacks
    /// (``RoomLog/evidence(missingFrom:)``): each is pushed at most once per
    /// ``ReplicationConfig/evidenceInterval`` per peer and origin, so a stream of digests cannot
    /// make this node send much more.
    public mutating func digestReceived(
        room: String, from peer: Peer, remote: VersionVector, local: VersionVector,
        divergent: [NodeID: UInt64] = [:], evidence: [Equivocation] = [], now: MonotonicTime
    ) -> [ReplicationDirective] {
        var directives: [ReplicationDirective] = []
        let key = RoomPeer(room: room, peer: peer.id)
        for proof in evidence {
            let pushed = RoomPeerOrigin(room: room, peer: peer.id, origin: proof.origin)
            guard evidencePushed[pushed].map({ now - $0 >= config.evidenceInterval }) ?? true else { continue }
            evidencePushed[pushed] = now
            directives.append(.pushEvidence(proof, to: peer.address))
        }
        for (origin, seq) in divergent.sorted(by: { $0.key < $1.key }) {
            let recheck = RoomPeerOrigin(room: room, peer: peer.id, origin: origin)
            guard rechecks[recheck].map({ now - $0 >= config.recheckInterval }) ?? true, !pulls.contains(key) else {
                continue
            }
            rechecks[recheck] = now
            pulls.insert(key)
            let from = seq > config.recheckDepth ? seq - config.recheckDepth + 1 : 1
            directives.append(.recheck(room: room, peer: peer.id, origin: origin, from: from, address: peer.syncAddress))
        }
        if !remote.dominates(local), lastPush[key].map({ now - $0 >= config.answerInterval }) ?? true {
            lastPush[key] = now
            directives.append(.pushMissing(room: room, have: remote, to: peer.address))
        }
        let lacking = remote.ranges(missingFrom: local).reduce(UInt64(0)) { $0 + UInt64($1.seqs.count) }
        if lacking > 0 { lossSeenAt[room] = now }
        if lacking > UInt64(config.maxPushEvents) {
            if pulls.insert(key).inserted { directives.append(.pull(room: room, peer: peer.id, from: peer.syncAddress)) }
        } else if lacking > 0 {
            // Answer so the peer pushes, and keep asking until what it showed is here.
            if lastAnswer[key].map({ now - $0 >= config.answerInterval }) ?? true {
                lastAnswer[key] = now
                directives.append(.sendDigest(room: room, to: peer.address))
            }
            var repair = repairs[room] ?? Repair(attempts: 1, nextAt: now + repairDelay(after: 1))
            repair.target.merge(remote)
            repairs[room] = repair
            directives += schedule(now: now)
        }
        return directives
    }

    /// This node made `event` (and pushed it); `state` is its room afterwards. Its tail digests
    /// are due a little later, unless the room speaks after it.
    public mutating func originated(_ event: Event, state: RoomState, now: MonotonicTime) -> [ReplicationDirective] {
        let longestRoundTrip = state.peers.compactMap(\.rtt).max() ?? .zero
        tails[event.room] = Tail(
            origin: event.origin, seq: event.seq, burstEnded: now,
            extraDelay: 3 * min(longestRoundTrip, config.maxRoundTrip))
        return schedule(now: now)
    }

    /// A peer came alive: a digest for each room this node shares with it.
    public func peerAlive(_ peer: Peer, sharedRooms: [String]) -> [ReplicationDirective] {
        sharedRooms.sorted().map { .sendDigest(room: $0, to: peer.address) }
    }

    /// This node joined `room`: a digest to each of its live peers.
    public func joined(room: String, peers: [Peer]) -> [ReplicationDirective] {
        peers.map { .sendDigest(room: room, to: $0.address) }
    }

    /// A pull of `room` from `peer` ended (however it ended).
    public mutating func pullFinished(room: String, peer: NodeID) {
        pulls.remove(RoomPeer(room: room, peer: peer))
    }

    /// This node left `room`: forget its repairs, tails and what it saw there.
    public mutating func left(room: String) {
        repairs[room] = nil
        tails[room] = nil
        speakers[room] = nil
        lossSeenAt[room] = nil
        rechecks = rechecks.filter { $0.key.room != room }
        evidencePushed = evidencePushed.filter { $0.key.room != room }
    }

    // MARK: Pieces

    /// How long to wait after the `attempts`-th digest for a gap before the next.
    private func repairDelay(after attempts: Int) -> TimeSpan {
        config.repairDelays[min(attempts, config.repairDelays.count) - 1]
    }

    /// Whether `room` has shown no loss for ``ReplicationConfig/lossMemory``.
    private func isClean(_ room: String, now: MonotonicTime) -> Bool {
        lossSeenAt[room].map { now - $0 >= config.lossMemory } ?? true
    }

    /// Whether a repair still has something to wait for.
    private static func isOpen(_ repair: Repair, _ state: RoomState) -> Bool {
        state.waiting || !state.vector.dominates(repair.target)
    }

    /// The earliest thing due, if it is earlier than what the shell was last told.
    private mutating func schedule(now: MonotonicTime) -> [ReplicationDirective] {
        var due = nextRoundAt ?? now
        for tail in tails.values { due = min(due, tail.due(config)) }
        for repair in repairs.values { due = min(due, repair.nextAt) }
        if let scheduledTick, scheduledTick <= due { return [] }
        scheduledTick = due
        return [.scheduleTick(at: due)]
    }
}

/// What ``Replication`` asks its shell to do.
public enum ReplicationDirective: Equatable, Sendable {
    /// Send this node's digest (version vector) for `room` to `to`, by UDP.
    case sendDigest(room: String, to: PeerAddress)
    /// Push, by UDP, the events of `room` a peer whose vector is `have` misses, as many as fit in
    /// one datagram and ``ReplicationConfig/maxPushEvents``.
    case pushMissing(room: String, have: VersionVector, to: PeerAddress)
    /// Pull what this node misses of `room` from `peer` at `from`, over TCP; report the end with
    /// ``Replication/pullFinished(room:peer:)``.
    case pull(room: String, peer: NodeID, from: PeerAddress)
    /// Pull `origin`'s events of `room` from seq `from` on from `peer` over TCP, including those
    /// this node holds, so that any the peer holds differently show up as equivocation. Report
    /// the end with ``Replication/pullFinished(room:peer:)``.
    case recheck(room: String, peer: NodeID, origin: NodeID, from: UInt64, address: PeerAddress)
    /// Push both events of a proof of equivocation to `to`, by UDP (one datagram if they fit).
    case pushEvidence(Equivocation, to: PeerAddress)
    /// Call ``Replication/tick(now:rooms:)`` at this time (on the monotonic clock) or earlier.
    case scheduleTick(at: MonotonicTime)
}
