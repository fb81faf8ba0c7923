import HuddleCore
import Testing

/// The node's decisions, run synchronously: machines on a network that exists only in the test
/// (``MachineLAN``), no socket, no disk, no sleeping. What `NodeActorTests` checked on a real
/// socket with polling is checked here to the millisecond.
@Suite(.offThePool) struct NodeMachineTests {
    let room = "superbowl"

    func pushes(_ host: MachineLAN.Host, to address: PeerAddress) -> [Event] {
        host.sent.flatMap { sent -> [Event] in
            guard sent.to == address, case .events(let events) = sent.message else { return [] }
            return events
        }
    }

    @Test func aMessageMadeHereIsPushedToEveryLivePeerOfTheRoomAndShownThere() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        let carol = lan.add("carol", room: "worldseries")
        lan.introduceAll()
        lan.on(alice) { $0.handle(.consoleLine("hello", at: $1.wall), now: $1) }
        #expect(pushes(lan[alice], to: lan[bob].address).map(\.body).contains(.chat(text: "hello")))
        #expect(pushes(lan[alice], to: lan[carol].address).isEmpty)
        lan.deliverAll()
        #expect(lan[bob].messages == ["hello"])
        #expect(lan[carol].messages == [])
        // Stored durably before it left: one durable write per event this node made.
        #expect(lan[alice].store.ownWrites == lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id])
    }

    @Test func aProbeNotSignedByItsSenderIsDroppedAndCounted() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = NodeIdentity.generate()
        let mallory = NodeIdentity.generate()
        let source = PeerAddress(host: "10.0.0.66", port: 7400)
        func probe(_ sequence: UInt64, from: NodeID = bob.id) -> Probe {
            Probe(from: from, nick: "bob", incarnation: 1, sequence: sequence, sentAt: .start, port: 7400, rooms: [room], peers: [])
        }
        guard case .probe(var claim) = mallory.signed(.probe(probe(1, from: mallory.id))) else {
            Issue.record("not a probe")
            return
        }
        claim.from = bob.id
        lan.inject(.probe(claim), from: source, to: alice)
        lan.inject(.probe(probe(2)), from: source, to: alice)
        #expect(lan[alice].machine.counters.drops[.badSignature] == 2)
        #expect(lan[alice].machine.membership.peers[bob.id] == nil)
        #expect(lan[alice].sent.isEmpty)
        // Bob's own, signed, is answered at its source: with a probe of alice's, which asks the
        // address to prove itself (docs/PROTOCOL.md, "Trust"), paid by what came from there.
        lan.inject(bob.signed(.probe(probe(3))), from: source, to: alice)
        #expect(lan[alice].machine.membership.peers[bob.id]?.vouched == 1)
        let answers = lan[alice].sent.filter { sent in
            if case .probe = sent.message { sent.to == source } else { false }
        }
        #expect(answers.count == 1, "\(lan[alice].sent.map { ($0.message.kind, $0.to) })")
        #expect(lan[alice].machine.membership.hasVouched(bob.id) == false)
    }

    @Test func aPeerAheadIsHeldBackUntilTheReadersStreamGetsThereToTheMillisecond() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let start = lan.now.wall
        // Bob's stream is 2 s ahead: he marks kickoff at +1 s, alice at +3 s.
        var bob = Writer()
        let events = [
            try bob.make(.join(nick: "bob"), at: start),
            try bob.make(.mark(label: "kickoff"), at: start + .seconds(1)),
            try bob.make(.chat(text: "touchdown"), at: start + .seconds(10)),
        ]
        lan.on(alice) { $0.originate(.mark(label: "kickoff"), in: room, at: start + .seconds(3), now: $1) }
        lan.advance(.seconds(10))
        lan.inject(.events(events), from: PeerAddress(host: "10.0.0.2", port: 7400), to: alice)
        #expect(lan[alice].machine.vector(of: room)[bob.identity.id] == 3)
        // Written at +10 s on bob's stream: alice's stream gets there at +12 s, and the machine
        // says so.
        let dueIn = start + .seconds(12) - lan.now.wall
        #expect(lan[alice].machine.nextDeadline(now: lan.now) <= lan.now.monotonic + dueIn)
        lan.advance(.milliseconds(1_999))
        #expect(lan[alice].messages == [])
        lan.advance(.milliseconds(1))
        #expect(lan[alice].messages == ["touchdown"])
        let shown = lan[alice].outputs.compactMap { output -> ShownMessage? in
            if case .room(.message(let shown), _) = output { shown } else { nil }
        }
        #expect(shown.first?.held == .seconds(2))
        #expect(lan[alice].store.shown[room]?.contains(events[2].id) == true)
    }

    @Test func aDigestIsAnsweredWithWhatThePeerMissesAndWithWhatThisNodeMisses() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        for text in ["one", "two", "three"] { lan.on(alice) { $0.handle(.consoleLine(text, at: $1.wall), now: $1) } }
        lan.dropAll()
        let aliceID = lan[alice].machine.identity.id
        let bobID = lan[bob].machine.identity.id
        let held = lan[alice].machine.vector(of: room)[aliceID]

        // Bob has nothing of alice's: she pushes all of it (once the introductions' answers are
        // past the interval between two answers to one peer).
        lan.now = lan.now.advanced(by: .milliseconds(50))
        let before = lan[alice].sent.count
        lan.inject(.digest(RoomDigest(from: bobID, room: room, vector: VersionVector())), from: lan[bob].address, to: alice)
        let pushed = lan[alice].sent[before...].flatMap { sent -> [Event] in
            if sent.to == lan[bob].address, case .events(let events) = sent.message { events } else { [] }
        }
        #expect(pushed.filter { $0.origin == aliceID }.map(\.seq) == Array(1...held))

        // Bob has two events alice lacks: she answers with her own digest, so he pushes them.
        var his = lan[alice].machine.vector(of: room)
        his[bobID] = lan[alice].machine.vector(of: room)[bobID] + 2
        lan.dropAll()
        lan.now = lan.now.advanced(by: .milliseconds(50))
        let mark = lan[alice].sent.count
        lan.inject(.digest(RoomDigest(from: bobID, room: room, vector: his)), from: lan[bob].address, to: alice)
        let digests = lan[alice].sent[mark...].compactMap { sent -> RoomDigest? in
            if case .digest(let digest) = sent.message { digest } else { nil }
        }
        #expect(digests.first?.from == aliceID)
        #expect(digests.first?.vector[bobID] == lan[alice].machine.vector(of: room)[bobID])
    }

    /// A power cut must not make alice sign a second event with a seq a peer holds (every peer
    /// would take it for equivocation). Her push waits for the commit (the shell holds it); so do
    /// an answer to a digest and a pull's response, which come from the log: until the store says
    /// the event is on disk, they carry everything else of hers, not it.
    @Test func anEventMadeHereLeavesByNoWayBeforeItsCommit() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        let aliceID = lan[alice].machine.identity.id
        let bobID = lan[bob].machine.identity.id
        lan.on(alice) { $0.handle(.consoleLine("on disk", at: $1.wall), now: $1) }
        lan.deliverAll()
        let onDisk = lan[alice].machine.vector(of: room)[aliceID]

        lan.holdCommits = true
        lan.on(alice) { $0.handle(.consoleLine("not on disk yet", at: $1.wall), now: $1) }
        // Its push waits for the commit (the machine's ``CommitGate``): nothing of it is in flight.
        #expect(lan.inFlight.allSatisfy { if case .events = $0.message { false } else { true } })
        let pending = lan[alice].machine.vector(of: room)[aliceID]
        #expect(pending == onDisk + 1)

        func answered() -> [UInt64] {
            lan.now = lan.now.advanced(by: .milliseconds(50))
            let before = lan[alice].sent.count
            lan.inject(.digest(RoomDigest(from: bobID, room: room, vector: VersionVector())), from: lan[bob].address, to: alice)
            lan.dropAll()
            return lan[alice].sent[before...].flatMap { sent -> [Event] in
                if case .events(let events) = sent.message { events } else { [] }
            }.filter { $0.origin == aliceID }.map(\.seq)
        }
        func served() -> [UInt64] {
            lan[alice].machine.syncResponse(to: SyncRequest(from: bobID, room: room, have: VersionVector(), limit: 1024))
                .events.filter { $0.origin == aliceID }.map(\.seq)
        }
        #expect(answered() == Array(1...onDisk))
        #expect(served() == Array(1...onDisk))

        lan.commit(alice)
        #expect(answered() == Array(1...pending))
        #expect(served() == Array(1...pending))
    }

    @Test func aRestartRestoresTheRoomAndShowsNothingTwice() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        var bob = Writer()
        let now = lan.now.wall
        let bobAddress = PeerAddress(host: "10.0.0.2", port: 7400)
        lan.inject(.events([try bob.make(.join(nick: "bob"), at: now), try bob.make(.chat(text: "hi"), at: now)]), from: bobAddress, to: alice)
        #expect(lan[alice].messages == ["hi"])
        let ownSeq = lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id]

        lan.restart(alice)
        #expect(lan[alice].machine.vector(of: room)[bob.identity.id] == 2)
        #expect(lan[alice].messages == [])
        // No re-join (a join resets calibration): the restart made nothing new.
        #expect(lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id] == ownSeq)
        // And the room goes on: bob's next message is shown, and alice's next seq follows on.
        lan.inject(.events([try bob.make(.chat(text: "still here"), at: now + .milliseconds(1))]), from: bobAddress, to: alice)
        #expect(lan[alice].messages == ["still here"])
        let next = lan.on(alice) { $0.originate(.chat(text: "back"), in: room, now: $1) }
        #expect(next?.seq == ownSeq + 1)
    }

    @Test func anEventWithABadSignatureDropsItselfNotTheOthersInItsDatagram() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        var bob = Writer()
        var carol = Writer()
        let now = lan.now.wall
        let good = try bob.make(.join(nick: "bob"), at: now)
        let signed = try carol.make(.join(nick: "carol"), at: now)
        let forged = Event(
            id: signed.id, room: room, createdAt: signed.createdAt, context: signed.context,
            body: .join(nick: "mallory"), signature: signed.signature)
        lan.inject(.events([forged, good]), from: PeerAddress(host: "10.0.0.9", port: 7400), to: alice)
        #expect(lan[alice].machine.vector(of: room)[bob.identity.id] == 1)
        #expect(lan[alice].machine.vector(of: room)[carol.identity.id] == 0)
        #expect(lan[alice].machine.counters.drops[.badSignature] == 1)
    }

    /// The machine keeps each sender's budget of signature checks itself, at the input's time:
    /// a stranger's host may have 400 checked at once, and a signature that does not verify costs
    /// ten. Forty forged events spend it all; the host's next event is dropped unchecked, while
    /// another host's is taken.
    @Test func aSendersBudgetOfSignatureChecksIsKeptAndABadSignatureCostsIt() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let now = lan.now.wall
        var writers = (0..<41).map { _ in Writer() }
        let forged = try writers.indices.dropLast().map { index -> Event in
            let signed = try writers[index].make(.join(nick: "w\(index)"), at: now)
            return Event(
                id: signed.id, room: room, createdAt: signed.createdAt, context: signed.context,
                body: .join(nick: "mallory"), signature: signed.signature)
        }
        let stranger = PeerAddress(host: "10.0.0.9", port: 7400)
        lan.inject(.events(forged), from: stranger, to: alice)
        #expect(lan[alice].machine.counters.drops[.badSignature] == 40)

        let good = try writers[40].make(.join(nick: "w40"), at: now)
        lan.inject(.events([good]), from: stranger, to: alice)
        #expect(lan[alice].machine.counters.drops[.checkBudget] == 1)
        #expect(lan[alice].machine.vector(of: room)[good.origin] == 0)

        lan.inject(.events([good]), from: PeerAddress(host: "10.0.0.10", port: 7400), to: alice)
        #expect(lan[alice].machine.vector(of: room)[good.origin] == 1)
    }
}

