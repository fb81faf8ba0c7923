import Foundation
import HuddleCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A running Huddle node: the shell around the pure core.
///
/// One actor owns every piece of state: the rooms (``RoomSession``), the membership state
/// machine, the store and the counters. Sockets, the console and timers live in `run` as child
/// tasks that decode and verify what arrives, then call into the actor; the actor interprets what
/// the core returns (events to push, directives to send, outputs to show).
///
/// ```swift
/// try await Node.run(NodeConfiguration(nick: "alice", room: "superbowl", dataDir: dir), logger: logger)
/// ```
public actor Node {
    let configuration: NodeConfiguration
    let logger: Logger
    /// The wall and monotonic clocks everything is timed by.
    let clock: any NodeClock
    let store: HuddleStore
    let identity: NodeIdentity
    let renderer: OutputRenderer
    /// Where output lines go: stdout, or above the interactive console's prompt.
    let sink: any LineOutput
    /// The console on a terminal, when stdin and stdout are one (see ``InteractiveConsole``).
    let console: InteractiveConsole?
    let startedAt: Int64

    var membership: Membership
    var rooms: [String: RoomSession] = [:]
    /// Joined rooms, in join order.
    var joined: [String] = []
    var currentRoom: String?
    /// Keys of the private rooms this node reads, by wire id (see ``RoomKey``).
    var keys: [String: RoomKey] = [:]
    /// Private rooms this node is in whose passphrase this run was not given: not read, not
    /// advertised, until ``join(_:)-(RoomKey)`` opens them again.
    var locked: [String] = []
    /// The room `/private` asked a passphrase for, while the answer is awaited.
    var passphraseWanted: String?
    /// Peers' X25519 keys for direct messages, from their signed probes and acks.
    var agreementKeys: [NodeID: [UInt8]] = [:]
    /// Direct rooms by id: the peer on the other side (see `Node+Direct`).
    var directs: [String: NodeID] = [:]
    /// The first node seen under each nick, and the later ones already warned about (see
    /// `Node+Nicks`).
    var knownNicks: [String: NodeID] = [:]
    var nickConflicts: Set<NodeID> = []
    /// When the viewer paused its stream (wall ms), while it is paused (see `Node+Pause`).
    var pausedAt: Int64?
    /// Peers already told they share no calibration with this node, when sending them a direct
    /// message (once each).
    var uncalibratedDirectsTold: Set<NodeID> = []
    /// When each private room had someone reported as holding another passphrase, lately.
    var passphraseMismatchesTold: [String: [Int64]] = [:]
    /// (peer, private room) pairs already reported as holding another passphrase.
    var passphraseMismatches: Set<PassphraseMismatch> = []
    var counters = NodeCounters()
    /// Once piped input ended: what this node wrote, waiting to be known held by a peer (see
    /// `Node+Delivery`).
    var deliveryWait: DeliveryWait?
    /// Whether mDNS said it cannot work here (no daemon): then only seeds and gossip find peers.
    var mdnsUnavailable = false
    /// The UDP and TCP port this node listens on.
    let port: Int

    /// mDNS advertisement and browsing, unless `--no-mdns`.
    var discovery: ServiceDiscovery?
    /// The UDP socket: datagrams out go straight to it, fire and forget, like UDP.
    let datagrams: DatagramEndpoint
    /// Per-address limits on datagrams in, checked before decoding, off the actor.
    let datagramLimits = Mutex(DatagramRateLimits())
    /// Whom a goodbye goes to, at which incarnation, and whether it was said (``sayGoodbye()``).
    let goodbye = Mutex<(to: [PeerAddress], incarnation: UInt64, said: Bool)>(([], 0, false))
    /// Anti-entropy and repair: when to swap digests, push, pull (see ``Replication``).
    var replication: Replication
    /// Pulls to run, one at a time.
    let pullRequests: AsyncStream<PullRequest>
    let pullRequestSink: AsyncStream<PullRequest>.Continuation

    /// The timer loop's current sleep and when it ends (wall ms), so earlier work can cut it short.
    var sleeper: Task<Void, Never>?
    var sleeperDeadline: Int64 = .max
    /// Monotonic µs of the next membership and replication ticks.
    var membershipTickAt: Int64 = 0
    var replicationTickAt: Int64 = 0

    /// The timer loop wakes at least this often.
    static let maximumSleep: Int64 = 1000

    /// A node on sockets already bound to `port` (see ``bind(host:port:on:)``). Output goes to
    /// `sink`, or the console, or stdout; time comes from `clock`.
    init(
        configuration: NodeConfiguration, store: HuddleStore, identity: NodeIdentity, logger: Logger,
        port: Int, datagrams: DatagramEndpoint, console: InteractiveConsole? = nil,
        clock: any NodeClock = SystemClock(), sink: (any LineOutput)? = nil
    ) {
        self.configuration = configuration
        self.store = store
        self.identity = identity
        self.logger = logger
        self.port = port
        self.datagrams = datagrams
        let renderer = OutputRenderer(json: configuration.json, colors: configuration.colors, interactive: console != nil)
        self.renderer = renderer
        self.console = console
        self.sink = sink ?? console ?? OutputSink(droppedNotice: { count in
            renderer.error("\(count) output lines were dropped: stdout was not read for a while")
        })
        self.clock = clock
        startedAt = clock.wallMillis()
        // A later start has a higher incarnation, so gossip can tell a restarted node's address.
        membership = Membership(
            me: identity.id, nick: configuration.nick, port: UInt16(port), incarnation: UInt64(max(0, startedAt)))
        replication = Replication(random: SplitMix64(seed: UInt64.random(in: .min ... .max)))
        (pullRequests, pullRequestSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// A pull of one room from one peer. A recheck also asks again for `recheck`'s events from
    /// seq `from` on, though they are held, to compare them (see ``ReplicationDirective/recheck``).
    struct PullRequest: Hashable, Sendable {
        var room: String
        var peer: NodeID
        var host: String
        var port: Int
        var recheck: NodeID? = nil
        var from: UInt64 = 1
        /// Asked by a node waiting to know its events reached the peer (``DeliveryWait``), not by
        /// ``Replication``.
        var confirm = false
    }

    // MARK: Output

    func show(_ line: String?) {
        guard let line else { return }
        sink.write(line)
    }

    func showError(_ message: String) {
        show(renderer.error(message))
    }

    /// Something that happened to this node (a pause, a room change), said with a `* `.
    func showNotice(_ text: String) {
        show(renderer.notice(text))
    }

    func showInfo(_ text: String) {
        show(renderer.info(text))
    }

    /// Shows a room's outputs, recording shown messages in the store first so a restart never
    /// shows them again.
    func show(_ outputs: [RoomOutput], room: String) {
        // Whatever changed may have moved the next hold-back release earlier.
        rescheduleTimer()
        refreshConsole()
        let isDirect = directs[room] != nil
        let outputs = isDirect ? directOutputs(outputs) : outputs
        guard !outputs.isEmpty else { return }
        let shownIDs = outputs.flatMap { output -> [EventID] in
            switch output {
            case .message(let message): [message.event.id]
            case .earlier(let messages): messages.map(\.event.id)
            case .score(let score): [score.event.id]
            default: []
            }
        }
        if !shownIDs.isEmpty {
            do {
                _ = try store.markShown(shownIDs, room: room, at: clock.wallMillis())
            } catch {
                logger.error("could not record shown messages", metadata: ["huddle.error": "\(error)"])
            }
        }
        // People read "superbowl (private)", apart from a public superbowl; JSON has the name.
        let isPrivate = !isDirect && keys[room] != nil
        let label = isPrivate && !renderer.json ? privateLabel(of: room) : name(of: room)
        for output in outputs {
            if case .joined(let member) = output { noticeNick(member) }
            var directTo: String?
            if isDirect, case .message(let message) = output { directTo = directRecipient(of: message, in: room) }
            show(renderer.render(
                output, room: label, reader: identity.id, inCurrentRoom: room == currentRoom, directTo: directTo,
                isPrivate: isPrivate))
        }
        // Direct messages are held back by the offsets of a room the two share: offsets and
        // members change with what a room shows.
        if !isDirect, !directs.isEmpty { followSharedCalibrations() }
    }

    // MARK: Rooms

    /// Loads a room's session from the store (after a restart or a re-join) unless it is loaded.
    func loadRoom(_ room: String) {
        guard rooms[room] == nil else { return }
        var session = RoomSession(room: room, reader: identity.id, key: keys[room])
        session.knownNicks = knownNicks
        if pausedAt != nil { session.pause() }
        // A direct room's stored messages wait by the offsets of a room the two share.
        if directs[room] != nil { _ = session.follow(sharedCalibration(forDirect: room), now: clock.wallMillis()) }
        var outputs: [RoomOutput] = []
        do {
            outputs = session.restore(
                try store.events(room: room), faults: try store.faults(room: room), shown: try store.shownIDs(room: room),
                now: clock.wallMillis())
        } catch {
            logger.error(
                "could not load room from the store", metadata: ["huddle.room": "\(room)", "huddle.error": "\(error)"])
        }
        rooms[room] = session
        show(outputs, room: room)
    }

    /// Runs `body` on the room's session in place. Copying a session out of `rooms` and back
    /// would copy its whole log on every change (the dictionary would still hold a reference).
    func withRoom<T>(_ room: String, _ body: (inout RoomSession) throws -> T) rethrows -> T {
        loadRoom(room)
        return try body(&rooms[room]!)
    }

    /// Makes this node's next event in `room`, stores it, shows what it shows and pushes it to
    /// the room's live peers. The event is stamped `at` (a mark: when its key arrived), or now.
    @discardableResult
    func originate(_ body: EventBody, in room: String, at: Int64? = nil) -> Event? {
        let now = at ?? clock.wallMillis()
        let made: (event: Event, outputs: [RoomOutput])
        do {
            made = try withRoom(room) { try $0.compose(body, now: now, signer: identity) }
        } catch {
            showError("not sent: \(error)")
            return nil
        }
        do {
            // Durably, before anyone sees it: a power cut must not make this node sign another
            // event with this seq (which peers would take as equivocation).
            counters.eventsStored += try store.insert([made.event], durable: true)
        } catch {
            logger.error("could not store an event", metadata: ["huddle.error": "\(error)"])
        }
        show(made.outputs, room: room)
        push([made.event], room: room)
        perform(replication.originated(made.event, state: replicationState(room), now: clock.monotonicMicros()))
        return made.event
    }

    /// Joins public room `room` (a join event resets this node's calibration there) and makes it
    /// current; a private room of that name this node is in is made current instead.
    func join(_ room: String) {
        if let joinedRoom = joinedRoom(named: room) { return enter(joinedRoom) }
        if let problem = RoomName.problem(with: room) { return showError(problem) }
        enter(room)
    }

    /// Joins `room` (a public name or a private room's id) and makes it current.
    func enter(_ room: String) {
        if joined.contains(room) {
            makeCurrent(room)
            showNotice("now talking in \(name(of: room))")
            return
        }
        loadRoom(room)
        joined.append(room)
        currentRoom = room
        do {
            try store.setJoined(room, true)
            try store.setCurrentRoom(room)
        } catch {
            logger.error("could not record the join", metadata: ["huddle.error": "\(error)"])
        }
        advertiseRooms()
        originate(.join(nick: configuration.nick), in: room)
        refreshConsole()
        perform(replication.joined(room: room, peers: membership.alivePeers(inRoom: room)))
    }

    func leave(_ room: String) {
        guard joined.contains(room) else {
            showError("you are not in \(name(of: room))")
            return
        }
        originate(.leave, in: room)
        replication.left(room: room)
        joined.removeAll { $0 == room }
        advertiseRooms()
        if currentRoom == room { currentRoom = joined.last { directs[$0] == nil } }
        do {
            try store.setJoined(room, false)
            try store.setCurrentRoom(currentRoom)
        } catch {
            logger.error("could not record the leave", metadata: ["huddle.error": "\(error)"])
        }
        showNotice(currentRoom.map { "left \(name(of: room)); now talking in \(name(of: $0))" } ?? "left \(name(of: room))")
        followSharedCalibrations()
        refreshConsole()
    }

    // MARK: Receiving

    /// Node-wide cap on the bytes of events held past gaps, every room together.
    static let maximumBufferedBytes = 16 << 20

    /// The events of one datagram or pull batch worth a signature check: in a joined room, not a
    /// copy of one held (or of one earlier in the batch), and not refused by the room's log on
    /// what it can see without the signature (``RoomLog/rejection(of:held:aheadAllowance:reserved:)``). The
    /// rest are counted and dropped, so a datagram of copies costs one check, not hundreds. An
    /// event with a held id but other contents passes: once its signature checks, it proves
    /// its origin equivocated.
    func screen(_ events: [Event], from source: String) -> [Event] {
        var seen = Set<Event>()
        var kept: [Event] = []
        // How far each origin's prefix reaches with the batch's earlier events: a pull brings
        // a new origin's events in seq order, and those are not past a gap.
        var reach: [String: [NodeID: UInt64]] = [:]
        var allowances: [String: Int] = [:]
        for sealed in events {
            // The first message of a direct room this node is not in yet brings it in, if it opens.
            if !joined.contains(sealed.room), directs[sealed.room] != nil, keys[sealed.room]?.open(sealed) != nil {
                enterDirect(sealed.room)
            }
            guard joined.contains(sealed.room), let session = rooms[sealed.room] else {
                countDropped(.notJoined, "an event of a room this node is not in", from: source)
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
                countDropped(.unreadable, "\(sealed.id): not sealed with this room's key", from: source)
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
            if let rejection = log.rejection(of: event, held: held, aheadAllowance: allowance, reserved: mayTakeReservedSlot),
                rejection != .tooManyOrigins || log.isUnseated(event.origin)
            {
                countDropped(NodeCounters.Drop(rejection), "\(event.id): \(rejection)", from: source)
                continue
            }
            if event.seq == held + 1 { reach[event.room, default: [:]][event.origin] = event.seq }
            kept.append(event)
        }
        return kept
    }

    /// Whether `origin` may take one of a room's reserved origin slots
    /// (``RoomLogLimits/reservedOrigins``): there is a node behind it, this one or a peer that
    /// signed a probe or ack to it and is not gone. A fresh key's join is not enough.
    func mayTakeReservedSlot(_ origin: NodeID) -> Bool {
        origin == identity.id || membership.hasVouched(origin)
    }

    /// How many bytes `room`'s log may hold past gaps, given what the other rooms hold.
    func aheadAllowance(for room: String) -> Int {
        Self.maximumBufferedBytes - rooms.reduce(0) { $0 + ($1.key == room ? 0 : $1.value.log.bufferedBytes) }
    }

    /// Applies verified events from a peer: store first (so a crash loses nothing it showed),
    /// then show. Only events the room's log accepted are stored. Two versions of one event
    /// quarantine their origin: the proof is stored and pushed to the room's live peers.
    /// `source` is the address a datagram came from (`nil` for a pull): where to ask first if
    /// the events reveal a gap. Returns the room's version vector afterwards, or `nil` if this
    /// node is not in the room.
    @discardableResult
    func ingest(_ events: [Event], room: String, from source: PeerAddress? = nil) -> VersionVector? {
        guard joined.contains(room) else { return nil }
        let now = clock.wallMillis()
        let allowance = aheadAllowance(for: room)
        let (fresh, proofs, outputs, vector) = withRoom(room) { session in
            var fresh: [Event] = []
            var proofs: [Equivocation] = []
            let events = events.filter { $0.room == room }
            let (outcomes, outputs) = session.ingest(
                events, now: now, aheadAllowance: allowance, reserved: mayTakeReservedSlot)
            for (event, outcome) in zip(events, outcomes) {
                switch outcome {
                case .accepted: fresh.append(event)
                case .duplicate: counters.count(.duplicate)
                case .equivocation(let proof, _):
                    proofs.append(proof)
                    // A join that proved a conflict its origin made as a stranger is kept too.
                    if event != proof.first, event != proof.second { fresh.append(event) }
                case .rejected(let rejection):
                    countDropped(NodeCounters.Drop(rejection), "\(event.id): \(rejection)", from: source.map { "\($0)" } ?? "a pull")
                case .unseated:
                    let rejection = RoomLog.Rejection.tooManyOrigins
                    countDropped(NodeCounters.Drop(rejection), "\(event.id): \(rejection)", from: source.map { "\($0)" } ?? "a pull")
                }
            }
            return (fresh, proofs, outputs, session.log.vector)
        }
        counters.eventsReceived += fresh.count
        // An event a peer signed over this node's events shows the peer holds them.
        for event in fresh where event.origin != identity.id && event.context[identity.id] > 0 {
            noteHeld(room: room, seq: event.context[identity.id], by: event.origin)
        }
        do {
            counters.eventsStored += try store.insert(fresh)
            for proof in proofs where try store.recordFault(proof) {
                // The reader is told by the room's output; this is for a log at --log-level info.
                logger.info(
                    "peer equivocated: two signed versions of one event",
                    metadata: ["huddle.room": "\(room)", "huddle.event": "\(proof.first.id)"])
            }
        } catch {
            logger.error("could not store events", metadata: ["huddle.error": "\(error)"])
        }
        for proof in proofs {
            pushEvidence(proof, to: membership.alivePeers(inRoom: room).map(\.address))
        }
        show(outputs, room: room)
        perform(replication.received(
            room: room, events: fresh, from: source, state: replicationState(room), now: clock.monotonicMicros()))
        return vector
    }

    /// The answer to a peer's pull (nothing for a room this node has not loaded).
    func syncResponse(to request: SyncRequest) -> SyncResponse {
        rooms[request.room]?.log.response(to: request) ?? SyncResponse(room: request.room, events: [], more: false)
    }

    /// Counts `count` dropped inputs (datagrams, frames, connections or events) and logs why, at
    /// debug level.
    func countDropped(_ drop: NodeCounters.Drop, _ reason: String, from source: String, count: Int = 1) {
        counters.count(drop, count)
        logger.debug("dropped input", metadata: ["huddle.peer": "\(source)", "huddle.reason": "\(reason)"])
    }

    /// A decoded, verified datagram.
    func handle(_ message: WireMessage, from source: PeerAddress) {
        counters.packetsIn += 1
        let now = clock.monotonicMicros()
        switch message {
        case .events(let events):
            for (room, events) in Dictionary(grouping: events, by: \.room).sorted(by: { $0.key < $1.key }) {
                ingest(events, room: room, from: source)
            }
        case .digest(let digest):
            perform(membership.heard(from: digest.from, now: now))
            // Only a known node is answered, and at its known address: a digest with a forged
            // source cannot aim this node's pushes at anyone else.
            // The other side of a direct room this node is not in yet says it holds something.
            if !joined.contains(digest.room), directs[digest.room] == digest.from { enterDirect(digest.room) }
            guard joined.contains(digest.room), let log = rooms[digest.room]?.log,
                let peer = membership.peers[digest.from]
            else { return }
            noteHeld(room: digest.room, seq: digest.vector[identity.id], by: peer.id)
            perform(replication.digestReceived(
                room: digest.room, from: peer, remote: log.capped(digest.vector), local: log.vector,
                divergent: log.divergence(from: digest.vector, fingerprints: digest.fingerprints),
                evidence: log.evidence(missingFrom: digest.vector), now: now))
        case .probe(let probe):
            perform(membership.receive(probe, from: source, now: now))
            read(card: probe.agreementKey, roomTags: probe.roomTags, rooms: probe.rooms, of: probe.from, nick: probe.nick)
        case .leaving(let leaving):
            perform(membership.receive(leaving, now: now))
        case .ack(let ack):
            perform(membership.receive(ack, from: source, now: now))
            read(card: ack.agreementKey, roomTags: ack.roomTags, rooms: ack.rooms, of: ack.from, nick: ack.nick)
        case .probeRequest(let request):
            perform(membership.receive(request, from: source, now: now))
        case .nack(let nack):
            perform(membership.receive(nack, from: source, now: now))
        case .syncRequest, .syncResponse:
            countDropped(.misplaced, "sync messages travel over TCP", from: "\(source)")
        }
    }

    // MARK: Sending

    /// Sends one datagram (to an IPv4 literal only: see ``DatagramEndpoint/send(_:to:)``).
    func send(_ message: WireMessage, to address: PeerAddress) {
        send(encoded: message.encoded(), to: [address])
    }

    /// Pushes new events to every live peer in the room, one datagram each, encoded once.
    func push(_ events: [Event], room: String) {
        let peers = roomPeers(room)
        guard !peers.isEmpty else { return }
        send(encoded: WireMessage.events(events).encoded(), to: peers.map(\.address))
    }

    private func send(encoded bytes: [UInt8], to addresses: [PeerAddress]) {
        guard bytes.count <= WireLimits.maxDatagramBytes else {
            logger.warning("message too large for a datagram", metadata: ["huddle.bytes": "\(bytes.count)"])
            return
        }
        let skipped = datagrams.send(bytes, to: addresses)
        counters.packetsOut += addresses.count - skipped.count
        for address in skipped {
            logger.debug("not an IPv4 address; not sending", metadata: ["huddle.peer": "\(address)"])
        }
    }

    func sendDigest(room: String, to address: PeerAddress) {
        guard let log = rooms[room]?.log else { return }
        send(.digest(RoomDigest(from: identity.id, room: room, vector: log.vector, fingerprints: log.fingerprints)), to: address)
    }

    /// Pushes both events of a proof of equivocation: whoever receives them proves the fault
    /// to itself. One datagram if both fit, else one each.
    func pushEvidence(_ proof: Equivocation, to addresses: [PeerAddress]) {
        guard !addresses.isEmpty else { return }
        let both = WireMessage.events([proof.first, proof.second]).encoded()
        if both.count <= WireLimits.maxDatagramBytes {
            send(encoded: both, to: addresses)
        } else {
            for event in [proof.first, proof.second] { send(encoded: WireMessage.events([event]).encoded(), to: addresses) }
        }
    }

    func pullFinished(_ request: PullRequest) {
        guard !request.confirm else { return }
        replication.pullFinished(room: request.room, peer: request.peer)
    }

    func vector(of room: String) -> VersionVector {
        rooms[room]?.log.vector ?? VersionVector()
    }

    // MARK: Membership

    func perform(_ directives: [MembershipDirective]) {
        for directive in directives {
            switch directive {
            case .send(let message, let address):
                // Probes and acks are signed: only this node speaks for itself.
                send(identity.signed(withCard(message)), to: address)
            case .peerChanged(let id, let nick, let from, let to):
                exemptPeersFromRateLimits()
                logger.info(
                    "peer \(to)", metadata: ["huddle.peer": "\(nick)", "huddle.id": "\(id)", "huddle.was": "\(from.map { "\($0)" } ?? "unknown")"])
                show(renderer.peer(id: id, nick: nick, state: to))
                refreshConsole()
                if to == .alive, let peer = membership.peers[id] {
                    perform(replication.peerAlive(peer, sharedRooms: joined.filter(peer.rooms.contains)))
                }
            case .peerLeft(let id, let nick):
                exemptPeersFromRateLimits()
                logger.info("peer left", metadata: ["huddle.peer": "\(nick)", "huddle.id": "\(id)"])
                show(renderer.peer(id: id, nick: nick, state: .gone, left: true))
                refreshConsole()
            case .scheduleTick(let at):
                membershipTickAt = at
                rescheduleTimer()
            case .forward(let message, let address):
                // A peer's own signed ack to a probe run for another node: passed on untouched.
                send(message, to: address)
            }
        }
        // A goodbye names the incarnation that ends: the current one, also after a refutation.
        let incarnation = membership.incarnation
        goodbye.withLock { $0.incarnation = incarnation }
    }

    /// Live peers' addresses are not rate-limited (see ``DatagramRateLimits/exempt``), and they
    /// are who a goodbye goes to (``sayGoodbye()``).
    func exemptPeersFromRateLimits() {
        // Only peers that signed their own word to this node: a DNS-SD announcement names any address.
        let addresses = Set(membership.peers.values.filter { $0.state != .gone && $0.vouched > 0 }.map(\.address))
        datagramLimits.withLock { $0.exempt = addresses }
        goodbye.withLock { $0.to = addresses.sorted() }
    }

    /// Tells every live peer that this node stops on purpose, in a signed ``Leaving`` sent twice
    /// (a datagram can be lost), once however often it is called. Synchronous and off the
    /// actor, so that a graceful shutdown (SIGTERM) can say it before the sockets close.
    nonisolated func sayGoodbye() {
        let (addresses, incarnation) = goodbye.withLock { state -> ([PeerAddress], UInt64)? in
            guard !state.said else { return nil }
            state.said = true
            return (state.to, state.incarnation)
        } ?? ([], 0)
        guard !addresses.isEmpty else { return }
        let bytes = identity.signed(.leaving(Leaving(from: identity.id, incarnation: incarnation))).encoded()
        for _ in 0..<2 { _ = datagrams.send(bytes, to: addresses) }
    }

    // MARK: Timers

    /// Runs whatever is due (hold-back releases, membership tick, anti-entropy) and returns the
    /// wall-clock time of the next deadline.
    func runDueWork() -> Int64 {
        let now = clock.wallMillis()
        // Messages held in a room this node has left stay held: nobody is reading there.
        for room in joined {
            guard let wake = rooms[room]?.nextWake, wake <= now else { continue }
            let (outputs, discarded) = withRoom(room) { ($0.wake(now: now), $0.takeDiscarded()) }
            if !discarded.isEmpty {
                do {
                    try store.delete(discarded, room: room)
                } catch {
                    logger.error("could not delete dropped events", metadata: ["huddle.error": "\(error)"])
                }
            }
            show(outputs, room: room)
        }
        let monotonic = clock.monotonicMicros()
        if membershipTickAt <= monotonic {
            perform(membership.tick(now: monotonic))
        }
        if replicationTickAt <= monotonic {
            var states: [String: Replication.RoomState] = [:]
            for room in joined { states[room] = replicationState(room) }
            perform(replication.tick(now: monotonic, rooms: states))
        }
        refreshConsole()
        return nextDeadline(now: now, monotonic: monotonic)
    }

    /// What replication needs to know of a joined room.
    func replicationState(_ room: String) -> Replication.RoomState {
        Replication.RoomState(peers: roomPeers(room), log: rooms[room]?.log)
    }

    func perform(_ directives: [ReplicationDirective]) {
        for directive in directives {
            switch directive {
            case .sendDigest(let room, let address):
                sendDigest(room: room, to: address)
            case .pushMissing(let room, let have, let address):
                guard let log = rooms[room]?.log else { continue }
                let events = log.push(missingFor: have, config: replication.config)
                guard !events.isEmpty else { continue }
                // Proofs first, if the events name an equivocator's dropped seqs.
                for proof in log.evidence(for: events) { pushEvidence(proof, to: [address]) }
                send(.events(events), to: address)
            case .pull(let room, let peer, let address):
                pullRequestSink.yield(PullRequest(room: room, peer: peer, host: address.host, port: Int(address.port)))
            case .pushEvidence(let proof, let address):
                pushEvidence(proof, to: [address])
            case .recheck(let room, let peer, let origin, let from, let address):
                pullRequestSink.yield(PullRequest(
                    room: room, peer: peer, host: address.host, port: Int(address.port), recheck: origin, from: from))
            case .scheduleTick(let at):
                replicationTickAt = at
                rescheduleTimer()
            }
        }
    }

    func nextDeadline(now: Int64, monotonic: Int64) -> Int64 {
        var deadline = now + Self.maximumSleep
        deadline = min(deadline, now + max(0, (replicationTickAt - monotonic) / 1000))
        deadline = min(deadline, now + max(0, (membershipTickAt - monotonic) / 1000))
        for room in joined {
            if let wake = rooms[room]?.nextWake { deadline = min(deadline, wake) }
        }
        return deadline
    }

    /// Cuts the timer loop's sleep short when something is now due earlier than it planned.
    func rescheduleTimer() {
        let deadline = nextDeadline(now: clock.wallMillis(), monotonic: clock.monotonicMicros())
        if deadline < sleeperDeadline { sleeper?.cancel() }
    }

    func setSleeper(_ task: Task<Void, Never>, until deadline: Int64) {
        sleeper = task
        sleeperDeadline = deadline
    }
}
