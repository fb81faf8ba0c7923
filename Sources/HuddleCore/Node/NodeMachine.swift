/// Everything one node decides, with no I/O at all: the same machine runs inside the `Node` actor
/// (on sockets, SQLite and a terminal), in the simulator (on a virtual network, clock and disk)
/// and in the tests' `MachineLAN`.
///
/// It composes the core's machines: ``Membership`` (who is there), ``Replication`` (when to push,
/// swap digests, pull) and one ``RoomSession`` per room (log, calibration, hold-back), plus
/// private rooms, direct messages, nicks, pause, admission (`NodeMachine+Admission`), pulls
/// (`NodeMachine+Pulls`) and the order of commits (``CommitGate``). It has one door in,
/// ``handle(_:now:)``, taking a ``NodeInput`` at one instant (``NodeTime``): datagram bytes, a
/// pull's batch, a commit done, a console line, time passing. What the world must do comes out
/// of ``pollEffects()`` as ``NodeEffect``s: datagrams to send, pulls to run, signatures to check,
/// writes to commit, lines for the reader. ``nextDeadline(now:)`` says when to hand it
/// ``NodeInput/tick`` next.
///
/// ```swift
/// var machine = NodeMachine(NodeSetup(identity: id, nick: "alice", port: 7400, startedAt: now.wall, seed: 1))
/// machine.handle(.start(room: "superbowl", key: nil, seeds: []), now: now)
/// machine.handle(.datagram(bytes, from: source), now: now)
/// for effect in machine.pollEffects() { … }     // send, pull, commit, show; report back as inputs
/// ```
///
/// The shape is str0m's `Rtc` and quinn-proto's `Connection`: one input in, effects out, one
/// deadline; the caller owns sockets, disk and clocks, and only carries out.
public struct NodeMachine: Sendable {
    public let identity: NodeIdentity
    public let nick: String
    /// The UDP and TCP port this node listens on (announced in probes).
    public let port: UInt16
    /// When this run started.
    public let startedAt: WallTime

    public internal(set) var membership: Membership
    public internal(set) var replication: Replication
    /// Every room this node knows, by wire name (a private or direct room's id): its session once
    /// loaded, and all that is kept about it (``RoomTable``).
    public internal(set) var rooms = RoomTable()
    /// Joined rooms, in join order.
    public internal(set) var joined: [String] = []
    public internal(set) var currentRoom: String?
    /// The room `/private` asked a passphrase for, while the answer is awaited.
    public internal(set) var passphraseWanted: String?
    /// Direct messages: each direct room's peer, peers' agreement keys (see `NodeMachine+Direct`).
    public internal(set) var direct = DirectPeers()
    /// The first node seen under each nick, and the later ones already warned about.
    public internal(set) var knownNicks: [String: NodeID] = [:]
    var nickConflicts: Set<NodeID> = []
    /// When the viewer paused its stream, while it is paused.
    public internal(set) var pausedAt: WallTime?
    /// How long messages from writers this reader is not placed with wait (`nil`: off), and the
    /// shield `/shield on` brings back.
    public internal(set) var shield: TimeSpan?
    var shieldWhenOn: TimeSpan
    /// Whether the status line counts what is held back (``NodeSetup/showWaiting``).
    public let showWaiting: Bool
    /// The wild mark each face was asked about (``WildMark``): made if asked for again in time, on
    /// that face.
    var wildMarksAsked: [Face: (room: String, label: CalibrationLabel, at: WallTime, askedAt: WallTime)] = [:]
    /// The face whose input the machine is handling, while it does: answers go there.
    var answering: Face?
    /// Whether the reader was told, this run, that a name that could spoil waits for others'
    /// streams (``NodeNotice/namedMoment(label:)``).
    var toldOfNamedMoments = false
    /// Announced peers not answering yet, and those the reader was told of (``NodeNotice/unanswered(_:)``).
    var unanswered = UnansweredWatch()
    /// (peer, private room) pairs already reported as holding another passphrase.
    var passphraseMismatches: Set<PassphraseMismatch> = []
    public internal(set) var counters = NodeCounters()
    /// While this node listens: its source and the latest match with each peer.
    public internal(set) var listening: Listening?
    /// What listening keeps across sources: the budget of peers' windows, the reader's latest
    /// word, the sharing rules, when a match is news (`NodeMachine+Listening`).
    var hearing: Hearing
    /// Once piped input ended: what this node wrote, waiting to be known held by a peer.
    public internal(set) var deliveryWait: DeliveryWait?
    /// When the next membership and replication ticks are due.
    var membershipTickAt: MonotonicTime = .start
    var replicationTickAt: MonotonicTime = .start
    /// The vouched peers' addresses and the incarnation last told (``NodeEffect/vouchedPeers(_:incarnation:)``).
    var lastVouched: (addresses: Set<PeerAddress>, incarnation: UInt64, proofs: Int) = ([], 0, 0)
    /// Restored but not yet applied by ``start(room:key:now:)``.
    private var restore: NodeRestore?
    /// What the world must do, oldest first (``pollEffects()``).
    var effects: [NodeEffect] = []
    /// Senders' budgets of signature checks (`NodeMachine+Admission`).
    var checkBudgets = SignatureBudgets()
    /// Pulls running and waiting (`NodeMachine+Pulls`).
    var pulls = PullSlots()
    /// Inputs' effects waiting for their writes' commit (``CommitGate``).
    var commitGate = CommitGate()
    /// Blobs held, fetched, parked and refused (`NodeMachine+Pictures`).
    var pictures = PictureState()