/// Private rooms, direct messages and pause, through the machine.
extension NodeMachineTests {
    static let key = try! RoomKey(room: "superbowl", passphrase: "touchdown")
    static let otherKey = try! RoomKey(room: "superbowl", passphrase: "field goal")

    @Test func aPrivateRoomIsReadOnlyByThoseWithItsPassphrase() {
        var lan = MachineLAN()
        let alice = lan.add("alice", room: nil)
        let bob = lan.add("bob", room: nil)
        let mallory = lan.add("mallory", room: nil)
        lan.on(alice) { $0.join(key: Self.key, now: $1) }
        lan.on(bob) { $0.join(key: Self.key, now: $1) }
        lan.on(mallory) { $0.join(key: Self.otherKey, now: $1) }
        lan.introduceAll()
        lan.on(alice) { $0.handle(.consoleLine("the plan", at: $1.wall), now: $1) }
        lan.deliverAll()
        #expect(lan[bob].messages == ["the plan"])
        #expect(lan[mallory].messages == [])
        // On the wire the text is sealed: nothing any datagram carries shows it.
        for sent in lan[alice].sent {
            #expect(!String(decoding: sent.message.encoded(), as: UTF8.self).contains("the plan"))
        }
        // Mallory is told, once for each, that alice and bob hold another passphrase; they are
        // told once that mallory does.
        func anotherPassphrase(_ output: NodeOutput) -> Bool {
            switch output {
            case .notice(.otherPassphrase), .problem(.wrongPassphrase): true
            default: false
            }
        }
        #expect(lan[mallory].said.filter(anotherPassphrase).count == 2)
        #expect(lan[alice].said.filter(anotherPassphrase).count == 1)
        // The room is named, with "(private)", in what the reader sees.
        let line = lan[bob].outputs.compactMap { output -> RoomLine? in
            if case .room(.message, let line) = output { line } else { nil }
        }.first
        #expect(line?.label == "superbowl (private)")
        #expect(line?.isPrivate == true)
    }

