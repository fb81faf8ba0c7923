/// Where a ``NodeMachine`` runs: the `Node` actor's sockets, SQLite and terminal, the
/// simulator's virtual network and disks, the tests' `MachineLAN`. A world decides nothing of the
/// protocol. It sends, pulls, writes and shows what it is asked to, and returns what it can answer
/// at once (a pull answered from memory, a commit that landed, signatures checked inline). One
/// loop, ``NodeDriver``, carries the machine's effects out in any world, so no driver has an
/// interpreter of its own.
///
/// A world that answers later (the node: a commit on the writer's thread, a pull over TCP) returns
/// nothing and hands its answer to the machine's door when it comes (``NodeMachine/handle(_:now:)``).
public protocol NodeWorld {
    /// Sends one datagram to each address (one encoding for all).
    mutating func send(_ message: WireMessage, to addresses: [PeerAddress])
    /// Sends these bytes as one datagram (a relay, a sound window).
    mutating func send(bytes: [UInt8], to address: PeerAddress)
    /// Opens a pull's connection and sends its first request.
    mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput]
    /// Sends the pull's next request on its connection.
    mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput]
    /// The pull is over: closes its connection.
    mutating func pullDone(_ pull: PullRequest)
    /// Checks a batch's signatures (by default here and now; the node spreads them over its
    /// cores) and answers ``NodeInput/pullChecked(_:valid:invalid:more:)``.
    mutating func checkSignatures(_ pull: PullRequest, _ events: [Event], more: Bool) -> [NodeInput]
    /// Writes not waited for, in the order handed over: all of one batch of effects, before the
    /// rest of it is carried out.
    mutating func write(_ writes: [StoreWrite])
    /// Commits `writes`, then answers ``NodeInput/committed(_:)`` with `turn`.
    mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput]
    /// What waited for `turn`'s commit is carried out now (by default nothing to note).
    mutating func released(_ turn: CommitTurn, _ effects: [NodeEffect])
    /// A line for the reader.
    mutating func show(_ output: NodeOutput)
    /// A line for the reader on one face (an answer to what it asked), or every face (`nil`):
    /// by default, the one reader's.
    mutating func show(_ output: NodeOutput, to face: Face?)
    /// The rooms to announce over mDNS.
    mutating func advertise(rooms: [String])
    /// The peers whose addresses are exempt from the datagram rate limit, and whom a goodbye goes
    /// to, at `incarnation`.
    mutating func vouched(_ addresses: Set<PeerAddress>, incarnation: UInt64)
    /// A datagram was refused before it was read (counted already): for the log.
    mutating func refused(_ drop: NodeCounters.Drop, reason: String, from source: PeerAddress)
    /// Asks the reader for a private room's passphrase.
    mutating func askPassphrase(room: String)
    /// `/quit`.
    mutating func quit()
    /// `/web`: the phone's page.
    mutating func web(_ command: ConsoleCommand.WebCommand)
    /// Starts or stops listening.
    mutating func listen(_ on: Bool)
    /// A peer's sound window, for the matcher.
    mutating func hear(_ window: SoundWindow, receivedAt: WallTime)
    /// Reads, strips, seals and stores a picture to send; the answer comes back as an input.
    mutating func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) -> [NodeInput]
    /// Fetches a picture's blob; the answer comes back as an input (now or later).
    mutating func fetchPicture(_ fetch: PictureFetch) -> [NodeInput]
    /// Opens a picture the console showed.
    mutating func openPicture(_ number: Int)
    /// `/doctor`: checks this machine and its network, and answers `face`.
    mutating func doctor(answering face: Face)
    /// Tells where the wait for delivery stands; the run ends when it ended.
    mutating func delivery(_ report: DeliveryWait.Report)
}

extension NodeWorld {
    public mutating func show(_ output: NodeOutput, to face: Face?) { show(output) }

    public mutating func checkSignatures(_ pull: PullRequest, _ events: [Event], more: Bool) -> [NodeInput] {
        let valid = LinkedCheck.valid(events)
        return [.pullChecked(pull, valid: valid, invalid: events.count - valid.count, more: more)]
    }

    public mutating func released(_ turn: CommitTurn, _ effects: [NodeEffect]) {}
}

/// A world with no host around it (the simulator's nodes, the tests'): no mDNS, no rate gate, no
/// log, no reader to ask or to quit, no sound. Those effects do nothing unless it says otherwise;
/// the node's own world (`NodeShell`) is not one, so it must carry out each.
public protocol HeadlessWorld: NodeWorld {}