    /// Node-wide cap on the bytes of events held past gaps, every room together.
    public static let maximumBufferedBytes = 16 << 20
    /// Most peers this node keeps a direct room for.
    static let maximumDirectPeers = 4_096

    public init(_ setup: NodeSetup, restore: NodeRestore = NodeRestore()) {
        identity = setup.identity
        nick = setup.nick
        port = setup.port
        startedAt = setup.startedAt
        shield = setup.shield
        shieldWhenOn = setup.shield ?? HoldBackSchedule.defaultShield
        showWaiting = setup.showWaiting
        hearing = Hearing(rules: setup.soundSharing)
        // A later start has a higher incarnation, so gossip can tell a restarted node's address.
        membership = Membership(
            me: setup.identity.id, nick: setup.nick, port: setup.port, incarnation: setup.incarnation,
            config: setup.membership, random: SplitMix64(seed: setup.seed ^ 0x5EED),
            nonceKey: setup.identity.probeNonceKey(incarnation: setup.incarnation))
        replication = Replication(config: setup.replication, random: SplitMix64(seed: setup.seed))
        for (room, held) in restore.rooms { rooms[entry: room].stored = held }
        for (room, through) in restore.leases {
            rooms[entry: room].lease = SeqLease(through: through, mayHaveLost: restore.lostUnsynced)
        }
        for (id, name) in restore.privateRoomNames { rooms[entry: id].privateName = name }
        knownNicks = restore.knownNicks
        self.restore = restore
    }

    /// Takes what the world must do now, and forgets it: what the last input caused, but what
    /// waits for a commit (``CommitGate``). Call it after every input.
    public mutating func pollEffects() -> [NodeEffect] {
        defer { effects.removeAll(keepingCapacity: true) }
        return commitGate.pass(effects)
    }

    // MARK: Output

    mutating func emit(_ effect: NodeEffect) {
        effects.append(effect)
    }

    mutating func show(_ line: NodeOutput) {
        effects.append(.output(line, to: line.isAnswer ? answering : nil))
    }

    /// A command that did nothing, and why (a dropped datagram is ``refuse(_:_:from:)``).
    mutating func reject(_ problem: CommandProblem) { show(.problem(problem)) }
    /// Something that happened to this node (a pause, a room change), said with a `* `.
    mutating func say(_ notice: NodeNotice) { show(.notice(notice)) }

    /// Counts `count` dropped inputs (datagrams, frames, connections or events).
    mutating func countDropped(_ drop: NodeCounters.Drop, count: Int = 1) {
        counters.count(drop, count)
    }

    // MARK: Starting

    /// Brings back the rooms the store holds and joins `room` (a public name) or the private
    /// room `key` opens, unless joined already: a join resets calibration, so a restart must
    /// not re-join. A private room comes back only with its passphrase; until then it stays
    /// locked, unread and unadvertised.
    mutating func start(room: String? = nil, key: RoomKey? = nil, seeds: [PeerAddress] = [], now: NodeTime) {
        let restore = self.restore ?? NodeRestore()
        self.restore = nil
        pictures.held = restore.pictures
        effects.append(.persist(.nick(nick, identity.id, at: now.wall)))
        if knownNicks[nick] == nil { knownNicks[nick] = identity.id }
        for seed in seeds { membership.addSeed(seed) }
        for room in restore.joined {
            if RoomKey.isPrivate(room) {
                rooms[entry: room].locked = true
                continue
            }
            loadRoom(room, now: now)
            joined.append(room)
        }
        currentRoom = restore.currentRoom.flatMap { joined.contains($0) ? $0 : nil } ?? joined.last
        membership.rooms = joined
        if let key {
            join(key: key, now: now)
        } else if let room {
            if lockedNames().contains(room) {
                // Not the public room of the same name: what is typed there would be public.
                reject(.privateNeedsPassphrase(room: room))
            } else {
                join(room, now: now)
            }
        }
        let locked = rooms.rooms { $0.locked }
        if !locked.isEmpty {
            say(.locked(names: lockedNames(), count: locked.count))
        }
        advertiseRooms()
        for (room, seq) in ownSeqs() { rooms[entry: room].ownSeqAtStart = seq }
    }

