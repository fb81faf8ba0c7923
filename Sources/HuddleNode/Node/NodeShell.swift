import HuddleCore

/// The node's world (``NodeWorld``): what ``NodeDriver`` carries the machine's effects out in,
/// on the node's actor. Sockets, the store's writer, the pull tasks, the console and the sound
/// session; it decides nothing, and answers nothing at once: a commit and a pull report back
/// through the machine's door when they are done.
///
/// Made by ``Node/carryOut(_:)`` for one batch of effects, on the actor: each call runs on it
/// (`assumeIsolated` checks that it does).
struct NodeShell: NodeWorld {
    unowned let node: Node
    /// The last commit this batch started: the turn what it caused waits for.
    private(set) var waitsFor: CommitTurn?

    init(node: Node) {
        self.node = node
    }

    private func onNode(_ body: (isolated Node) -> Void) {
        node.assumeIsolated(body)
    }

    mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) {
        onNode { node in
            node.send(encoded: message.encoded(), to: addresses)
            if DeliveryTrace.enabled, case .events(let events) = message { DeliveryTrace.mark(.sent, events.map(\.id)) }
        }
    }

    mutating func send(bytes: [UInt8], to address: PeerAddress) {
        onNode { $0.send(encoded: bytes, to: [address]) }
    }

    /// A pull runs in a task of its own (``Node/pullLoop(group:)``), which waits for the
    /// machine's word at each step (``Node/pullStep(_:of:)``).
    mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput] {
        onNode { $0.fetches.pulls.sink.yield((pull, first)) }
        return []
    }

    mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput] {
        onNode { $0.fetches.waiting.removeValue(forKey: pull)?.resume(returning: .next(request)) }
        return []
    }

    mutating func pullDone(_ pull: PullRequest) {
        onNode { $0.fetches.waiting.removeValue(forKey: pull)?.resume(returning: .done) }
    }

    /// Checked in the pull's own task, on every core, not on the actor.
    mutating func checkSignatures(_ pull: PullRequest, _ events: [Event], more: Bool) -> [NodeInput] {
        onNode { $0.fetches.waiting.removeValue(forKey: pull)?.resume(returning: .check(events, more: more)) }
        return []
    }

    mutating func write(_ writes: [StoreWrite]) {
        node.writer.enqueue(writes)
    }

    mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput] {
        waitsFor = turn
        onNode { $0.startCommit(writes, turn: turn) }
        return []
    }

    /// A control request waiting for `turn` answers with what it showed.
    mutating func released(_ turn: CommitTurn, _ effects: [NodeEffect]) {
        onNode { node in
            if node.commits.keepShowing {
                node.commits.showing[turn, default: []].append(contentsOf: effects.outputs)
            } else {
                node.commits.showing[turn]?.append(contentsOf: effects.outputs)
            }
        }
    }

    mutating func show(_ output: NodeOutput) {
        onNode { $0.show(output) }
    }

    mutating func show(_ output: NodeOutput, to face: Face?) {
        onNode { $0.show(output, to: face) }
    }

    mutating func advertise(rooms: [String]) {
        onNode { $0.discovery?.update(rooms: rooms) }
    }

    mutating func vouched(_ addresses: Set<PeerAddress>, incarnation: UInt64) {
        node.datagrams.limits.withLock { $0.exempt = addresses }
        node.datagrams.goodbye.withLock {
            $0.to = addresses.sorted()
            $0.incarnation = incarnation
        }
    }

    mutating func refused(_ drop: NodeCounters.Drop, reason: String, from source: PeerAddress) {
        node.logger.debug(
            "dropped input", metadata: ["huddle.peer": "\(source)", "huddle.reason": "\(reason)", "huddle.drop": "\(drop)"])
    }

    mutating func askPassphrase(room: String) {
        onNode { node in
            node.web.hub?.broadcast(ToPage.askPassphrase(room: room).json)
            if let console = node.console {
                console.askSecret("passphrase for \(room)")
            } else {
                // For the terminal only: a page asks in its own way (`ask_passphrase`).
                node.show(node.renderer.info("the next line is the passphrase for \(room)"))
            }
        }
    }

    mutating func quit() {
        onNode { $0.run.quitRequested = true }
    }

    mutating func web(_ command: ConsoleCommand.WebCommand) {
        onNode { $0.webCommand(command) }
    }

    mutating func listen(_ on: Bool) {
        onNode { $0.carryOutListening(on) }
    }

    mutating func hear(_ window: SoundWindow, receivedAt: WallTime) {
        onNode { $0.listening.session?.received(window, receivedAt: receivedAt) }
    }

    /// Read, stripped and sealed off the actor (``Node/preparePicture(_:caption:room:face:)``).
    mutating func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) -> [NodeInput] {
        onNode { $0.preparePicture(source, caption: caption, room: room, face: face) }
        return []
    }

    mutating func openPicture(_ number: Int) {
        onNode { $0.openPicture(number) }
    }

    mutating func doctor(answering face: Face) {
        onNode { $0.runDoctor(answering: face) }
    }

    mutating func delivery(_ report: DeliveryWait.Report) {
        onNode { $0.tellDelivery(report) }
    }

    /// Fetched in a task of its own (``Node/pictureLoop(group:)``).
    mutating func fetchPicture(_ fetch: PictureFetch) -> [NodeInput] {
        onNode { $0.fetches.pictures.sink.yield(fetch) }
        return []
    }
}