extension HeadlessWorld {
    public mutating func advertise(rooms: [String]) {}
    public mutating func vouched(_ addresses: Set<PeerAddress>, incarnation: UInt64) {}
    public mutating func refused(_ drop: NodeCounters.Drop, reason: String, from source: PeerAddress) {}
    public mutating func askPassphrase(room: String) {}
    public mutating func quit() {}
    public mutating func web(_ command: ConsoleCommand.WebCommand) {}
    public mutating func listen(_ on: Bool) {}
    public mutating func hear(_ window: SoundWindow, receivedAt: WallTime) {}
    public mutating func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) -> [NodeInput] {
        [.picturePrepared(.failure(PictureProblem("pictures need a node with a disk")), room: room, from: face)]
    }
    public mutating func fetchPicture(_ fetch: PictureFetch) -> [NodeInput] { [] }
    public mutating func openPicture(_ number: Int) {}
    public mutating func doctor(answering face: Face) {}
    public mutating func delivery(_ report: DeliveryWait.Report) {}
}

/// The one loop that carries a machine's effects out in a ``NodeWorld``, in the machine's order.
public enum NodeDriver {
    /// Carries `effects` out in `world`: the writes not waited for first, in one batch, then the
    /// rest in order (what waited for a commit, where the machine released it). Returns what the
    /// world answered at once, in order, for the machine's door.
    public static func carryOut(_ effects: [NodeEffect], in world: inout some NodeWorld) -> [NodeInput] {
        let writes = effects.compactMap { effect -> StoreWrite? in if case .persist(let write) = effect { write } else { nil } }
        if !writes.isEmpty { world.write(writes) }
        var answers: [NodeInput] = []
        perform(effects, in: &world, answers: &answers)
        return answers
    }

    private static func perform(_ effects: [NodeEffect], in world: inout some NodeWorld, answers: inout [NodeInput]) {
        for effect in effects {
            switch effect {
            case .persist:
                continue  // handed over first, in one batch
            case .commit(let writes, let turn):
                answers += world.commit(writes, turn: turn)
            case .afterCommit(let turn, let released):
                // (Never a write: the gate keeps writes in the commit.)
                world.released(turn, released)
                perform(released, in: &world, answers: &answers)
            case .send(let message, let addresses):
                world.send(message, to: addresses)
            case .datagram(let bytes, let address):
                world.send(bytes: bytes, to: address)
            case .pull(let pull, let first):
                answers += world.pull(pull, first: first)
            case .checkSignatures(let pull, let events, let more):
                answers += world.checkSignatures(pull, events, more: more)
            case .pullNext(let pull, let request):
                answers += world.pullNext(pull, request)
            case .pullDone(let pull):
                world.pullDone(pull)
            case .output(let output, let face):
                world.show(output, to: face)
            case .advertise(let rooms):
                world.advertise(rooms: rooms)
            case .vouchedPeers(let addresses, let incarnation):
                world.vouched(addresses, incarnation: incarnation)
            case .refused(let drop, let reason, let source):
                world.refused(drop, reason: reason, from: source)
            case .askPassphrase(let room):
                world.askPassphrase(room: room)
            case .quit:
                world.quit()
            case .web(let command):
                world.web(command)
            case .listen(let on):
                world.listen(on)
            case .hear(let window, let receivedAt):
                world.hear(window, receivedAt: receivedAt)
            case .preparePicture(let source, let caption, let room, let face):
                answers += world.preparePicture(source, caption: caption, room: room, face: face)
            case .fetchPicture(let fetch):
                answers += world.fetchPicture(fetch)
            case .openPicture(let number):
                world.openPicture(number)
            case .doctor(let face):
                world.doctor(answering: face)
            case .delivery(let report):
                world.delivery(report)
            }
        }
    }
}

/// A world that holds its machine and answers at once (the simulator's node, the tests' host):
/// ``drive(_:now:)`` hands the machine an input and carries out all it leads to.
public protocol DrivenNode: HeadlessWorld {
    var machine: NodeMachine { get set }
}

extension DrivenNode {
    /// Hands `input` to the machine, then carries out what it asked for and what the world's
    /// answers lead to, until it asks nothing more.
    public mutating func drive(_ input: NodeInput, now: NodeTime) {
        machine.handle(input, now: now)
        settle(now: now)
    }

    /// Carries out what the machine has asked for, and what the world's answers lead to, until it
    /// asks nothing more (after a request made outside the door: `say`, `originate`).
    /// Each answer's effects are a batch of their own, gated on their own (as the node's are).
    public mutating func settle(now: NodeTime) {
        var batches = [machine.pollEffects()]
        while !batches.isEmpty {
            let effects = batches.removeFirst()
            for input in NodeDriver.carryOut(effects, in: &self) {
                machine.handle(input, now: now)
                batches.append(machine.pollEffects())
            }
        }
    }
}