    /// The names of the private rooms this node is in but cannot open this run, sorted.
    func lockedNames() -> [String] {
        rooms.entries.values.compactMap { $0.locked ? $0.privateName : nil }.sorted()
    }
}

/// Who a node is and how its machines are tuned.
public struct NodeSetup: Sendable {
    public var identity: NodeIdentity
    public var nick: String
    public var port: UInt16
    /// When this run started.
    public var startedAt: WallTime
    /// Told in probes; a later run has a higher one (the start time in ms since the epoch, by
    /// default).
    public var incarnation: UInt64
    public var membership: MembershipConfig
    public var replication: ReplicationConfig
    /// Seeds the machines' randomness (probe order, gossip fan-out): the simulator's runs repeat.
    public var seed: UInt64
    /// How long a message from a writer this reader is not placed with waits after it was
    /// written (`nil`: shown at once; see ``HoldBackSchedule/shield``). `--shield`.
    public var shield: TimeSpan?
    /// Whether the status line counts the messages held back and says when the next is due: a
    /// burst of waiting messages tells that a big play is coming, so only on request
    /// (`--show-waiting`).
    public var showWaiting: Bool
    /// What of its sound a listening node shares, and when (``SoundSharing``; its re-check
    /// cadence is `--sound-recheck`).
    public var soundSharing: SoundSharing.Rules

    public init(
        identity: NodeIdentity, nick: String, port: UInt16, startedAt: WallTime, incarnation: UInt64? = nil,
        membership: MembershipConfig = MembershipConfig(), replication: ReplicationConfig = ReplicationConfig(),
        seed: UInt64, shield: TimeSpan? = HoldBackSchedule.defaultShield, showWaiting: Bool = false,
        soundSharing: SoundSharing.Rules = SoundSharing.Rules()
    ) {
        self.identity = identity
        self.nick = nick
        self.port = port
        self.startedAt = startedAt
        self.incarnation = incarnation ?? UInt64(max(0, startedAt.millisecondsSinceEpoch))
        self.membership = membership
        self.replication = replication
        self.seed = seed
        self.shield = shield
        self.showWaiting = showWaiting
        self.soundSharing = soundSharing
    }
}

/// What the store held when the node started: the machine's state from the last run.
public struct NodeRestore: Sendable {
    /// Every room the store holds events of.
    public var rooms: [String: StoredRoom]
    /// Rooms joined when the last run ended, in join order.
    public var joined: [String]
    public var currentRoom: String?
    public var knownNicks: [String: NodeID]
    public var privateRoomNames: [String: String]
    /// The roots of the pictures whose blobs are all on disk.
    public var pictures: Set<[UInt8]>
    /// The seqs this node leased in each room (``SeqLease``).
    public var leases: [String: UInt64]
    /// Whether the last run may have lost what it committed but had not synced: the machine
    /// (the computer) lost power or crashed since, and the run did not stop cleanly. Each room
    /// then voids the rest of its lease with the node's next event there.
    public var lostUnsynced: Bool

    public init(
        rooms: [String: StoredRoom] = [:], joined: [String] = [], currentRoom: String? = nil,
        knownNicks: [String: NodeID] = [:], privateRoomNames: [String: String] = [:], pictures: Set<[UInt8]> = [],
        leases: [String: UInt64] = [:], lostUnsynced: Bool = false
    ) {
        self.pictures = pictures
        self.leases = leases
        self.lostUnsynced = lostUnsynced
        self.rooms = rooms
        self.joined = joined
        self.currentRoom = currentRoom
        self.knownNicks = knownNicks
        self.privateRoomNames = privateRoomNames
    }
}

/// One room as the store holds it.
public struct StoredRoom: Sendable {
    public var events: [Event]
    public var faults: [Equivocation]
    /// Messages already shown to the reader.
    public var shown: Set<EventID>

    public init(events: [Event], faults: [Equivocation] = [], shown: Set<EventID> = []) {
        self.events = events
        self.faults = faults
        self.shown = shown
    }
}

/// The instant an input is handled at, on the node's two clocks: the wall clock that stamps
/// events and hold-back times (as peers compare marks on it), and a monotonic clock for
/// membership timers and round-trip times (immune to wall-clock steps). Read once per input, so
/// everything one input causes happens at one time; the only bridge between the two clocks.
public struct NodeTime: Sendable, Hashable {
    public var wall: WallTime
    public var monotonic: MonotonicTime

    public init(wall: WallTime, monotonic: MonotonicTime) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// `span` later on both clocks.
    public func advanced(by span: TimeSpan) -> NodeTime {
        NodeTime(wall: wall + span, monotonic: monotonic + span)
    }
}

/// A peer found in a private room of the same name as one of this node's, under another
/// passphrase.
struct PassphraseMismatch: Hashable, Sendable {
    var peer: NodeID
    var room: String
}