    @Test func aDirectMessageReachesOnlyItsPeerAndWaitsForTheirStream() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        let carol = lan.add("carol")
        lan.introduceAll()
        // Bob's stream is 3 s behind alice's: they mark one moment.
        lan.markKickoff(alice, then: bob, apart: .seconds(3))
        lan.on(alice) { $0.handle(.consoleLine("/msg bob did you see that", at: $1.wall), now: $1) }
        lan.deliverAll()
        #expect(lan[carol].messages == [])
        #expect(lan[bob].messages == [])
        lan.advance(.milliseconds(2_999))
        #expect(lan[bob].messages == [])
        lan.advance(.milliseconds(1))
        #expect(lan[bob].messages == ["did you see that"])
        let line = lan[bob].outputs.compactMap { output -> RoomLine? in
            if case .room(.message, let line) = output { line } else { nil }
        }.last
        #expect(line?.name == "@alice")
        #expect(line?.directTo == "bob")
    }

    /// `/delay 2` (no sign: later, as a person types it) says who is ahead or behind now, the
    /// way the status line does; unplaced, it says when it will count.
    @Test func aDelayNudgeSaysWhoIsAheadOfYouNow() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        lan.on(bob) { $0.handle(.consoleLine("/delay 2", at: $1.wall), now: $1) }
        #expect(lan[bob].notices.last == .delayed(by: .seconds(2), room: "superbowl", others: nil))
        lan.markKickoff(alice, then: bob, apart: .seconds(1))
        // Bob marked 1 s later and nudged 2 s: 3 s behind alice; 0.5 s less after this nudge.
        lan.on(bob) { $0.handle(.consoleLine("/delay -0.5", at: $1.wall), now: $1) }
        #expect(lan[bob].notices.last == .delayed(
            by: .milliseconds(-500), room: "superbowl", others: [Standing(name: "alice", behind: .milliseconds(-2_500))]))
    }

    @Test func aPauseHoldsEverythingAndResumingMovesTheReadersOffsetByTheSpan() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        lan.on(alice) { $0.handle(.consoleLine("/now kickoff", at: $1.wall), now: $1) }
        lan.on(bob) { $0.handle(.consoleLine("/now kickoff", at: $1.wall), now: $1) }
        lan.deliverAll()
        lan.on(bob) { $0.handle(.consoleLine("/pause", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("first down", at: $1.wall), now: $1) }
        lan.deliverAll()
        lan.advance(.seconds(5))
        #expect(lan[bob].messages == [])
        lan.on(bob) { $0.handle(.consoleLine("/resume", at: $1.wall), now: $1) }
        #expect(lan[bob].notices.last == .resumed(after: .seconds(5), rooms: ["superbowl"]))
        lan.deliverAll()
        // Written at alice's +0; bob's stream now plays 5 s later than it did: shown at +5 s.
        #expect(lan[bob].messages == ["first down"])
        let bobID = lan[bob].machine.identity.id
        #expect(lan[alice].machine.rooms[room]?.calibration.offset(of: bobID) == .seconds(5))
    }

    @Test func badCommandsAreAnsweredAndChangeNothing() {
        var lan = MachineLAN()
        let alice = lan.add("alice", room: nil)
        lan.on(alice) { $0.handle(.consoleLine("hello", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/frobnicate", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/msg nobody hi", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/join bad room!", at: $1.wall), now: $1) }
        #expect(lan[alice].machine.joined.isEmpty)
        #expect(lan[alice].said.count == 4)
        #expect(lan[alice].said[0] == .problem(.noRoom))
        #expect(lan[alice].said[2] == .problem(.direct(.unknown("nobody"))))
        #expect(lan[alice].sent.isEmpty)
        lan.on(alice) { $0.handle(.consoleLine("/quit", at: $1.wall), now: $1) }
        #expect(lan[alice].quitAsked)
    }
}

/// Relays through the machine. (Routes themselves are tested in MembershipRelayTests, and a
/// room with unreachable pairs in SimulationTests.)
extension NodeMachineTests {
    @Test func aRelayForAStrangerIsRefusedAndCounted() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        let mallory = NodeIdentity.generate()
        var writer = Writer(mallory)
        let event = try writer.make(.join(nick: "mallory"), at: lan.now.wall)
        let payload = WireMessage.events([event]).encoded()
        let relay = try #require(RelayMessage(from: mallory.id, to: lan[bob].machine.identity.id, payload: payload))
        lan.on(alice) { machine, now in
            machine.handle(.datagram(relay.encoded(), from: PeerAddress(host: "10.0.0.66", port: 7400)), now: now)
        }
        #expect(lan[alice].machine.counters.drops[.relayRefused] == 1)
        #expect(lan.relaysInFlight.isEmpty)
    }

    /// Bob is behind a NAT whose router rebooted: his datagrams leave from a new port, and what
    /// goes to the old one dies at the router. Alice's message went there. Bob's next digest
    /// (from the new port) is the first alice hears of it: once the new port has brought enough
    /// bytes to pay for a probe, she checks both ports, moves him to the new one when the old stays
    /// silent and he answers from the new, and offers him the room again, so he has the message
    /// then, not at the next anti-entropy round. A stranger naming bob from its own address gets
    /// nothing at all: its digest does not pay for a probe, and no push goes where an unsigned
    /// datagram points.
    @Test func aPeerWhoseNATForgotItsMappingGetsWhatWasLostAsSoonAsItSpeaksFromItsNewPort() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        let bobID = lan[bob].machine.identity.id
        let oldPort = lan[bob].address
        let newPort = PeerAddress(host: "192.0.2.1", port: 41_234)
        lan.hosts[bob].address = newPort
        lan.on(alice) { $0.handle(.consoleLine("lost at the old port", at: $1.wall), now: $1) }
        lan.deliverAll()
        #expect(lan[bob].messages == [])
        #expect(lan[alice].machine.membership.peers[bobID]?.address == oldPort)

        lan.now = lan.now.advanced(by: .milliseconds(30))
        let digest = RoomDigest(from: bobID, room: room, vector: lan[bob].machine.vector(of: room))
        lan.inject(.digest(digest), from: newPort, to: alice)
        lan.advance(.milliseconds(1))
        // The new port is asked once what came from it pays for a probe (bob's next probe, within
        // a period), the old one too; the old one stays silent for a probe timeout, so bob moves.
        #expect(lan[alice].machine.membership.peers[bobID]?.address == oldPort)
        for _ in 0..<150 { lan.advance(.milliseconds(10)) }
        #expect(lan[alice].machine.membership.peers[bobID]?.address == newPort)
        #expect(lan[bob].messages == ["lost at the old port"])

        // A stranger naming bob from its own address: bob answers at his address and stays; the
        // stranger's address gets no more bytes than its digest brought (too few for a probe).
        let stranger = PeerAddress(host: "198.51.100.7", port: 9)
        lan.now = lan.now.advanced(by: .milliseconds(300))
        let before = lan[alice].sent.count
        let withheld = lan[alice].machine.counters.withheld
        lan.inject(.digest(RoomDigest(from: bobID, room: room, vector: VersionVector())), from: stranger, to: alice)
        for _ in 0..<30 { lan.advance(.milliseconds(10)) }
        let toStranger = lan[alice].sent[before...].filter { $0.to == stranger }.map(\.message)
        #expect(toStranger.isEmpty)
        #expect(lan[alice].machine.counters.withheld == withheld + 1)
        #expect(lan[alice].machine.membership.peers[bobID]?.address == newPort)
    }

    @Test func twoNodesThatCannotTalkChatThroughAThirdForAsLongAsTheirPathStaysCut() {
        var (lan, alice, bob, carol) = MachineLAN.cutPair()
        let carolID = lan[carol].machine.identity.id
        // Time moves in steps shorter than a probe's timeout: a machine woken later than it asked
        // takes itself for slow (Lifeguard's local health) and stretches its periods, which on a
        // real clock happens only on a starved machine. (introduceAll's 1 s steps did that: the
        // first 15 s let it heal.) Then the route holds for 30 s: the relay path through bob is
        // re-measured every period and never expires.
        var routes: Set<String> = []
        for step in 0..<450 {
            lan.advance(.milliseconds(100))
            if step >= 150 { routes.insert("\(lan[alice].machine.membership.route(to: carolID))") }
        }
        let bobID = lan[bob].machine.identity.id
        #expect(routes.count == 1, "the route flipped: \(routes)")
        #expect(lan[alice].machine.membership.route(to: carolID).relay == bobID)
        lan.on(alice) { $0.handle(.consoleLine("over the top", at: $1.wall), now: $1) }
        lan.deliverAll()
        #expect(lan[carol].messages == ["over the top"])
    }
}

