import HuddleCore
import Testing

/// Node machines on a network that exists only in the test: datagrams go through the wire
/// codec (bytes, as on a socket) and arrive when the test says, pulls are answered at once, and
/// what a machine writes to its store is kept in a ``MemoryStore`` it can restart from. No
/// socket, no disk, no sleeping: the machines' clock is the test's.
struct MachineLAN {
    struct Host: DrivenNode {
        var machine: NodeMachine
        var address: PeerAddress
        var store = MemoryStore()
        /// Everything the machine said to its reader, oldest first.
        var outputs: [NodeOutput] = []
        /// Datagrams it sent, oldest first (what a test reads as "on the wire").
        var sent: [(message: WireMessage, to: PeerAddress)] = []
        var pulls: [PullRequest] = []
        /// Writes made while ``MachineLAN/holdCommits`` is set: not on "disk" yet, each with the
        /// turn to report once they are.
        var uncommitted: [(writes: [StoreWrite], turn: CommitTurn?)] = []
        var quitAsked = false
        /// Peers' sound windows the machine handed to its matcher, and `/listen` requests.
        var heard: [SoundWindow] = []
        var listenRequests: [Bool] = []
        /// What the machine said of a wait for delivery (``NodeInput/inputEnded(peersFindable:)``), in order.
        var deliveries: [DeliveryWait.Report] = []
        /// Blobs the machine asked to fetch, oldest first.
        var fetches: [PictureFetch] = []
        /// Whether writes wait (``MachineLAN/holdCommits``).
        var holdCommits = false
        /// What the LAN carries next: datagrams and relays sent, and pulls asked (answered by the
        /// LAN from the node they name, as TCP would).
        var outbox: [Outgoing] = []
        enum Outgoing {
            case message(WireMessage, to: PeerAddress)
            case bytes([UInt8], to: PeerAddress)
            case pull(PullRequest, SyncRequest)
        }

        /// The chat texts shown, in order.
        var messages: [String] {
            outputs.compactMap { output in
                if case .room(.message(let shown), _) = output { shown.text } else { nil }
            }
        }

        /// What the machine said to the reader (notices and problems), in order.
        var said: [NodeOutput] {
            outputs.filter { output in
                switch output {
                case .notice, .problem: true
                default: false
                }
            }
        }

        var notices: [NodeNotice] {
            outputs.compactMap { if case .notice(let notice) = $0 { notice } else { nil } }
        }

        var problems: [CommandProblem] {
            outputs.compactMap { if case .problem(let problem) = $0 { problem } else { nil } }
        }
    }

    var hosts: [Host] = []
    var now: NodeTime
    /// Datagrams on their way, oldest first.
    var inFlight: [(message: WireMessage, from: Int, to: PeerAddress)] = []
    /// Relay datagrams on their way (``NodeEffect/datagram(_:to:)``), oldest first.
    var relaysInFlight: [(bytes: [UInt8], from: Int, to: PeerAddress)] = []
    /// Pairs of nodes (by index, lower first) whose datagrams never arrive, either way.
    var blocked: Set<[Int]> = []
    /// `[from, to]`: datagrams that way only are dropped (a firewall on `to`'s computer).
    var blockedOneWay: Set<[Int]> = []
    /// Whether pulls are answered when asked (a pull runs over TCP, which does not lose them).
    var answerPulls = true
    /// Whether writes wait for ``commit(_:)`` (a slow disk), rather than landing as they are made.
    var holdCommits = false

    /// Where the nodes' keys come from: the same seed, the same keys, so a seeded run replays
    /// (ids order peers, rooms' logs and relays).
    private var keys: SplitMix64

    init(
        now: NodeTime = NodeTime(wall: .milliseconds(sinceEpoch: 1_700_000_000_000), monotonic: .start + .seconds(5)),
        seed: UInt64 = 0
    ) {
        self.now = now
        keys = SplitMix64(seed: seed ^ 0x6875_6464_6C65_6B65)
    }

    /// Adds a node named `nick` at 10.0.0.(n+1):7400 and starts it in `room`. Its shield is off
    /// unless given: most of these tests are of delivery, and nobody marks in them.
    @discardableResult
    mutating func add(
        _ nick: String, room: String? = "superbowl", identity: NodeIdentity? = nil, store: MemoryStore = MemoryStore(),
        shield: TimeSpan? = nil
    ) -> Int {
        let index = hosts.count
        let identity = identity ?? nextIdentity()
        let address = PeerAddress(host: "10.0.0.\(index + 1)", port: 7400)
        var machine = NodeMachine(
            NodeSetup(identity: identity, nick: nick, port: 7400, startedAt: now.wall, seed: UInt64(index + 1), shield: shield),
            restore: store.restore)
        machine.handle(.start(room: room, key: nil, seeds: []), now: now)
        hosts.append(Host(machine: machine, address: address, store: store))
        collect(index)
        return index
    }

