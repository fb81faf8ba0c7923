import Foundation
import HuddleCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A running Huddle node: the I/O around one ``NodeMachine``.
///
/// The machine decides everything (rooms, membership, replication, privacy, what the reader
/// sees); this actor feeds it what arrives (datagrams decoded off the actor, pulls' answers,
/// console lines, control requests, mDNS, the timer) and carries out what it asks, in order:
/// writes to the store, datagrams, pulls, lines for the reader. It has no policy of its own.
///
/// ```swift
/// let web = WebService()  // run beside the node, in its service group (Run.swift)
/// try await Node.run(NodeConfiguration(nick: "alice", room: "superbowl", dataDir: dir), logger: logger, web: web)
/// ```
public actor Node {
    let configuration: NodeConfiguration
    let logger: Logger
    /// The wall and monotonic clocks everything is timed by.
    let clock: any NodeClock
    /// Commits the store's writes off the actor (see ``StoreWriter`` for what waits for what);
    /// reads go to its store.
    nonisolated let writer: StoreWriter
    /// Where a line's own event and a shown record land at once, so that neither waits for the
    /// writer's commit (``CommitJournal``).
    let journal: CommitJournal
    let identity: NodeIdentity
    let renderer: any OutputRenderer
    /// Where output lines go: stdout, or above the interactive console's prompt.
    let sink: any LineOutput
    /// The console on a terminal, when stdin and stdout are one (see ``InteractiveConsole``).
    let console: InteractiveConsole?
    /// The UDP and TCP port this node listens on.
    let port: Int

    /// Every decision the node makes.
    var machine: NodeMachine
    /// What stopped this run, and what its end waits for.
    var run = RunState()

    /// What the node hears, while it listens, and the tasks around it.
    var listening = NodeListening()

    /// The page phones open (`--web`, `/web`), served by the run's ``WebService``.
    var web: WebFace

    /// mDNS advertisement and browsing, unless `--no-mdns`.
    var discovery: ServiceDiscovery?
    /// The UDP socket: datagrams out go straight to it, fire and forget, like UDP; datagrams in
    /// meet its per-address limits off the actor before anything else.
    let datagrams: DatagramPort
    /// Pulls and picture fetches the machine asked for, to run (``pullLoop(group:)``,
    /// ``pictureLoop(group:)``).
    var fetches = NodeFetches()
    /// Pictures on disk.
    nonisolated let pictures: PictureStore
    /// What the console was shown of pictures, and their bytes on disk.
    var shownPictures = ShownPictures()

    /// Commits under way, and what the turns a control request waits for showed.
    var commits = CommitsUnderWay()

    /// The timer loop's current sleep and when it ends (monotonic), so earlier work can cut it short.
    var sleeper: (task: Task<Void, Never>?, until: MonotonicTime) = (nil, .distantFuture)

    /// A node on sockets already bound to `port` (see ``bind(host:port:on:)``). Output goes to
    /// `sink`, or the console, or stdout; time comes from `clock`. The machine starts from what
    /// the store holds.
    init(
        configuration: NodeConfiguration, store: HuddleStore, identity: NodeIdentity, logger: Logger,
        port: Int, datagrams: DatagramEndpoint, console: InteractiveConsole? = nil, web: WebService,
        clock: any NodeClock = SystemClock(), sink: (any LineOutput)? = nil, commitDelay: Duration? = nil
    ) throws {
        self.configuration = configuration
        writer = StoreWriter(store: store, logger: logger, commitDelay: commitDelay)
        self.identity = identity
        self.logger = logger
        self.port = port
        self.datagrams = DatagramPort(datagrams)
        let renderer = outputRenderer(
            json: configuration.json, colors: configuration.colors, interactive: console != nil,
            picturesDirectory: configuration.dataDir + "/pictures")
        self.renderer = renderer
        self.console = console
        self.web = WebFace(service: web)
        self.sink = sink ?? console ?? OutputSink(droppedNotice: { count in
            renderer.error("\(count) output lines were dropped: stdout was not read for a while")
        })
        self.clock = clock
        pictures = PictureStore(dataDir: configuration.dataDir)
        try pictures.prepare()
        // What the last run journaled and the store had not committed goes back first.
        journal = try CommitJournal(directory: store.directory, store: store)
        var restore = try store.restore()
        restore.pictures = pictures.heldRoots()
        restore.lostUnsynced = try store.beginRun(bootID: BootID.current())
        machine = NodeMachine(
            NodeSetup(
                identity: identity, nick: configuration.nick, port: UInt16(port), startedAt: clock.wall(),
                seed: UInt64.random(in: .min ... .max), shield: configuration.shield,
                showWaiting: configuration.showWaiting, soundSharing: configuration.soundSharing),
            restore: restore)
    }

    /// The instant an input is handled at: both clocks, read once.
    var now: NodeTime { NodeTime(wall: clock.wall(), monotonic: clock.monotonic()) }

    // MARK: Carrying out what the machine asks

    /// Runs `body` on the machine, then carries out what it asked for. With `waiting` (a person's
    /// input: a console line, `huddle send`) it returns once that is done, so what it wrote is on
    /// disk and sent before the next line is read or the request is answered. Without (what
    /// arrives from the network, the timer), it returns at once and what waits for a commit
    /// follows it: a slow disk must not hold up the socket's next datagram.
    @discardableResult
    func step<T>(waiting: Bool = true, _ body: (inout NodeMachine, NodeTime) throws -> T) async rethrows -> T {
        let (result, turn) = try started(body)
        if waiting, let turn { await done(turn) }
        return result
    }

    /// Runs `body` on the machine and starts carrying out what it asked for, without waiting:
    /// its result, and the turn its effects wait for (if any).
    func started<T>(_ body: (inout NodeMachine, NodeTime) throws -> T) rethrows -> (T, CommitTurn?) {
        let result = try body(&machine, now)
        return (result, carryOut(machine.pollEffects()))
    }

    /// ``step(waiting:_:)`` for a person's request, and what it showed the reader: the control
    /// socket answers a console command with the words it made.
    func stepShowing<T>(_ body: (inout NodeMachine, NodeTime) -> T) async -> (T, [NodeOutput]) {
        let result = body(&machine, now)
        let effects = machine.pollEffects()
        var shown = effects.outputs
        // A turn that lands in the journal is let out within carryOut: what it shows is kept too.
        commits.keepShowing = true
        let turn = carryOut(effects)
        commits.keepShowing = false
        if let turn {
            if commits.showing[turn] == nil { commits.showing[turn] = [] }
            await done(turn)
            shown += commits.showing.removeValue(forKey: turn) ?? []
        }
        return (result, shown)
    }

    /// Returns once `turn`'s effects are carried out: its commit, and every earlier one, reported.
    func done(_ turn: CommitTurn) async {
        while let earliest = commits.tasks.keys.min(), earliest <= turn {
            await commits.tasks[earliest]?.value
        }
    }

    /// Returns once every commit under way is reported and what waited for it carried out: before
    /// the node stops, so that what it decided to show is shown and what it wrote is sent.
    func settle() async {
        while let pending = commits.tasks.values.first {
            await pending.value
        }
    }

    /// Carries out what the machine let out, in order (it decided what waits for which commit),
    /// through the one driver loop (``NodeDriver``) in the node's world (``NodeShell``): writes
    /// not waited for go to the writer first, in one go; a commit runs off the actor and reports
    /// back (``committed(_:)``), the actor taking other inputs meanwhile. The timer and the
    /// console are brought up to date once, after. Returns the turn the effects wait for, if any.
    @discardableResult
    func carryOut(_ effects: [NodeEffect]) -> CommitTurn? {
        guard !effects.isEmpty else { return nil }
        var shell = NodeShell(node: self)
        _ = NodeDriver.carryOut(effects, in: &shell)  // (it answers nothing at once)
        // Turns whose writes landed in the journal are committed as far as a crash goes: what
        // waited for them comes out now, not after a hop to the writer's thread and back.
        while !commits.landed.isEmpty {
            machine.handle(.committed(commits.landed.removeFirst()), now: now)
            _ = NodeDriver.carryOut(machine.pollEffects(), in: &shell)
        }
        rescheduleTimer()
        refreshConsole()
        return shell.waitsFor
    }

    /// Starts committing `writes` off the actor; the machine hears of it when they are on disk.
    /// They are handed to the writer here, on the actor, so turns commit in their order. Writes
    /// the journal holds land there first (``land(_:)``): the turn counts as committed at once.
    func startCommit(_ writes: [StoreWrite], turn: CommitTurn) {
        let writer = writer
        DeliveryTrace.mark(.made, DeliveryTrace.own(writes))
        if land(writes) {
            DeliveryTrace.mark(.stored, DeliveryTrace.own(writes))
            commits.landed.append(turn)
            return
        }
        let handed = writer.hand(writes)
        commits.tasks[turn] = Task {
            await writer.committed(handed)
            DeliveryTrace.mark(.stored, DeliveryTrace.own(writes))
            self.committed(turn)
        }
    }

    /// Appends `writes` to the journal and hands them to the writer, not to be waited for, if
    /// the journal can hold them and everything it relies on is committed
    /// (``StoreWriter/mayJournal(backlog:)``). Whether it did; if not (or the append failed),
    /// the writes wait for their commit as before.
    private func land(_ writes: [StoreWrite]) -> Bool {
        guard JournalEntry.canHold(writes), writer.mayJournal(backlog: Self.journalBacklog) else { return false }
        if journal.size > CommitJournal.emptyAfter, let last = commits.lastJournaled, writer.holds(last) {
            journal.empty()
        }
        do {
            let number = try journal.append(writes)
            commits.lastJournaled = writer.hand(writes, journaled: number)
            return true
        } catch {
            logger.warning("could not append to the journal", metadata: ["huddle.error": "\(error)"])
            return false
        }
    }

    /// At most this many hand-overs wait for the writer before a turn waits for its commit
    /// again rather than landing in the journal: what a disk that cannot keep up holds in memory
    /// stays bounded (a line's writes are ~1 KB). A busy room on a disk whose every commit takes
    /// 50 ms keeps ~5 waiting; with 4 allowed, its lines waited for the disk again (p50 100 ms).
    static let journalBacklog = 256

    /// `turn`'s writes are on disk: the machine lets out what waited for them.
    private func committed(_ turn: CommitTurn) {
        machine.handle(.committed(turn), now: now)
        carryOut(machine.pollEffects())
        commits.tasks[turn] = nil
    }

    // MARK: Output

    func show(_ line: String?) {
        guard let line else { return }
        sink.write(line)
    }

    func showError(_ message: String) {
        show(renderer.error(message))
        web.hub?.publish(Self.pageRenderer.error(message))
    }

    func showInfo(_ text: String) {
        show(renderer.info(text))
        web.hub?.publish(Self.pageRenderer.info(text))
    }

    /// A line for the console only: the answer to what was typed there (`/web`).
    func showAtConsole(info text: String) { show(renderer.info(text)) }
    func showAtConsole(error text: String) { show(renderer.error(text)) }

    /// A line of the machine's, in words (or JSON), on every face (`nil`) or the one that asked
    /// (``Face``): the console and the pages; an answer to the control socket goes back through
    /// it (``stepShowing(_:)``), not here.
    func show(_ output: NodeOutput, to face: Face? = nil) {
        if case .peer(let id, let nick, let state, let left) = output {
            logger.info("peer \(left ? "left" : "\(state)")", metadata: ["huddle.peer": "\(nick)", "huddle.id": "\(id)"])
        }
        let output = revealPictures(of: output)
        if face == nil || face == .console {
            let (renderer, reader, hasConsole) = (renderer, identity.id, console != nil)
            sink.write { Self.rendered(output, by: renderer, reader: reader, hasConsole: hasConsole) }
            showPicturesAtConsole(of: output)
        }
        if face == nil || face == .page, let hub = web.hub, let line = rendered(output, by: Self.pageRenderer) {
            hub.publish(line)
            pushPictures(of: output)
        }
    }

    /// A line of the machine's as `renderer` writes it (`nil`: nothing to say).
    func rendered(_ output: NodeOutput, by renderer: any OutputRenderer) -> String? {
        Self.rendered(output, by: renderer, reader: identity.id, hasConsole: console != nil)
    }

    /// A line of the machine's as `renderer` writes it for `reader`, off the actor (the sink
    /// renders a console's lines on its own thread).
    nonisolated static func rendered(
        _ output: NodeOutput, by renderer: any OutputRenderer, reader: NodeID, hasConsole: Bool
    ) -> String? {
        switch output {
        case .room(let output, let line):
            renderer.render(
                output, room: renderer.isJSON ? line.name : line.label, reader: reader, inCurrentRoom: line.isCurrent,
                directTo: line.directTo, isPrivate: line.isPrivate)
        case .peer(let id, let nick, let state, let left):
            renderer.peer(id: id, nick: nick, state: state, address: nil, left: left)
        case .nickConflict(let member, let known):
            renderer.nickConflict(member, knownID: known)
        case .history(let event, let member, let gameTime, let room):
            renderer.history(event, from: member, gameTime: gameTime, room: room)
        case .notice(let notice):
            renderer.notice(notice)
        case .help(all: false):
            renderer.info(ConsoleHelp.short)
        case .help(all: true):
            renderer.info(ConsoleHelp.all + (hasConsole ? "\n" + InteractiveConsole.keysHelp : ""))
        case .problem(let problem):
            renderer.error(problem.words)
        case .listening(let source, let startedAt):
            renderer.listening(source: source, startedAt: startedAt)
        case .listeningStopped(let reason):
            renderer.listeningStopped(reason: reason)
        case .shield(let shield, let changed):
            renderer.shield(shield, changed: changed)
        case .confirmMark(let wild, let room, let proposedAgo):
            renderer.confirmMark(wild, room: room, proposedAgo: proposedAgo)
        }
    }

    /// Tells the interactive console (if any) what its status line, prompt and Tab show now.
    func refreshConsole() {
        refreshPages()
        guard let console else { return }
        console.update(ConsoleContext(machine.consoleView(now: now)))
    }

    // MARK: Sending

    func send(encoded bytes: [UInt8], to addresses: [PeerAddress]) {
        guard bytes.count <= WireLimits.maxDatagramBytes else {
            logger.warning("message too large for a datagram", metadata: ["huddle.bytes": "\(bytes.count)"])
            return
        }
        for (address, why) in datagrams.endpoint.send(bytes, to: addresses) {
            switch why {
            case .notIPv4:
                logger.debug("not an IPv4 address; not sending", metadata: ["huddle.peer": "\(address)"])
            case .refused(let errno):
                logger.debug(
                    "the kernel will not send there (no route, a broadcast address, a firewall); not sent",
                    metadata: ["huddle.peer": "\(address)", "huddle.error": "\(String(cString: strerror(errno)))"])
            }
        }
    }

    /// Tells every live peer that this node stops on purpose, in a signed ``Leaving`` sent twice
    /// (a datagram can be lost), once however often it is called. Synchronous and off the
    /// actor, so that a graceful shutdown (SIGTERM) can say it before the sockets close.
    nonisolated func sayGoodbye() {
        let (addresses, incarnation) = datagrams.goodbye.withLock { state -> ([PeerAddress], UInt64)? in
            guard !state.said else { return nil }
            state.said = true
            return (state.to, state.incarnation)
        } ?? ([], 0)
        guard !addresses.isEmpty else { return }
        let bytes = identity.signed(.leaving(Leaving(from: identity.id, incarnation: incarnation))).encoded()
        for _ in 0..<2 { _ = datagrams.endpoint.send(bytes, to: addresses) }
    }

    // MARK: Inputs

    /// Hands `input` to the machine and carries out what it caused (see ``step(waiting:_:)``).
    func feed(_ input: NodeInput, waiting: Bool = true) async {
        await step(waiting: waiting) { machine, now in machine.handle(input, now: now) }
    }

    /// A datagram's bytes, past the rate limit: the machine decodes and checks them.
    func take(_ bytes: [UInt8], from source: PeerAddress) async {
        await feed(.datagram(bytes, from: source), waiting: false)
    }

    /// Counts a dropped input (a TCP frame or connection) and logs why, at debug level.
    func countDropped(_ drop: NodeCounters.Drop, _ reason: String, from source: String, count: Int = 1) async {
        await feed(.dropped(drop, count: count), waiting: false)
        logger.debug("dropped input", metadata: ["huddle.peer": "\(source)", "huddle.reason": "\(reason)"])
    }

    /// The answer to a peer's pull.
    func syncResponse(to request: SyncRequest) -> SyncResponse {
        machine.syncResponse(to: request)
    }

    /// What the machine said of a pull's batch: check these signatures, ask for more, or stop.
    enum PullStep: Sendable {
        case check([Event], more: Bool)
        case next(SyncRequest)
        case done
    }

    /// Hands `input` about `pull` to the machine and returns its word on the pull.
    func pullStep(_ input: NodeInput, of pull: PullRequest) async -> PullStep {
        await withCheckedContinuation { waiter in
            fetches.waiting[pull] = waiter
            machine.handle(input, now: now)
            carryOut(machine.pollEffects())
        }
    }

    /// A pull's connection ended: if the machine had not ended the pull, it failed.
    func pullEnded(_ pull: PullRequest) async {
        await feed(.pullFailed(pull), waiting: false)
    }

    func vector(of room: String) -> VersionVector {
        machine.vector(of: room)
    }

    // MARK: Timers

    /// Runs whatever is due and returns when the next is, on the monotonic clock.
    func runDueWork() async -> MonotonicTime {
        let deadline = await step(waiting: false) { machine, now in
            machine.handle(.tick, now: now)
            return machine.nextDeadline(now: now)
        }
        giveBackFreedOnceQuiet()
        return deadline
    }

    /// Gives freed memory back once the node has taken in a batch of events or more since it last
    /// did and then a turn of the timer passed with none: events taken in live (a piped burst,
    /// pushes from a busy room) free as much around them as a pull does (which gives back on its
    /// own when it ends). While they keep coming, what they freed serves the next ones.
    func giveBackFreedOnceQuiet() {
        let held = machine.heldEventCount
        defer { run.heldAtLastTick = held }
        if held < run.heldAtGiveBack { run.heldAtGiveBack = held }
        guard held == run.heldAtLastTick, held >= run.heldAtGiveBack + WireLimits.maxEventsPerBatch else { return }
        ProcessMemory.giveBackFreed()
        run.heldAtGiveBack = held
    }

    /// Cuts the timer loop's sleep short when something is now due earlier than it planned. A
    /// release is due at a wall-clock ms, which the machine places on the monotonic clock from
    /// `now`; two readings of the same release differ by under 1 ms (the wall clock's grain), so
    /// only a deadline a whole ms earlier counts. Otherwise every input while a message is held
    /// back would wake the timer for nothing.
    func rescheduleTimer() {
        if machine.nextDeadline(now: now) + .milliseconds(1) <= sleeper.until { sleeper.task?.cancel() }
    }

    func setSleeper(_ task: Task<Void, Never>, until deadline: MonotonicTime) {
        sleeper = (task, deadline)
    }
}

extension [NodeEffect] {
    /// The lines for the reader among these effects.
    var outputs: [NodeOutput] {
        compactMap { effect in if case .output(let output, _) = effect { output } else { nil } }
    }
}
