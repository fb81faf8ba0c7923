import HuddleCore

/// One node of a simulation: the very ``NodeMachine`` a real node runs, on a virtual clock, with
/// the simulated network in place of sockets, pulls as reliable (TCP) messages, and a
/// ``MemoryStore`` as its disk. A write lands on that disk at once, or, with a commit latency,
/// when ``Simulation`` says so (``landed(now:)``); a crash loses what had not landed, and
/// the node starts again from what had (``restart(now:others:)``). Time is one virtual clock,
/// a ``MonotonicTime`` from the run's start; the node's wall clock reads the same moment, from
/// the epoch, to the millisecond (as a real node's does).
struct SimulatedNode: DrivenNode {
    let index: Int
    let identity: NodeIdentity
    let address: PeerAddress
    let room: String
    let membershipConfig: MembershipConfig
    let seed: UInt64
    var machine: NodeMachine
    /// Its disk.
    var store = MemoryStore()
    /// What of its disk a power cut leaves: the disk as of its last synced write (a lease).
    private var synced = MemoryStore()
    /// Writes handed over but not on disk yet (with a commit latency), oldest first.
    private(set) var unlanded: [(writes: [StoreWrite], turn: CommitTurn?)] = []
    /// Whether a write lands on disk as it is made (no commit latency).
    var commitsAtOnce = true
    /// How many times it started: its incarnation (a later run must have a higher one).
    private(set) var runs = 1
    /// The pull running with each peer (the machine runs one per peer at most).
    private var pulls: [PeerAddress: PullRequest] = [:]
    /// What carrying out the machine's effects did, since it was last taken.
    private var collected = Effects()

    /// What handling one input did.
    struct Effects {
        /// Datagrams (and TCP messages) to send, in order.
        var sends: [Send] = []
        /// Chat events this node showed.
        var shown: [EventID] = []
        /// Peers whose state this node reported changed, and to what.
        var changes: [(id: NodeID, to: PeerState)] = []
        /// Batches of writes handed to the disk (only with a commit latency), each to land later,
        /// in order (``landed(now:)``).
        var handedToDisk = 0
        /// Proofs of equivocation it found (a seq used twice by one origin).
        var faults = 0

        mutating func append(_ other: Effects) {
            sends += other.sends
            shown += other.shown
            changes += other.changes
            handedToDisk += other.handedToDisk
            faults += other.faults
        }
    }

    /// What travels: a message, or a datagram's bytes as the machine made them (a relay around a
    /// message, a sound window), which the receiving machine decodes itself.
    enum Packet {
        case message(WireMessage)
        case datagram([UInt8])

        /// The kind the report counts it under.
        var kind: String {
            switch self {
            case .message(let message): "\(message.kind)"
            case .datagram(let bytes): RelayMessage.isRelay(bytes) ? "relay" : "sound"
            }
        }
    }

    struct Send {
        var packet: Packet
        var to: PeerAddress
        /// Sent over TCP: the network retransmits it instead of losing it.
        var reliable: Bool
    }

    init(index: Int, identity: NodeIdentity, room: String, seed: UInt64, membership config: MembershipConfig) {
        self.index = index
        self.identity = identity
        self.room = room
        self.seed = seed
        membershipConfig = config
        address = Self.address(of: index)
        machine = Self.machine(
            identity: identity, index: index, run: 1, config: config, seed: seed, store: MemoryStore(), now: .start)
    }

    /// A run of node `index`'s machine, from what `store` holds.
    private static func machine(
        identity: NodeIdentity, index: Int, run: Int, config: MembershipConfig, seed: UInt64, store: MemoryStore,
        lostUnsynced: Bool = false, now: MonotonicTime
    ) -> NodeMachine {
        var restore = store.restore
        restore.lostUnsynced = lostUnsynced
        return NodeMachine(
            NodeSetup(
                identity: identity, nick: "n\(index)", port: address(of: index).port, startedAt: time(now).wall,
                incarnation: UInt64(run),
                // Nobody marks in the simulator and its figures are delivery times: its viewers
                // run with the shield off, as one who knows it is ahead of everyone would.
                membership: config, seed: seed &+ UInt64(run - 1), shield: nil),
            restore: restore)
    }