    /// A key drawn from the LAN's seed.
    mutating func nextIdentity() -> NodeIdentity {
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: keys.next().littleEndian, Array.init) }
        return try! NodeIdentity(privateKeyBytes: bytes)
    }

    subscript(index: Int) -> Host {
        get { hosts[index] }
        set { hosts[index] = newValue }
    }

    /// Runs `body` on node `index`'s machine at the current time, then collects its effects.
    @discardableResult
    mutating func on<T>(_ index: Int, _ body: (inout NodeMachine, NodeTime) -> T) -> T {
        let result = body(&hosts[index].machine, now)
        collect(index)
        return result
    }

    /// Each node finds every other (as mDNS would say), and they probe each other for a few
    /// seconds: every pair has signed its word to the other.
    mutating func introduceAll() {
        for a in hosts.indices {
            for b in hosts.indices where a != b {
                let other = hosts[b]
                on(a) { machine, now in
                    machine.handle(
                        .discovered(
                            id: other.machine.identity.id, nick: other.machine.nick, address: other.address,
                            rooms: other.machine.membership.rooms),
                        now: now)
                }
            }
        }
        deliverAll()
        for _ in 0..<4 { advance(.seconds(1)) }
    }

    /// alice, bob and carol in the room and introduced, alice and carol unable to reach each other
    /// (two homes behind strict NATs): bob is the only way between them.
    static func cutPair() -> (lan: MachineLAN, alice: Int, bob: Int, carol: Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        let carol = lan.add("carol")
        lan.blocked = [[alice, carol]]
        lan.introduceAll()
        return (lan, alice, bob, carol)
    }

    /// `first` marks kickoff, then `second` marks it `apart` later, each delivered: `second`'s
    /// stream is `apart` behind `first`'s.
    mutating func markKickoff(_ first: Int, then second: Int, apart: TimeSpan) {
        on(first) { $0.handle(.consoleLine("/now kickoff", at: $1.wall), now: $1) }
        deliverAll()
        advance(apart)
        on(second) { $0.handle(.consoleLine("/now kickoff", at: $1.wall), now: $1) }
        deliverAll()
    }

    /// Delivers every datagram in flight, and what they cause, until the network is quiet.
    mutating func deliverAll(limit: Int = 10_000) {
        var delivered = 0
        while !inFlight.isEmpty || !relaysInFlight.isEmpty, delivered < limit {
            delivered += 1
            if !relaysInFlight.isEmpty {
                let (bytes, from, to) = relaysInFlight.removeFirst()
                guard let target = hosts.firstIndex(where: { $0.address == to }) else { continue }
                let source = hosts[from].address
                on(target) { machine, now in machine.handle(.datagram(bytes, from: source), now: now) }
                continue
            }
            let (message, from, to) = inFlight.removeFirst()
            guard let target = hosts.firstIndex(where: { $0.address == to }) else { continue }
            deliver(message, from: from, to: target)
        }
    }

    /// Drops every datagram in flight (a lossy moment).
    mutating func dropAll() {
        inFlight.removeAll()
        relaysInFlight.removeAll()
    }

    /// Delivers one datagram, through the codec as on a socket.
    mutating func deliver(_ message: WireMessage, from: Int, to target: Int) {
        let decoded = Self.throughTheCodec(message)
        let source = hosts[from].address
        on(target) { machine, now in machine.handle(.message(decoded, from: source), now: now) }
    }

    /// `message` as a socket would deliver it: encoded and decoded. A message the codec cannot
    /// carry is a failure of the test, not a message passed on as it was.
    static func throughTheCodec(_ message: WireMessage) -> WireMessage {
        do {
            return try WireMessage(decoding: message.encoded())
        } catch {
            Issue.record("the codec could not carry a \(message.kind): \(error)")
            return message
        }
    }

    /// Sends a datagram from outside any machine (a test playing a peer or an attacker).
    mutating func inject(_ message: WireMessage, from source: PeerAddress, to target: Int) {
        let decoded = Self.throughTheCodec(message)
        on(target) { machine, now in machine.handle(.message(decoded, from: source), now: now) }
    }

    /// Moves the clock on by `span` and runs what fell due on every node.
    mutating func advance(_ span: TimeSpan, deliver: Bool = true) {
        now = now.advanced(by: span)
        for index in hosts.indices { on(index) { machine, now in machine.handle(.tick, now: now) } }
        if deliver { deliverAll() }
    }

    /// Carries out node `index`'s effects (``NodeDriver``, in the host's world below): its
    /// datagrams go in flight, its pulls are answered from the node they name, its writes reach
    /// its store, its lines are kept.
    mutating func collect(_ index: Int) {
        hosts[index].holdCommits = holdCommits
        hosts[index].settle(now: now)
        while !hosts[index].outbox.isEmpty {
            switch hosts[index].outbox.removeFirst() {
            case .message(let message, let address):
                if !isBlocked(index, address) { inFlight.append((message, index, address)) }
            case .bytes(let bytes, let address):
                if !isBlocked(index, address) { relaysInFlight.append((bytes, index, address)) }
            case .pull(let pull, let request):
                hosts[index].drive(answer(pull, request), now: now)
            }
        }
    }

    /// The answer to a pull's request from the node it names, at once (a pull runs over TCP,
    /// which does not lose it), or the pull's failure (``answerPulls`` off, nobody there).
    private func answer(_ pull: PullRequest, _ request: SyncRequest) -> NodeInput {
        guard answerPulls, let peer = hosts.firstIndex(where: { $0.address == pull.address }) else { return .pullFailed(pull) }
        let response = hosts[peer].machine.syncResponse(to: request)
        return .pullBatch(pull, events: response.events, more: response.more)
    }

    func isBlocked(_ from: Int, _ to: PeerAddress) -> Bool {
        guard let target = hosts.firstIndex(where: { $0.address == to }) else { return false }
        return blocked.contains([min(from, target), max(from, target)]) || blockedOneWay.contains([from, target])
    }

    /// Commits node `index`'s writes held by ``holdCommits``, and tells its machine.
    mutating func commit(_ index: Int) {
        let held = hosts[index].uncommitted
        hosts[index].uncommitted = []
        for (writes, turn) in held {
            for write in writes { hosts[index].store.apply(write) }
            if let turn { hosts[index].machine.handle(.committed(turn), now: now) }
        }
        collect(index)
    }

    /// Stops node `index` and starts it again from what its store kept.
    mutating func restart(_ index: Int, room: String? = "superbowl") {
        let old = hosts[index]
        var machine = NodeMachine(
            NodeSetup(
                identity: old.machine.identity, nick: old.machine.nick, port: 7400, startedAt: now.wall,
                seed: UInt64(index + 100), shield: old.machine.shield),
            restore: old.store.restore)
        machine.handle(.start(room: room, key: nil, seeds: []), now: now)
        hosts[index] = Host(machine: machine, address: old.address, store: old.store)
        collect(index)
    }
}

