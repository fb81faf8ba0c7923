import Testing

@testable import HuddleCore

/// The one loop that carries a machine's effects out in any driver's world (issue 32).
@Suite(.offThePool) struct NodeDriverTests {
    /// A world that notes each call, and commits at once.
    struct Recorder: NodeWorld {
        var calls: [String] = []

        mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) { calls.append("send \(message.kind)") }
        mutating func send(bytes: [UInt8], to address: PeerAddress) { calls.append("bytes \(bytes.count)") }
        mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput] {
            calls.append("pull")
            return []
        }
        mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput] {
            calls.append("pull next")
            return []
        }
        mutating func pullDone(_ pull: PullRequest) { calls.append("pull done") }
        mutating func write(_ writes: [StoreWrite]) { calls.append("write \(writes.count)") }
        mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput] {
            calls.append("commit \(turn.number)")
            return [.committed(turn)]
        }
        mutating func released(_ turn: CommitTurn, _ effects: [NodeEffect]) { calls.append("released \(turn.number)") }
        mutating func show(_ output: NodeOutput) { calls.append("show") }
        mutating func advertise(rooms: [String]) { calls.append("advertise") }
        mutating func vouched(_ addresses: Set<PeerAddress>, incarnation: UInt64) { calls.append("vouched") }
        mutating func refused(_ drop: NodeCounters.Drop, reason: String, from source: PeerAddress) { calls.append("refused") }
        mutating func askPassphrase(room: String) { calls.append("ask") }
        mutating func quit() { calls.append("quit") }
        mutating func web(_ command: ConsoleCommand.WebCommand) { calls.append("web") }
        mutating func listen(_ on: Bool) { calls.append("listen") }
        mutating func hear(_ window: SoundWindow, receivedAt: WallTime) { calls.append("hear") }
        mutating func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) -> [NodeInput] {
            calls.append("prepare picture")
            return []
        }
        mutating func fetchPicture(_ fetch: PictureFetch) -> [NodeInput] {
            calls.append("fetch picture")
            return []
        }
        mutating func openPicture(_ number: Int) { calls.append("open picture") }
        mutating func doctor(answering face: Face) { calls.append("doctor \(face)") }
        mutating func delivery(_ report: DeliveryWait.Report) { calls.append("delivery") }
    }

    let peer = PeerAddress(host: "10.0.0.2", port: 7400)
    let notice = NodeEffect.output(.notice(.talkingIn(room: "superbowl")))

    /// Writes not waited for go to the world first, in one batch, whatever came before them; what
    /// waited for a commit comes out where the machine released it.
    @Test func writesGoFirstInOneBatchAndReleasedEffectsInPlace() {
        var world = Recorder()
        let turn = CommitTurn(number: 7)
        let answers = NodeDriver.carryOut(
            [
                .send(.events([]), to: [peer]), .persist(.joined("superbowl", true)),
                .afterCommit(turn, [notice, .datagram([1, 2, 3], to: peer)]), .persist(.currentRoom("superbowl")),
                .commit([.joined("nfl", true)], turn: CommitTurn(number: 8)), .quit,
            ],
            in: &world)
        #expect(world.calls == ["write 2", "send events", "released 7", "show", "bytes 3", "commit 8", "quit"])
        guard answers.count == 1, case .committed(let committed) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(committed == CommitTurn(number: 8))
    }

    /// A world that checks nothing itself checks a batch here and now: the forged event is
    /// counted, not passed on.
    @Test func signaturesAreCheckedInlineUnlessTheWorldDoesItItself() throws {
        let alice = NodeIdentity.generate()
        var room = RoomSession(room: "superbowl", reader: alice.id)
        let good = try room.compose(.chat(text: "hi"), now: .epoch + .seconds(1), signer: alice).event
        let forged = Event(
            id: EventID(origin: alice.id, seq: 9), room: "superbowl", createdAtMilliseconds: 1_000, context: VersionVector(),
            body: .chat(text: "not hers"), signature: [UInt8](repeating: 7, count: Event.signatureByteCount))
        let pull = PullRequest(room: "superbowl", peer: alice.id, address: peer)
        var world = Recorder()
        let answers = NodeDriver.carryOut([.checkSignatures(pull, [good, forged], more: true)], in: &world)
        guard answers.count == 1, case .pullChecked(let checked, let valid, let invalid, let more) = answers[0] else {
            Issue.record("answers: \(answers)")
            return
        }
        #expect(checked == pull && valid == [good] && invalid == 1 && more)
    }

    /// A node on its own, its world holding commits like a slow disk: its own message is shown
    /// only once its commit is reported, through the same door.
    struct Lone: DrivenNode {
        var machine: NodeMachine
        var holdCommits = true
        var held: [CommitTurn] = []
        var shown: [String] = []

        mutating func send(_ message: WireMessage, to addresses: [PeerAddress]) {}
        mutating func send(bytes: [UInt8], to address: PeerAddress) {}
        mutating func pull(_ pull: PullRequest, first: SyncRequest) -> [NodeInput] { [] }
        mutating func pullNext(_ pull: PullRequest, _ request: SyncRequest) -> [NodeInput] { [] }
        mutating func pullDone(_ pull: PullRequest) {}
        mutating func write(_ writes: [StoreWrite]) {}
        mutating func commit(_ writes: [StoreWrite], turn: CommitTurn) -> [NodeInput] {
            guard holdCommits else { return [.committed(turn)] }
            held.append(turn)
            return []
        }
        mutating func show(_ output: NodeOutput) {
            if case .room(.message(let message), _) = output { shown.append(message.text) }
        }
    }

    @Test func aHeldCommitHoldsTheMessageUntilItIsReportedAndAnAtOnceCommitDoesNot() {
        let now = NodeTime(wall: .milliseconds(sinceEpoch: 1_700_000_000_000), monotonic: .start + .seconds(5))
        let setup = NodeSetup(identity: NodeIdentity.generate(), nick: "alice", port: 7400, startedAt: now.wall, seed: 1, shield: nil)
        var node = Lone(machine: NodeMachine(setup, restore: MemoryStore().restore))
        node.drive(.start(room: "superbowl", key: nil, seeds: []), now: now)
        for turn in node.held { node.drive(.committed(turn), now: now) }
        node.held = []
        node.drive(.consoleLine("first down", at: now.wall), now: now)
        #expect(node.shown == [])
        #expect(node.held.count == 1)
        node.drive(.committed(node.held.removeFirst()), now: now)
        #expect(node.shown == ["first down"])
        node.holdCommits = false
        node.drive(.consoleLine("touchdown", at: now.wall), now: now)
        #expect(node.shown == ["first down", "touchdown"])
    }
}