    /// Node `index`'s address: 10.0.x.y, port 7400.
    static func address(of index: Int) -> PeerAddress {
        PeerAddress(host: "10.0.\(index / 250).\(index % 250 + 1)", port: 7400)
    }

    /// When the node next needs ``tick(now:)``, seen at virtual moment `now`.
    func nextTick(now: MonotonicTime) -> MonotonicTime {
        machine.nextDeadline(now: Self.time(now))
    }

    /// The node's two clocks at virtual moment `now`: the wall clock reads as long after the
    /// epoch, rounded down to the millisecond, as the monotonic clock after its start.
    private static func time(_ now: MonotonicTime) -> NodeTime {
        NodeTime(wall: (WallTime.epoch + now.sinceStart).wholeMilliseconds, monotonic: now)
    }

    // MARK: Inputs

    /// Hands `input` to the machine at virtual moment `now`, and carries out what it caused.
    private mutating func handle(_ input: NodeInput, now: MonotonicTime) -> Effects {
        drive(input, now: Self.time(now))
        return takeCollected()
    }

    private mutating func takeCollected() -> Effects {
        defer { collected = Effects() }
        return collected
    }

    /// The node starts and joins the room.
    mutating func start(now: MonotonicTime) -> Effects {
        handle(.start(room: room, key: nil, seeds: []), now: now)
    }

    /// Another node was found (as mDNS would report it).
    mutating func discovered(_ other: SimulatedNode, now: MonotonicTime) -> Effects {
        handle(.discovered(id: other.identity.id, nick: "n\(other.index)", address: other.address, rooms: [room]), now: now)
    }

    /// This node writes a chat message, as typed on its console.
    mutating func say(_ text: String, now: MonotonicTime) -> (Event?, Effects) {
        let event = machine.originate(.chat(text: text), in: room, now: Self.time(now))
        settle(now: Self.time(now))
        return (event, takeCollected())
    }

    /// The process was killed and starts again: what had not landed on disk is lost, the
    /// pulls it ran are gone, and the new run starts from the store (and finds `others` again).
    /// Returns its own events that never landed: nobody may ever see them. After a `powerCut`
    /// what landed but was not synced is lost too (and may have been seen).
    mutating func restart(now: MonotonicTime, others: [SimulatedNode], powerCut: Bool = false) -> (lost: [EventID], Effects) {
        var lost = unlanded.flatMap { held -> [EventID] in
            held.writes.flatMap { write -> [EventID] in
                if case .events(let events, own: true) = write { events.map(\.id) } else { [] }
            }
        }
        if powerCut {
            let kept = synced.events[room] ?? [:]
            lost += (store.events[room] ?? [:]).keys.filter { $0.origin == identity.id && kept[$0] == nil }.sorted()
            store = synced
        }
        unlanded = []
        pulls = [:]
        runs += 1
        machine = Self.machine(
            identity: identity, index: index, run: runs, config: membershipConfig, seed: seed, store: store,
            lostUnsynced: powerCut, now: now)
        var effects = Effects()
        for other in others where other.index != index { effects.append(discovered(other, now: now)) }
        effects.append(start(now: now))
        return (lost, effects)
    }

    /// The oldest writes handed over landed on disk (with a commit latency): a turn that waited
    /// for them lets its effects out.
    mutating func landed(now: MonotonicTime) -> Effects {
        guard !unlanded.isEmpty else { return Effects() }
        let (writes, turn) = unlanded.removeFirst()
        land(writes)
        guard let turn else { return Effects() }
        return handle(.committed(turn), now: now)
    }