/// A host's world: what its machine asks for is kept for the LAN to carry (``MachineLAN/collect(_:)``).
extension MachineLAN.Host {
    mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) {
        for address in addresses {
            sent.append((message, address))
            outbox.append(.message(message, to: address))
        }
    }

    mutating func send(bytes: [UInt8], to address: PeerAddress) {
        outbox.append(.bytes(bytes, to: address))
    }

    mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput] {
        pulls.append(pull)
        outbox.append(.pull(pull, first))
        return []
    }

    mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput] {
        outbox.append(.pull(pull, request))
        return []
    }

    mutating func pullDone(_ pull: PullRequest) {}

    mutating func write(_ writes: [StoreWrite]) {
        if holdCommits {
            uncommitted += writes.map { ([$0], nil) }
        } else {
            for write in writes { store.apply(write) }
        }
    }

    mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput] {
        guard !holdCommits else {
            uncommitted.append((writes, turn))
            return []
        }
        for write in writes { store.apply(write) }
        return [.committed(turn)]
    }

    mutating func show(_ output: NodeOutput) { outputs.append(output) }
    mutating func quit() { quitAsked = true }
    mutating func hear(_ window: SoundWindow, receivedAt: WallTime) { heard.append(window) }
    mutating func listen(_ on: Bool) { listenRequests.append(on) }
    mutating func delivery(_ report: DeliveryWait.Report) { deliveries.append(report) }

    /// A picture from bytes, stripped and sealed as the node's shell does it (all pure).
    mutating func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) -> [NodeInput] {
        guard case .bytes(let bytes) = source, let stripped = try? MediaFile.stripped(bytes),
            let header = try? MediaFile.header(of: stripped)
        else { return [.picturePrepared(.failure(PictureProblem("not a picture")), room: room, from: face)] }
        let blob = PictureBlob(sealing: stripped, key: PictureBlob.newKey())
        let picture = Picture(
            type: header.type, byteCount: stripped.count, width: header.width, height: header.height,
            milliseconds: header.milliseconds, root: blob.root,
            key: blob.key, caption: caption)
        return [.picturePrepared(.success(picture), room: room, from: face)]
    }

    mutating func fetchPicture(_ fetch: PictureFetch) -> [NodeInput] {
        fetches.append(fetch)
        return []
    }
}