    /// Time passed.
    mutating func tick(now: MonotonicTime) -> Effects {
        handle(.tick, now: now)
    }

    /// A pull's connection to `address` failed (the peer is unreachable, dead or down), as the
    /// node's client gives up on a connection that does not open.
    mutating func pullFailed(to address: PeerAddress, now: MonotonicTime) -> Effects {
        guard let pull = pulls.removeValue(forKey: address) else { return Effects() }
        return handle(.pullFailed(pull), now: now)
    }

    /// A packet arrived from `source`.
    mutating func receive(_ packet: Packet, from source: PeerAddress, now: MonotonicTime) -> Effects {
        switch packet {
        case .message(.syncRequest(let request)):
            // The other side of a pull: answered from the log, over the pull's connection.
            var effects = Effects()
            effects.sends.append(Send(packet: .message(.syncResponse(machine.syncResponse(to: request))), to: source, reliable: true))
            return effects
        case .message(.syncResponse(let response)):
            guard let pull = pulls[source] else { return Effects() }
            return handle(.pullBatch(pull, events: response.events, more: response.more), now: now)
        case .message(let message):
            return handle(.message(message, from: source), now: now)
        case .datagram(let bytes):
            return handle(.datagram(bytes, from: source), now: now)
        }
    }

    // MARK: The world it runs in (NodeDriver carries the machine's effects out here)

    mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) {
        for address in addresses { collected.sends.append(Send(packet: .message(message), to: address, reliable: false)) }
    }

    mutating func send(bytes: [UInt8], to address: PeerAddress) {
        collected.sends.append(Send(packet: .datagram(bytes), to: address, reliable: false))
    }

    /// A pull runs over TCP: its requests are reliable messages, answered by the peer's machine.
    mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput] {
        pulls[pull.address] = pull
        collected.sends.append(Send(packet: .message(.syncRequest(first)), to: pull.address, reliable: true))
        return []
    }

    mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput] {
        collected.sends.append(Send(packet: .message(.syncRequest(request)), to: pull.address, reliable: true))
        return []
    }

    mutating func pullDone(_ pull: PullRequest) {
        pulls[pull.address] = nil
    }

    // (Signatures are checked at once, by NodeWorld's default: the simulator does not model CPU time.)

    /// Writes land at once, or (with a commit latency) each later, in order (``landed(now:)``).
    mutating func write(_ writes: [StoreWrite]) {
        for write in writes {
            collected.faults += write.isFault ? 1 : 0
            if commitsAtOnce {
                land([write])
            } else {
                unlanded.append(([write], nil))
                collected.handedToDisk += 1
            }
        }
    }

    mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput] {
        collected.faults += writes.filter(\.isFault).count
        guard !commitsAtOnce else {
            land(writes)
            return [.committed(turn)]
        }
        unlanded.append((writes, turn))
        collected.handedToDisk += 1
        return []
    }

    /// Writes on disk, in one transaction: synced with everything before them when a lease is
    /// among them (as the node's store syncs such a transaction).
    private mutating func land(_ writes: [StoreWrite]) {
        for write in writes { store.apply(write) }
        if writes.contains(where: { if case .lease = $0 { true } else { false } }) { synced = store }
    }

    /// What the report counts: chat shown, and peers' states.
    mutating func show(_ output: NodeOutput) {
        switch output {
        case .room(.message(let shown), _): collected.shown.append(shown.event.id)
        case .room(.earlier(let items), _): collected.shown += items.map(\.event.id)
        case .peer(let id, _, let state, let left): collected.changes.append((id, left ? .gone : state))
        default: break
        }
    }

    // (No mDNS, rate gate, log, reader or sound in a simulation: a HeadlessWorld.)
}

extension StoreWrite {
    /// A proof that an origin equivocated.
    fileprivate var isFault: Bool {
        if case .fault = self { true } else { false }
    }
}
