import Testing

@testable import HuddleCore

private let second = TimeSpan.seconds(1)

@Suite(.offThePool) struct MembershipTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)
    let dave = NodeID.fixture(4)

    let bobAt = PeerAddress(host: "192.0.2.12", port: 7002)
    let carolAt = PeerAddress(host: "192.0.2.13", port: 7003)
    /// Each probe a test makes gets the next sequence number, as a real sender's do (an older
    /// one is taken for a replay).
    let sequences = SequenceCounter()

    final class SequenceCounter: @unchecked Sendable {
        private var next: UInt64 = 100
        func take() -> UInt64 {
            next += 1
            return next
        }
    }

    /// Plain SWIM unless a test says otherwise: the Lifeguard parts are tested in
    /// MembershipHealthTests.
    func aliceNode(config: MembershipConfig = .swim) -> Membership {
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1, config: config)
        membership.rooms = ["superbowl"]
        return membership
    }

    func probe(
        from id: NodeID, nick: String = "bob", sequence: UInt64? = nil, sentAt: MonotonicTime = .start + .microseconds(12_345), port: UInt16 = 7002,
        incarnation: UInt64 = 1, rooms: [String] = ["superbowl"], peers: [PeerRecord] = []
    ) -> Probe {
        Probe(
            from: id, nick: nick, incarnation: incarnation, sequence: sequence ?? sequences.take(), sentAt: sentAt,
            port: port, rooms: rooms, peers: peers)
    }

    func ack(
        _ probe: Probe, from id: NodeID, nick: String = "bob", incarnation: UInt64 = 1,
        rooms: [String] = ["superbowl"], peers: [PeerRecord] = []
    ) -> Ack {
        Ack(
            from: id, nick: nick, incarnation: incarnation, sequence: probe.sequence, echoedSentAt: probe.sentAt,
            rooms: rooms, peers: peers)
    }

    func record(_ id: NodeID, _ nick: String, at address: PeerAddress, _ state: PeerState = .alive,
                incarnation: UInt64 = 1) -> PeerRecord {
        PeerRecord(id: id, nick: nick, host: address.host, port: address.port, state: state, incarnation: incarnation)
    }

    // MARK: Seeds

    @Test func seedIsProbedAndResolvedByTheAckWhateverTheHostSpelling() throws {
        var membership = aliceNode()
        let seed = try #require(PeerAddress(parsing: "localhost:7002"))
        membership.addSeed(seed)
        #expect(membership.seeds == [seed])

        let first = membership.tick(now: .start)
        #expect(first.count == 2)
        #expect(first.last == .scheduleTick(at: .start + second))
        let sent = try #require(first.probes.first)
        #expect(sent.to == seed)
        #expect(sent.probe.from == alice)
        #expect(sent.probe.nick == "alice")
        #expect(sent.probe.incarnation == 1)
        #expect(sent.probe.sentAt == .start)
        #expect(sent.probe.port == 7001)
        #expect(sent.probe.rooms == ["superbowl"])
        #expect(sent.probe.peers == [])

        // Bob answers from 127.0.0.1, 420 µs later.
        let answer = ack(sent.probe, from: bob, incarnation: 5, rooms: ["superbowl", "replays"])
        let learned = membership.receive(answer, from: PeerAddress(host: "127.0.0.1", port: 7002), now: .start + .microseconds(420))
        #expect(learned == [.peerChanged(id: bob, nick: "bob", from: nil, to: .alive)])
        #expect(membership.seeds == [])
        #expect(membership.peers[bob] == Peer(
            id: bob, nick: "bob", address: seed, rooms: ["superbowl", "replays"], state: .alive, incarnation: 5,
            lastSeen: .start + .microseconds(420), rtt: .microseconds(420), foundBy: .seed, vouched: 5))

        // From now on bob is probed as a peer (at the address we know), and the seed no more;
        // the period's next probe is due a quarter period later, unless this one is answered.
        let next = membership.tick(now: .start + second)
        #expect(next.probes.map(\.to) == [seed])
        #expect(next.last == .scheduleTick(at: .start + .milliseconds(1_250)))
        let secondProbe = try #require(next.probes.first?.probe)
        #expect(secondProbe.sequence != sent.probe.sequence)
        #expect(secondProbe.sentAt == .start + second)

        // Second sample 100 µs: SRTT = (7 × 420 + 100) / 8 = 380.
        _ = membership.receive(ack(secondProbe, from: bob, incarnation: 5), from: bobAt, now: .start + second + .microseconds(100))
        #expect(membership.peers[bob]?.rtt == .microseconds(380))
        #expect(membership.peers[bob]?.address == seed)
    }

    @Test func rttOnlyFromAnOutstandingProbeWithItsOwnSendTime() throws {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        let sent = try #require(membership.tick(now: .start).probes.first?.probe)

        // An ack whose sequence we never sent: alive evidence, but no RTT and no seed resolution.
        var stray = ack(sent, from: bob)
        stray.sequence = 9_999
        _ = membership.receive(stray, from: bobAt, now: .start + .microseconds(300))
        #expect(membership.peers[bob]?.rtt == nil)
        #expect(membership.peers[bob]?.foundBy == .inbound)
        #expect(membership.seeds == [bobAt])

        // A matching sequence with a tampered send time: resolves the seed, still no RTT.
        var tampered = ack(sent, from: bob)
        tampered.echoedSentAt = .start - .milliseconds(5)
        _ = membership.receive(tampered, from: bobAt, now: .start + .microseconds(400))
        #expect(membership.peers[bob]?.rtt == nil)
        #expect(membership.seeds == [])

        // The same sequence again is no longer outstanding.
        _ = membership.receive(ack(sent, from: bob), from: bobAt, now: .start + .microseconds(500))
        #expect(membership.peers[bob]?.rtt == nil)
        #expect(membership.peers[bob]?.lastSeen == .start + .microseconds(500))
    }

    @Test func unansweredSeedIsProbedEveryInterval() {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        var probeTimes: [MonotonicTime] = []
        var now = MonotonicTime.start
        while now <= .start + 5 * second {
            let directives = membership.tick(now: now)
            probeTimes += directives.probes.map(\.probe.sentAt)
            now = directives.wake!
        }
        #expect(probeTimes == [0, 1, 2, 3, 4, 5].map { .start + $0 * second })
        #expect(membership.peers.isEmpty)
    }

    @Test func seedThatIsThisNodeIsDropped() throws {
        var membership = aliceNode()
        let me = PeerAddress(host: "127.0.0.1", port: 7001)
        membership.addSeed(me)
        let sent = try #require(membership.tick(now: .start).probes.first)
        #expect(membership.receive(sent.probe, from: me, now: .start + .microseconds(10)) == [])
        #expect(membership.seeds == [])
        #expect(membership.peers.isEmpty)
    }

    @Test func seedThatProbesUsFirstIsResolved() {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        _ = membership.receive(probe(from: bob), from: PeerAddress(host: bobAt.host, port: 50_000), now: .start)
        #expect(membership.seeds == [])
        #expect(membership.peers[bob]?.foundBy == .inbound)
        // From the seed's very address: the user's word for it, so a live peer at once.
        var other = aliceNode()
        other.addSeed(bobAt)
        _ = other.receive(probe(from: bob), from: bobAt, now: .start)
        #expect(other.peers[bob]?.foundBy == .seed)
        #expect(other.isProven(bob))
    }

    @Test func oneSeedIsEnough() throws {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        let toBob = try #require(membership.tick(now: .start).probes.first?.probe)
        let answer = ack(
            toBob, from: bob, peers: [record(carol, "carol", at: carolAt), record(alice, "alice", at: bobAt)])
        let learned = membership.receive(answer, from: bobAt, now: .start + .microseconds(500))
        #expect(learned == [
            .peerChanged(id: bob, nick: "bob", from: nil, to: .alive),
            .peerProven(id: bob),  // his ack came from where the probe went
            .scheduleTick(at: .start + .microseconds(500)),  // carol is to be probed at once
        ])
        // Bob's word for carol is hearsay: she is probed, and a peer only once she answers.
        #expect(membership.peers[carol] == nil)
        #expect(membership.hearsayCount == 1)
        #expect(membership.peers[alice] == nil)

        let next = membership.tick(now: .start + .microseconds(500))
        #expect(next.probes.map(\.to) == [carolAt])
        // The probe to carol names nobody: gossip goes only to an address that has proven itself
        // (Membership+Trust). She learns of alice from it, and of bob from bob.
        let toCarol = try #require(next.probes.first?.probe)
        #expect(toCarol.peers == [])
        #expect(next.last == .scheduleTick(at: .start + second))

        let met = membership.receive(ack(toCarol, from: carol, nick: "carol"), from: carolAt, now: .start + .microseconds(600))
        #expect(met.contains(.peerChanged(id: carol, nick: "carol", from: nil, to: .alive)))
        #expect(membership.peers[carol]?.foundBy == .gossip)
        #expect(membership.peers[carol]?.address == carolAt)
        #expect(membership.hearsayCount == 0)
    }

    /// A node learned of by gossip answers our probe with one of its own (it asks our address to
    /// prove itself first). Our ack proves us there, and a second probe of ours, which it then
    /// acks, proves its address here at once: within a round trip, not at the next period.
    @Test func aNewcomerWhoAnswersWithAProbeIsProvenWithinARoundTrip() throws {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        let toBob = try #require(membership.tick(now: .start).probes.first?.probe)
        _ = membership.receive(ack(toBob, from: bob, peers: [record(carol, "carol", at: carolAt)]), from: bobAt, now: .start)
        let toCarol = try #require(membership.tick(now: .start + .microseconds(100)).probes.first)
        #expect(toCarol.to == carolAt)

        // Carol has not heard of alice: she answers with a probe. Alice acks it and probes again.
        let asked = probe(from: carol, nick: "carol", port: 7003)
        let answered = membership.receive(asked, from: carolAt, now: .start + .microseconds(300))
        #expect(answered.first.map { if case .send(.ack, carolAt) = $0 { true } else { false } } == true)
        let again = try #require(probesSent(answered, to: carolAt).first)
        #expect(again.sequence != toCarol.probe.sequence)
        #expect(membership.peers[carol]?.addressProven == false)

        // Carol acks that one (alice's ack proved alice to her): her address is proven here.
        let proven = membership.receive(ack(again, from: carol, nick: "carol"), from: carolAt, now: .start + .microseconds(500))
        #expect(proven.contains(.peerProven(id: carol)))
        #expect(membership.peers[carol]?.addressProven == true)

        // A third probe from her is acked and asks nothing more: her address is proven.
        let third = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start + .microseconds(700))
        #expect(probesSent(third, to: carolAt).isEmpty)
    }

    /// A newcomer probes us first: we ask its address to prove itself (a probe), and once its ack
    /// comes from there it is probed again at once, with the gossip a proven address gets, so it
    /// learns who else is here within a round trip rather than at our next period.
    @Test func aNewcomerThatProvesItselfIsToldWhoElseIsHereAtOnce() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start)
        membership.proveForTest(carol)
        _ = membership.tick(now: .start + .milliseconds(1))

        let asked = try #require(probesSent(membership.receive(probe(from: bob), from: bobAt, now: .start + .milliseconds(2)), to: bobAt).first)
        #expect(asked.peers == [])  // nothing for an address that has not answered
        _ = membership.receive(ack(asked, from: bob), from: bobAt, now: .start + .milliseconds(3))
        let told = membership.tick(now: .start + .milliseconds(3)).probes.filter { $0.to == bobAt }
        #expect(told.count == 1)
        #expect(told.first?.probe.peers.map(\.id).contains(carol) == true)
    }

    /// Behind a NAT that gave bob another port (Linux keeps the source port only when it is
    /// free), his probes come from the router's mapping: the answer goes back there, and so does
    /// everything else, while pulls go to the port he announces (a forwarded one, if any). A first
    /// probe from an address is answered with a probe (it proves the address); once answered
    /// from there, his probes get acks.
    @Test func aProbeIsAnsweredWhereItCameFromNotAtItsAnnouncedPort() throws {
        var membership = aliceNode()
        let mapped = PeerAddress(host: "198.51.100.1", port: 41_234)
        let directives = membership.receive(probe(from: bob, port: 7002), from: mapped, now: .start)
        let asked = try #require(probesSent(directives, to: mapped).first)
        #expect(!directives.contains { if case .send(.ack, _) = $0 { true } else { false } })
        #expect(membership.peers[bob]?.address == mapped)
        #expect(membership.peers[bob]?.syncAddress == PeerAddress(host: "198.51.100.1", port: 7002))
        _ = membership.receive(ack(asked, from: bob), from: mapped, now: .start + .milliseconds(1))
        #expect(membership.peers[bob]?.addressProven == true)
        let next = membership.receive(probe(from: bob, port: 7002), from: mapped, now: .start + .milliseconds(2))
        #expect(next.first.map { if case .send(.ack, let to) = $0 { to == mapped } else { false } } == true)
        // Probed from then on at the mapping too.
        #expect(membership.tick(now: .start + .milliseconds(3)).probes.map(\.to) == [mapped])
    }

    @Test func hearsayNobodyAnswersForIsForgottenWithoutAWord() throws {
        var membership = aliceNode()
        let fake = record(carol, "carol", at: carolAt)
        _ = membership.receive(probe(from: bob, peers: [fake]), from: bobAt, now: .start)
        var said: [MembershipDirective] = []
        var probed = 0
        var passedOn = 0
        var at = MonotonicTime.start
        while at <= .start + 6 * second {
            let directives = membership.tick(now: at)
            said += directives.filter { if case .peerChanged(let id, _, _, _) = $0 { id == carol } else { false } }
            probed += directives.probes.filter { $0.to == carolAt }.count
            passedOn += directives.probes.filter { $0.to == bobAt && $0.probe.peers.contains { $0.id == carol } }.count
            at = directives.wake!
        }
        #expect(said.isEmpty)
        #expect(probed == 5)  // once a period for its 5 s
        #expect(passedOn == 0)
        #expect(membership.hearsayCount == 0)
        #expect(membership.peers[carol] == nil)
    }

    // MARK: Periods, suspicion, refutation

    /// Runs `membership` from `now` to `end`, ticking at every wake-up it asks for; returns every
    /// directive with its time.
    func run(_ membership: inout Membership, from now: MonotonicTime, to end: MonotonicTime) -> [(at: MonotonicTime, directive: MembershipDirective)] {
        var log: [(MonotonicTime, MembershipDirective)] = []
        var at = now
        while at <= end {
            let directives = membership.tick(now: at)
            log += directives.map { (at, $0) }
            at = directives.wake!
        }
        return log
    }

    func changes(_ log: [(at: MonotonicTime, directive: MembershipDirective)], of id: NodeID) -> [(MonotonicTime, PeerState?, PeerState)] {
        log.compactMap { entry in
            guard case .peerChanged(id, _, let from, let to) = entry.directive else { return nil }
            return (entry.at, from, to)
        }
    }

    func probeTimes(_ log: [(at: MonotonicTime, directive: MembershipDirective)], to address: PeerAddress) -> [MonotonicTime] {
        log.compactMap { entry in
            guard case .send(.probe(let probe), address) = entry.directive else { return nil }
            return probe.sentAt
        }
    }

    @Test func anUnansweredPeriodMakesAPeerSuspectThenGoneUntilItRefutes() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        let log = run(&membership, from: .start, to: .start + 20 * second)

        let seen = changes(log, of: bob)
        #expect(seen.map(\.0) == [.start + second, .start + 5 * second])  // suspect after one period, gone 4 s later
        #expect(seen.map(\.1) == [.alive, .suspect])
        #expect(seen.map(\.2) == [.suspect, .gone])
        // Four probes a period while he is alive or suspect (he is the only peer), then every 5 s.
        let quarters = (0..<20).map { MonotonicTime.start + Int64($0) * .milliseconds(250) }
        #expect(probeTimes(log, to: bobAt) == quarters + [10, 15, 20].map { MonotonicTime.start + $0 * second })
        #expect(membership.peers[bob]?.state == .gone)
        #expect(membership.alivePeers(inRoom: "superbowl") == [])

        // Bob probes again at his old incarnation: he is told he is gone, and stays so.
        let told = membership.receive(probe(from: bob, sequence: 9_078), from: bobAt, now: .start + 21 * second)
        guard case .send(.ack(let answer), bobAt) = try #require(told.first) else {
            Issue.record("no ack first: \(told)")
            return
        }
        #expect(answer.peers == [record(bob, "bob", at: bobAt, .gone)])
        #expect(membership.peers[bob]?.state == .gone)
        // His refutation, at a higher incarnation, makes him alive at once.
        let back = membership.receive(probe(from: bob, sequence: 9_079, incarnation: 2), from: bobAt, now: .start + 21 * second + .microseconds(5))
        #expect(back.contains(.peerChanged(id: bob, nick: "bob", from: .gone, to: .alive)))
        #expect(membership.alivePeers(inRoom: "superbowl").map(\.id) == [bob])
    }

    @Test func anAnswerToAnyProbeOfThePeriodEndsItsRetries() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        let first = try #require(membership.tick(now: .start).probes.first?.probe)
        _ = membership.tick(now: .start + .milliseconds(250))  // the second probe; the first is answered late
        _ = membership.receive(ack(first, from: bob), from: bobAt, now: .start + .milliseconds(300))
        let log = run(&membership, from: .start + .milliseconds(500), to: .start + second)
        #expect(probeTimes(log, to: bobAt) == [.start + second])  // only the next period's
        #expect(changes(log, of: bob).isEmpty)
    }

    @Test func anyMessageFromThePeriodsPeerAnswersIt() {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        _ = membership.tick(now: .start)
        #expect(membership.heard(from: bob, now: .start + .microseconds(100)) == [])
        #expect(changes(run(&membership, from: .start + .milliseconds(250), to: .start + second), of: bob).isEmpty)
    }

    @Test func periodsGoRoundTheRingOnePeerEach() {
        var membership = aliceNode()
        for (id, port) in [(dave, 7004), (bob, 7002), (carol, 7003)] as [(NodeID, UInt16)] {
            _ = membership.receive(
                probe(from: id, nick: "n", port: port), from: PeerAddress(host: "192.0.2.1", port: port), now: .start)
        }
        membership.proveAllForTest()
        membership.outstanding = [:]  // the probes that answered theirs
        var targets: [UInt16] = []
        for period in 0..<5 {
            let now = MonotonicTime.start + Int64(period) * second
            _ = membership.tick(now: now)  // directives of the period's start
            let sent = membership.tick(now: now).probes  // nothing new within the same instant
            #expect(sent.isEmpty)
            // Answer every probe so nobody turns suspect.
            for outstanding in membership.outstanding.values {
                guard case .peer(let id) = outstanding.target else { continue }
                targets.append(outstanding.address.port)
                _ = membership.heard(from: id, now: now + .microseconds(1))
            }
            membership.outstanding = [:]
        }
        #expect(targets == [7002, 7003, 7004, 7002, 7003])
    }

    @Test func heardFromASuspectGetsItProbedWithTheClaimSoItCanRefute() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        _ = run(&membership, from: .start, to: .start + second)
        #expect(membership.peers[bob]?.state == .suspect)

        #expect(membership.heard(from: bob, now: .start + .milliseconds(1_100)) == [.scheduleTick(at: .start + .milliseconds(1_100))])
        #expect(membership.peers[bob]?.lastSeen == .start + .milliseconds(1_100))
        #expect(membership.heard(from: carol, now: .start + .microseconds(1_100_001)) == [])  // unknown: ignored
        #expect(membership.heard(from: alice, now: .start + .microseconds(1_100_002)) == [])
        let tick = membership.tick(now: .start + .milliseconds(1_100))
        let sent = try #require(tick.probes.first { $0.to == bobAt }?.probe)
        #expect(sent.peers.contains(record(bob, "bob", at: bobAt, .suspect)))
        // His ack comes back at a higher incarnation: alive.
        let refuted = membership.receive(ack(sent, from: bob, incarnation: 2), from: bobAt, now: .start + .microseconds(1_100_500))
        #expect(refuted.contains(.peerChanged(id: bob, nick: "bob", from: .suspect, to: .alive)))
        #expect(membership.peers[bob]?.incarnation == 2)
    }

    @Test func aLateTickReportsEachChangeOnce() {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        _ = membership.tick(now: .start)
        let late = changes(membership.tick(now: .start + 9 * second).map { (.start + 9 * second, $0) }, of: bob)
        #expect(late.map(\.2) == [.suspect])
        let log = run(&membership, from: .start + 9 * second + .microseconds(1), to: .start + 14 * second)
        #expect(changes(log, of: bob).map(\.0) == [.start + 13 * second])
        #expect(changes(log, of: bob).map(\.2) == [.gone])
    }

    @Test func aClaimOfSuspectOrGoneAboutThisNodeIsRefuted() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        func told(_ state: PeerState, _ incarnation: UInt64) -> Ack {
            let directives = membership.receive(
                probe(from: bob, peers: [record(alice, "alice", at: bobAt, state, incarnation: incarnation)]),
                from: bobAt, now: .start)
            guard case .send(.ack(let ack), _) = directives.first else { fatalError("no ack") }
            return ack
        }
        #expect(told(.suspect, 1).incarnation == 2)  // the ack already carries the refutation
        #expect(told(.suspect, 1).incarnation == 2)  // an old claim: nothing to refute
        #expect(told(.gone, 5).incarnation == 6)
        #expect(told(.alive, 9).incarnation == 9)  // caught up with, nothing to refute
        #expect(told(.alive, 3).incarnation == 9)
        #expect(membership.incarnation == 9)
    }

    @Test func claimsFollowOneOrderOnEveryNode() throws {
        // SWIM's order: a higher incarnation wins; at the same one, alive < suspect < gone.
        let at1 = Peer(
            id: bob, nick: "bob", address: bobAt, rooms: [], state: .suspect, incarnation: 1, lastSeen: .start, rtt: nil,
            foundBy: .mdns)
        #expect(!Membership.claim(.alive, at: 1, beats: at1))
        #expect(!Membership.claim(.suspect, at: 1, beats: at1))
        #expect(Membership.claim(.gone, at: 1, beats: at1))
        #expect(Membership.claim(.alive, at: 2, beats: at1))
        #expect(!Membership.claim(.gone, at: 0, beats: at1))

        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        func carolSays(_ state: PeerState, _ incarnation: UInt64, at address: PeerAddress? = nil) -> [MembershipDirective] {
            let rumour = probe(
                from: carol, nick: "carol", port: 7003,
                peers: [record(bob, "bob", at: address ?? bobAt, state, incarnation: incarnation)])
            return membership.receive(rumour, from: carolAt, now: .start + .microseconds(100)).filter {
                if case .peerChanged(bob, _, _, _) = $0 { true } else { false }
            }
        }
        #expect(carolSays(.suspect, 1) == [.peerChanged(id: bob, nick: "bob", from: .alive, to: .suspect)])
        #expect(carolSays(.alive, 1) == [])
        #expect(carolSays(.gone, 1) == [.peerChanged(id: bob, nick: "bob", from: .suspect, to: .gone)])
        // A higher incarnation elsewhere is hearsay past anything bob signed: maybe he restarted
        // there, maybe carol lies. Nothing changes; bob is asked, at both addresses.
        let elsewhere = PeerAddress(host: "192.0.2.50", port: 7002)
        #expect(carolSays(.alive, 2, at: elsewhere) == [])
        #expect(membership.peers[bob]?.state == .gone)
        #expect(membership.peers[bob]?.address == bobAt)
        let asked = membership.outstanding.filter { $0.value.target == .peer(bob) }
        #expect(Set(asked.values.map(\.address)).isSuperset(of: [bobAt, elsewhere]))
        // His own signed answer from there decides: alive at 2 at once; he moves once his old
        // address has stayed silent for a probe timeout (Membership+Trust).
        let (sequence, sent) = try #require(asked.first { $0.value.address == elsewhere })
        let answer = Ack(
            from: bob, nick: "bob", incarnation: 2, sequence: sequence, echoedSentAt: sent.sentAt, rooms: ["superbowl"], peers: [])
        let moved = membership.receive(answer, from: elsewhere, now: .start + .microseconds(300))
        #expect(moved.contains(.peerChanged(id: bob, nick: "bob", from: .gone, to: .alive)))
        #expect(membership.peers[bob]?.address == bobAt)
        _ = membership.tick(now: .start + .microseconds(300) + .milliseconds(250))
        #expect(membership.peers[bob]?.address == elsewhere)
        #expect(membership.peers[bob]?.vouched == 2)
        // An older or equal incarnation does not move him back.
        #expect(carolSays(.alive, 1) == [])
        #expect(carolSays(.alive, 2) == [])
        #expect(membership.peers[bob]?.address == elsewhere)
    }

    @Test func gossipCannotWedgeAPeerAsGoneAtAnIncarnationItNeverUsed() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob, incarnation: 7), from: bobAt, now: .start)
        let forged = probe(
            from: carol, nick: "carol", port: 7003, peers: [record(bob, "bob", at: bobAt, .gone, incarnation: .max)])
        _ = membership.receive(forged, from: carolAt, now: .start + .microseconds(10))
        #expect(membership.peers[bob]?.state == .alive)
        #expect(membership.peers[bob]?.incarnation == 7)
        // Gossip at an incarnation bob did sign still counts (SWIM; he refutes it himself).
        let honest = probe(
            from: carol, nick: "carol", port: 7003, peers: [record(bob, "bob", at: bobAt, .suspect, incarnation: 7)])
        _ = membership.receive(honest, from: carolAt, now: .start + .microseconds(20))
        #expect(membership.peers[bob]?.state == .suspect)
    }

    @Test func aReplayedProbeMovesNobody() {
        var membership = aliceNode()
        let original = probe(from: bob, sequence: 500)
        _ = membership.receive(original, from: bobAt, now: .start)
        _ = membership.receive(probe(from: bob, sequence: 501), from: bobAt, now: .start + .microseconds(10))
        let attacker = PeerAddress(host: "192.0.2.66", port: 7002)
        #expect(membership.receive(original, from: attacker, now: .start + .microseconds(20)) == [])
        #expect(membership.peers[bob]?.address == bobAt)
        // A probe from an earlier incarnation is no news either.
        #expect(membership.receive(probe(from: bob, incarnation: 0), from: attacker, now: .start + .microseconds(30)) == [])
        #expect(membership.peers[bob]?.address == bobAt)
    }

    @Test func probesFromAFloodOfFreshKeysKeepNoStateBeyondThePeerTable() {
        var membership = aliceNode(config: MembershipConfig(maxPeers: 4))
        for n in 0..<200 {
            let id = NodeID(bytes: [0xEE, UInt8(n / 256), UInt8(n % 256)] + [UInt8](repeating: 0, count: NodeID.byteCount - 3))!
            _ = membership.receive(probe(from: id), from: bobAt, now: .start + .microseconds(n))
        }
        #expect(membership.peers.count <= 4)
        #expect(membership.peers.entries.values.filter { $0.lastProbe != nil }.count <= 4)
    }

    @Test func aClaimAboutThisNodeFarPastItsIncarnationIsNotRefuted() {
        var membership = aliceNode()
        let forged = probe(from: bob, peers: [record(alice, "alice", at: bobAt, .gone, incarnation: .max - 1)])
        _ = membership.receive(forged, from: bobAt, now: .start)
        #expect(membership.incarnation == 1)
        let plausible = probe(from: bob, peers: [record(alice, "alice", at: bobAt, .suspect, incarnation: 1_000)])
        _ = membership.receive(plausible, from: bobAt, now: .start + .microseconds(10))
        #expect(membership.incarnation == 1_001)
    }

    // MARK: Probes

    @Test func probeIsAnsweredWhereItCameFromEchoingSequenceAndSendTime() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start)
        membership.proveForTest(carol)

        // Bob's first probe, from another port than the one he announces: a newcomer's address,
        // asked with a probe of ours, which he answers from there.
        let source = PeerAddress(host: "192.0.2.12", port: 50_123)
        let first = membership.receive(probe(from: bob, sequence: 40, port: 7002), from: source, now: .start + .milliseconds(1))
        #expect(first.first == .peerChanged(id: bob, nick: "bob", from: nil, to: .alive))
        let asked = try #require(probesSent(first, to: source).first)
        #expect(asked.peers == [])  // no gossip to an address that has not proven itself
        _ = membership.receive(ack(asked, from: bob), from: source, now: .start + .milliseconds(2))

        // His next probe is acked there, echoing its sequence and send time, with gossip.
        let directives = membership.receive(
            probe(from: bob, sequence: 41, sentAt: MonotonicTime(microseconds: -77), port: 7002), from: source,
            now: .start + .milliseconds(3))
        #expect(directives.first == .send(
            .ack(Ack(
                from: alice, nick: "alice", incarnation: 1, sequence: 41, echoedSentAt: MonotonicTime(microseconds: -77), rooms: ["superbowl"],
                peers: [record(carol, "carol", at: carolAt)])),
            to: source))
        var expected = Peer(
            id: bob, nick: "bob", address: source, rooms: ["superbowl"], state: .alive, incarnation: 1,
            lastSeen: .start + .milliseconds(3), rtt: .milliseconds(1), foundBy: .inbound, vouched: 1, announcedPort: 7002)
        expected.addressProven = true
        #expect(membership.peers[bob] == expected)
        #expect(membership.peers[bob]?.syncAddress == bobAt)
    }

    @Test func probeFromSelfIsIgnored() {
        var membership = aliceNode()
        #expect(membership.receive(probe(from: alice), from: bobAt, now: .start) == [])
        #expect(membership.receive(ack(probe(from: alice), from: alice), from: bobAt, now: .start) == [])
        #expect(membership.peers.isEmpty)
    }

    /// The probes in `directives`, by address.
    func probesSent(_ directives: [MembershipDirective], to address: PeerAddress) -> [Probe] {
        directives.compactMap { if case .send(.probe(let probe), address) = $0 { probe } else { nil } }
    }

    /// bob's signed probe arrives from another address: his NAT's new mapping, or a stranger that
    /// passed on a probe bob sent it (round 3: that cut two nodes off from each other for good).
    /// Alice answers it where it came from and asks both addresses; bob's answer from his known
    /// address keeps him there, and only the known address's silence lets him move.
    @Test func aKnownPeersProbeFromANewAddressMovesItOnlyOnceItsKnownAddressIsSilent() throws {
        for knownAnswers in [true, false] {
            var membership = aliceNode()
            _ = membership.receive(probe(from: bob, nick: "bob"), from: bobAt, now: .start)
            membership.proveForTest(bob)
            let moved = PeerAddress(host: "192.0.2.99", port: 7010)
            let directives = membership.receive(
                probe(from: bob, nick: "bobby", sequence: 7_777, port: 7010, rooms: ["replays"]), from: moved,
                now: .start + .microseconds(10))
            // No ack there: the check's probe answers bob's period, and is what his probe pays for.
            #expect(!directives.contains { if case .send(.ack, _) = $0 { true } else { false } })
            #expect(!directives.contains { if case .peerChanged = $0 { true } else { false } })
            #expect(membership.peers[bob]?.nick == "bobby")
            #expect(membership.peers[bob]?.rooms == ["replays"])
            // Not moved yet: both addresses are asked.
            #expect(membership.peers[bob]?.address == bobAt)
            let atKnown = try #require(probesSent(directives, to: bobAt).first)
            let atNew = try #require(probesSent(directives, to: moved).first)
            // The probes' sequences carry a nonce: nobody guesses the next.
            #expect(atKnown.sequence >> 32 + 1 == atNew.sequence >> 32)
            #expect(atKnown.sequence & 0xFFFF_FFFF != atNew.sequence & 0xFFFF_FFFF)

            _ = membership.receive(ack(atNew, from: bob), from: moved, now: .start + .milliseconds(1))
            if knownAnswers {
                _ = membership.receive(ack(atKnown, from: bob), from: bobAt, now: .start + .milliseconds(2))
            }
            #expect(membership.peers[bob]?.address == bobAt)  // before the probe timeout: nobody moves
            let settled = membership.tick(now: .start + .milliseconds(260))
            if knownAnswers {
                #expect(membership.peers[bob]?.address == bobAt)
                #expect(!settled.contains { if case .peerMoved = $0 { true } else { false } })
            } else {
                #expect(membership.peers[bob]?.address == moved)
                #expect(membership.peers[bob]?.addressProven == true)
                #expect(settled.contains(.peerMoved(id: bob, to: moved)))
            }
        }
    }

    /// An ack that echoes a probe sent to the new address but comes from elsewhere (a third node
    /// that got the probe and passed it on) proves nothing about that address.
    @Test func anAnswerFromElsewhereThanTheProbedAddressProvesNothing() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        let toBob = try #require(membership.tick(now: .start).probes.first { $0.to == bobAt }?.probe)
        let elsewhere = PeerAddress(host: "198.51.100.7", port: 9)
        _ = membership.receive(ack(toBob, from: bob), from: elsewhere, now: .start + .milliseconds(1))
        #expect(membership.peers[bob]?.addressProven == false)
        #expect(!membership.hasVouched(bob))
        _ = membership.receive(ack(toBob, from: bob), from: bobAt, now: .start + .milliseconds(2))
        // The first ack took the probe: a copy proves nothing either. The next one from there does.
        #expect(membership.peers[bob]?.addressProven == false)
        let next = try #require(membership.tick(now: .start + second).probes.first { $0.to == bobAt }?.probe)
        _ = membership.receive(ack(next, from: bob), from: bobAt, now: .start + second + .milliseconds(1))
        #expect(membership.peers[bob]?.addressProven == true)
        #expect(membership.hasVouched(bob))
    }

    /// A router that reboots forgets its NAT mappings: bob's next datagram leaves from a new port,
    /// and what alice sends to the old one dies there. An unsigned digest from the new port moves
    /// nobody, but gets both ports probed at once; bob moves once the old one stays silent for a
    /// probe timeout while he answers from the new one.
    @Test func anUnsignedMessageFromANewAddressGetsThatAddressProbedAndOnlyAnAnswerMovesThePeer() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        let remapped = PeerAddress(host: "192.0.2.1", port: 41_234)

        _ = membership.tick(now: .start + .milliseconds(50))
        let hinted = membership.heard(from: bob, at: remapped, now: .start + .milliseconds(100))
        #expect(membership.peers[bob]?.address == bobAt)
        let checks = probesSent(hinted, to: remapped)
        #expect(checks.count == 1)
        #expect(probesSent(hinted, to: bobAt).count == 1)
        // Another hint within the probe timeout sends no second check.
        #expect(membership.heard(from: bob, at: remapped, now: .start + .milliseconds(150)) == [])
        #expect(!membership.tick(now: .start + .milliseconds(150)).contains { if case .send(.probe, remapped) = $0 { true } else { false } })
        // An unknown node's hint is nobody's.
        #expect(membership.heard(from: carol, at: remapped, now: .start + .milliseconds(160)) == [])

        let check = try #require(checks.first)
        _ = membership.receive(ack(check, from: bob), from: remapped, now: .start + .milliseconds(170))
        #expect(membership.peers[bob]?.address == bobAt)
        let settled = membership.tick(now: .start + .milliseconds(350))
        #expect(settled.contains(.peerMoved(id: bob, to: remapped)))
        #expect(membership.peers[bob]?.address == remapped)
        #expect(membership.peers[bob]?.state == .alive)
    }

    @Test func gossipedGoneAndSuspectPeersAreNotAdded() {
        var membership = aliceNode()
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)
        let rumour = probe(from: bob, peers: [record(carol, "carol", at: carolAt, .gone), record(dave, "dave", at: daveAt, .suspect)])
        _ = membership.receive(rumour, from: bobAt, now: .start)
        #expect(membership.peers.keys.sorted() == [bob])
    }

    @Test func gossipLeadsWithTheRecipientsOwnClaimThenFreshNews() throws {
        var membership = aliceNode(config: MembershipConfig(maxGossipPeers: 2))
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start)
        _ = membership.receive(probe(from: dave, nick: "dave", port: 7004), from: daveAt, now: .start)
        membership.proveAllForTest()
        // Twenty seconds on, dave says bob is gone; carol is suspect by her own period.
        let later = MonotonicTime.start + 20 * second
        _ = membership.receive(
            probe(from: dave, nick: "dave", port: 7004, peers: [record(bob, "bob", at: bobAt, .gone)]), from: daveAt,
            now: later)
        membership.peers[carol]?.state = .suspect

        // To carol: her own record first (so she can refute), then the fresh news about bob.
        let toCarol = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: later)
        guard case .send(.ack(let ack), _) = try #require(toCarol.first) else {
            Issue.record("carol's probe was not answered first with an ack: \(toCarol)")
            return
        }
        #expect(ack.peers == [record(bob, "bob", at: bobAt, .gone), record(carol, "carol", at: carolAt, .suspect)])
        // Once the news is old, gone peers are no longer gossiped.
        let toDave = membership.receive(probe(from: dave, nick: "dave", port: 7004), from: daveAt, now: later + 11 * second)
        guard case .send(.ack(let old), _) = try #require(toDave.first) else {
            Issue.record("dave's probe was not answered first with an ack: \(toDave)")
            return
        }
        #expect(old.peers == [record(carol, "carol", at: carolAt, .suspect)])
    }

    @Test func changingRoomsProbesEveryPeerSoEachLearnsThem() {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start)
        _ = membership.tick(now: .start)
        membership.rooms = ["superbowl"]  // unchanged: nothing to tell
        #expect(membership.tick(now: .start + .microseconds(100)).probes.isEmpty)
        membership.rooms = ["superbowl", "replays"]
        let sent = membership.tick(now: .start + .microseconds(200)).probes
        #expect(Set(sent.map(\.to)) == [bobAt, carolAt])
        #expect(sent.allSatisfy { $0.probe.rooms == ["superbowl", "replays"] })
    }

    @Test func roomsAreBoundedAndQueried() {
        var membership = aliceNode()
        membership.rooms = (0..<40).map { "room\($0)" } + ["room1", String(repeating: "x", count: 65)]
        #expect(membership.rooms == (0..<32).map { "room\($0)" })

        let many = (0..<40).map { "r\($0)" }
        _ = membership.receive(probe(from: bob, rooms: many), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003, rooms: ["r1"]), from: carolAt, now: .start)
        #expect(membership.peers[bob]?.rooms == Array(many.prefix(WireLimits.maxRoomsPerNode)))
        // Live in a room only once their addresses answered (Membership+Trust).
        #expect(membership.alivePeers(inRoom: "r1").map(\.id) == [])
        membership.proveAllForTest()
        #expect(membership.alivePeers(inRoom: "r1").map(\.id) == [bob, carol])
        #expect(membership.alivePeers(inRoom: "r35").map(\.id) == [])
        #expect(membership.alivePeers(inRoom: "superbowl").map(\.id) == [])
    }

    @Test func discoveredPeersAreProbed() {
        var membership = aliceNode()
        _ = membership.tick(now: .start)
        let found = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: ["superbowl"], now: .start + .microseconds(100))
        #expect(found == [.peerChanged(id: bob, nick: "bob", from: nil, to: .alive), .scheduleTick(at: .start + .microseconds(100))])
        #expect(membership.peers[bob]?.foundBy == .mdns)
        #expect(membership.tick(now: .start + .microseconds(100)).probes.map(\.to) == [bobAt])
        #expect(membership.addDiscovered(id: alice, nick: "me", address: bobAt, rooms: [], now: .start + .microseconds(100)) == [])
        // Announced again somewhere else: probed there at once; its state is untouched.
        let moved = PeerAddress(host: "192.0.2.77", port: 7002)
        #expect(membership.addDiscovered(id: bob, nick: "bob", address: moved, rooms: [], now: .start + .microseconds(200)) == [
            .scheduleTick(at: .start + .microseconds(200))
        ])
        #expect(membership.tick(now: .start + .microseconds(200)).probes.map(\.to) == [moved])
        // Gone, then announced again at the same address: probed at once, still gone until it answers.
        _ = run(&membership, from: .start + .microseconds(300), to: .start + 9 * second)
        #expect(membership.peers[bob]?.state == .gone)
        let again = membership.addDiscovered(id: bob, nick: "bob", address: moved, rooms: [], now: .start + 9 * second + .microseconds(10))
        #expect(again == [.scheduleTick(at: .start + 9 * second + .microseconds(10))])
        #expect(membership.tick(now: .start + 9 * second + .microseconds(10)).probes.map(\.to) == [moved])
        #expect(membership.peers[bob]?.state == .gone)
    }

    @Test func aPeerHeardOfIndirectlyCountsAsFoundOverMDNSOnceItAnnouncesItself() {
        var membership = aliceNode()
        let record = PeerRecord(id: carol, nick: "carol", host: "192.0.2.13", port: 7003, state: .alive, incarnation: 1)
        _ = membership.receive(probe(from: bob, peers: [record]), from: bobAt, now: .start)
        #expect(membership.peers[bob]?.foundBy == .inbound)
        #expect(membership.peers[carol] == nil)  // hearsay until it answers or is announced
        _ = membership.addDiscovered(id: carol, nick: "carol", address: carolAt, rooms: [], now: .start + .microseconds(10))
        _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: [], now: .start + .microseconds(20))
        #expect(membership.peers[carol]?.foundBy == .mdns)
        #expect(membership.peers[bob]?.foundBy == .mdns)
        // A seed stays a seed: the user named it.
        let dave = NodeID.fixture(4)
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)
        membership.addSeed(daveAt)
        let probes = membership.tick(now: .start + .microseconds(30)).probes
        let sequence = probes.first { $0.to == daveAt }!.probe.sequence
        _ = membership.receive(
            Ack(from: dave, nick: "dave", incarnation: 1, sequence: sequence, echoedSentAt: .start + .microseconds(30), rooms: [], peers: []),
            from: daveAt, now: .start + .microseconds(40))
        #expect(membership.peers[dave]?.foundBy == .seed)
        _ = membership.addDiscovered(id: dave, nick: "dave", address: daveAt, rooms: [], now: .start + .microseconds(50))
        #expect(membership.peers[dave]?.foundBy == .seed)
    }

    // MARK: Wake-ups

    @Test func scheduleTickIsTheNextDueProbeOrStateChange() {
        let config = MembershipConfig(
            probeInterval: 1 * second, probeAttempts: 2, suspicionTimeout: .milliseconds(1_500), indirectProbes: 0,
            silenceBeforeSuspicion: .zero, maxHealth: 0, goneProbeInterval: 3 * second)
        var membership = aliceNode(config: config)
        #expect(membership.tick(now: .start) == [.scheduleTick(at: .start + second)])  // idle: once a period

        // Bob probes us: answered with a probe of ours, which asks his address to prove itself
        // (Membership+Trust); nothing else is due before the next period.
        #expect(membership.receive(probe(from: bob), from: bobAt, now: .start + .milliseconds(200)).count == 2)  // alive, probe
        membership.proveForTest(bob)
        membership.outstanding = [:]
        var wakes: [MonotonicTime] = []
        var at = MonotonicTime.start + second
        var log: [(MonotonicTime, MembershipDirective)] = []
        while at <= .start + 7 * second {
            let directives = membership.tick(now: at)
            log += directives.map { (at, $0) }
            wakes.append(at)
            at = directives.wake!
        }
        // Probes at the period's start and half-way; suspect when it ends; gone 1.5 s later;
        // then idle periods, and the gone peer probed every 3 s.
        let ms = { (ms: Int64) in MonotonicTime.start + .milliseconds(ms) }
        #expect(wakes == [1_000, 1_500, 2_000, 2_500, 3_000, 3_500, 4_000, 5_000, 6_000, 6_500].map(ms))
        #expect(changes(log, of: bob).map(\.0) == [2_000, 3_500].map(ms))
        #expect(probeTimes(log, to: bobAt) == [1_000, 1_500, 2_000, 2_500, 3_000, 6_500].map(ms))

        // A gone peer heard from is due a probe at once: an earlier wake-up.
        #expect(membership.heard(from: bob, now: .start + .milliseconds(6_600)) == [.scheduleTick(at: .start + .milliseconds(6_600))])
        // Nothing earlier than that: no new one.
        let gossip = probe(from: carol, nick: "carol", port: 7003, peers: [record(dave, "dave", at: carolAt)])
        #expect(!membership.receive(gossip, from: carolAt, now: .start + .milliseconds(6_700)).contains { if case .scheduleTick = $0 { true } else { false } })
    }

    @Test func tickEndsWithExactlyOneWakeUp() {
        var membership = aliceNode()
        membership.addSeed(carolAt)
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        membership.outstanding = [:]
        let directives = membership.tick(now: .start)
        #expect(directives.filter { if case .scheduleTick = $0 { true } else { false } }.count == 1)
        #expect(directives.last == .scheduleTick(at: .start + .milliseconds(250)))  // the period's next probe
        #expect(directives.probes.map(\.to) == [bobAt, carolAt])  // the period's peer, then seeds
    }

    @Test func unansweredProbesAreForgotten() throws {
        var membership = aliceNode()
        membership.addSeed(bobAt)
        let old = try #require(membership.tick(now: .start).probes.first?.probe)
        _ = membership.tick(now: .start + 8 * second)
        _ = membership.receive(ack(old, from: bob), from: bobAt, now: .start + 8 * second + .microseconds(1))
        #expect(membership.peers[bob]?.rtt == nil)  // too late to count
        #expect(membership.seeds == [bobAt])
    }

    // MARK: Bounds

    /// A node id distinct from every `NodeID.fixture`: 0xEE, then `n` big-endian.
    static func node(_ n: Int) -> NodeID {
        NodeID(bytes: [0xEE, UInt8(n >> 8), UInt8(n & 0xFF)] + [UInt8](repeating: 0, count: NodeID.byteCount - 3))!
    }

    /// Peer records with the longest nicks and hosts the wire allows.
    static func bulkyRecords(_ range: Range<Int>) -> [PeerRecord] {
        range.map { n in
            let host = String(repeating: "h", count: WireLimits.maxHostBytes - 7) + ".\(100_000 + n)"
            return PeerRecord(
                id: node(n), nick: String(repeating: "n", count: WireLimits.maxNickBytes), host: host, port: 7000,
                state: .alive, incarnation: 1)
        }
    }

    @Test(arguments: [32, 256])
    func peerTableIsCappedAndMessagesFitADatagram(maxGossipPeers: Int) throws {
        // No fresh changes gossiped first (all 256 are new), so the lists show the rotation.
        var membership = aliceNode(config: MembershipConfig(freshGossipFor: .zero, maxGossipPeers: maxGossipPeers))
        /// Checks that every message in `directives` fits a datagram and decodes to itself.
        func checkSizes(_ directives: [MembershipDirective]) throws {
            for case .send(let message, _) in directives {
                #expect(message.encodedByteCount <= WireLimits.maxDatagramBytes)
                try message.validate()
            }
        }
        // 1 000 nodes with the longest nicks and hosts the wire allows each probe alice.
        for record in Self.bulkyRecords(0..<1000) {
            let own = Probe(
                from: record.id, nick: record.nick, incarnation: 1, sequence: 1, sentAt: .start, port: record.port,
                rooms: [], peers: [])
            try checkSizes(membership.receive(own, from: PeerAddress(host: record.host, port: record.port), now: .start))
        }
        #expect(membership.peers.count == 256)
        membership.proveAllForTest()

        // 250 more named by gossip: hearsay, at most 32 waiting, none taking a peer's place.
        let gossip = Probe(
            from: Self.node(0), nick: "g", incarnation: 1, sequence: 2, sentAt: .start, port: 7000, rooms: [],
            peers: Self.bulkyRecords(1000..<1250))
        try checkSizes(membership.receive(gossip, from: PeerAddress(host: "192.0.2.1", port: 7000), now: .start))
        #expect(membership.peers.count == 256)
        #expect(membership.hearsayCount == 32)

        // Each waiting node is probed at once, beside the period's peer and the eight peers kept
        // alive (none was found over mDNS: Membership+KeepAlive), never all 256.
        let tick = membership.tick(now: .start)
        #expect(tick.probes.count == 33 + membership.config.keepAlivePeers)
        var gossiped: Set<NodeID> = []
        for sent in tick.probes {
            let bytes = WireMessage.probe(sent.probe).encoded()
            #expect(bytes.count <= WireLimits.maxDatagramBytes)
            #expect(try WireMessage(decoding: bytes) == .probe(sent.probe))
            #expect(sent.probe.peers.count <= maxGossipPeers)
            // Gossip goes to peers; a node only gossip named hears nothing from us but the probe.
            if membership.isTrusted(sent.to) {
                #expect(sent.probe.peers.count >= min(maxGossipPeers, 150))
            } else {
                #expect(sent.probe.peers.isEmpty)
            }
            #expect(!sent.probe.peers.contains { $0.host == sent.to.host && $0.port == sent.to.port })
            gossiped.formUnion(sent.probe.peers.map(\.id))
        }
        // The lists rotate: within a few periods every peer is told about, and no hearsay is passed on.
        var wake = try #require(tick.wake)
        while wake <= .start + 4 * second {
            let directives = membership.tick(now: wake)
            for sent in directives.probes where membership.isTrusted(sent.to) {
                gossiped.formUnion(sent.probe.peers.map(\.id))
            }
            wake = try #require(directives.wake)
        }
        #expect(Set(membership.peers.keys).subtracting(gossiped).isEmpty, "\(Set(membership.peers.keys).subtracting(gossiped).count) never gossiped")
        #expect(gossiped.subtracting(membership.peers.keys).isEmpty)
    }

    /// Keys are free: a hundred that each probe once and fall silent never enter the ring, so a
    /// dead peer is still noticed in a few periods; silent, they are suspected, then gone and forgotten.
    @Test func silentFreshKeysStayOutOfTheRingAndAreForgotten() throws {
        var membership = aliceNode()
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        let sybils = (0..<100).map { NodeID.fixture(UInt8(10 + $0)) }
        for (n, id) in sybils.enumerated() {
            _ = membership.receive(
                probe(from: id, nick: "key\(n)"), from: PeerAddress(host: "192.0.2.99", port: UInt16(20_000 + n)),
                now: .start)
        }
        #expect(membership.peers.count == 101)
        // Bob dies at once: suspect after his first period unanswered, gone 2.5 s later (as alone).
        let log = run(&membership, from: .start, to: .start + 8 * second)
        let bobChanges = changes(log, of: bob)
        #expect(bobChanges.map(\.2) == [.suspect, .gone])
        #expect(try #require(bobChanges.last?.0) <= .start + 5 * second)
        // The keys, silent at their addresses, were suspected, then gone, then forgotten.
        #expect(sybils.allSatisfy { membership.peers[$0] == nil })
        #expect(sybils.allSatisfy { id in changes(log, of: id).map(\.2) == [.suspect, .gone] })
    }

    /// Issue 45: a hundred keys that answer probes at their addresses kept a dead friend "alive"
    /// for 88 s, each taking its turn in the one ring before him. The keys have a ring of their
    /// own, taken in turns with the friends' and a host at a time: bob dies after a minute of the
    /// keys answering everything, and is gone within 15 s, whether DNS-SD announced him (the keys
    /// on 13 hosts) or he reached alice first (the keys on 4 hosts, his in their ring).
    @Test(arguments: [(true, 13), (false, 4)])
    func keysThatAnswerProbesStretchOnlyTheirOwnRing(bobAnnounced: Bool, hosts: Int) throws {
        var membership = aliceNode()
        if bobAnnounced {
            _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: ["superbowl"], now: .start)
        }
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        membership.proveForTest(bob)
        let keys = (0..<100).map { NodeID.fixture(UInt8(10 + $0)) }
        for (n, id) in keys.enumerated() {
            _ = membership.receive(
                probe(from: id, nick: "key\(n)"), from: PeerAddress(host: "192.0.2.\(100 + n % hosts)", port: UInt16(20_000 + n)),
                now: .start)
            membership.proveForTest(id)
        }
        let diesAt = MonotonicTime.start + 60 * second
        var log: [(at: MonotonicTime, directive: MembershipDirective)] = []
        var at = MonotonicTime.start
        while at <= diesAt + 30 * second {
            let directives = membership.tick(now: at)
            log += directives.map { (at, $0) }
            // Every probe is answered at once, but bob's once he is dead.
            for (sequence, outstanding) in membership.outstanding {
                guard case .peer(let id) = outstanding.target, id != bob || at < diesAt else { continue }
                _ = membership.heard(from: id, now: at + .microseconds(300))
                membership.outstanding[sequence] = nil
            }
            at = directives.wake!
        }
        let gone = try #require(changes(log, of: bob).first { $0.2 == .gone }?.0)
        #expect(gone - diesAt <= 15 * second, "bob gone \((gone - diesAt).milliseconds) ms after he died")
        #expect(keys.allSatisfy { membership.peers[$0]?.state == .alive }, "the keys, answering, stay")
    }

    /// A full table of one machine's keys (each answering at its own port) gives way to a node
    /// from another host: the crowded host's peer seen longest ago makes room. Another key from
    /// the crowded host is still refused.
    @Test func aFullTableOfOneHostsKeysMakesRoomForAnotherHost() {
        var membership = aliceNode(config: { var config = MembershipConfig.swim; config.maxPeers = 16; return config }())
        let sybilHost = "192.0.2.99"
        for n in 0..<16 {
            _ = membership.receive(
                probe(from: .fixture(UInt8(10 + n)), nick: "key\(n)"),
                from: PeerAddress(host: sybilHost, port: UInt16(20_000 + n)), now: .start + .milliseconds(Int64(n)))
        }
        membership.proveAllForTest()
        #expect(membership.peers.count == 16)
        let another = membership.receive(
            probe(from: .fixture(200), nick: "key16"), from: PeerAddress(host: sybilHost, port: 20_016), now: .start + second)
        #expect(!another.contains { if case .peerChanged(_, _, nil, .alive) = $0 { true } else { false } })
        #expect(membership.peers[.fixture(200)] == nil)

        let met = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start + second)
        #expect(met.contains(.peerChanged(id: carol, nick: "carol", from: nil, to: .alive)))
        #expect(membership.peers.count == 16)
        #expect(membership.peers[.fixture(10)] == nil)  // the key seen longest ago
    }

    @Test func fullTableMakesRoomByForgettingTheLongestGone() {
        var membership = aliceNode(config: { var config = MembershipConfig.swim; config.maxPeers = 2; return config }())
        _ = membership.receive(probe(from: bob), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, nick: "carol", port: 7003), from: carolAt, now: .start + second)
        membership.proveAllForTest()
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)

        // Full, nobody gone: dave is not taken in (he still gets his ack).
        let refused = membership.receive(probe(from: dave, nick: "dave", port: 7004), from: daveAt, now: .start + 2 * second)
        #expect(refused.count == 1)
        #expect(membership.peers[dave] == nil)

        _ = run(&membership, from: .start + 2 * second, to: .start + 12 * second)  // both gone
        #expect(membership.peers.values.allSatisfy { $0.state == .gone })
        let taken = membership.receive(probe(from: dave, nick: "dave", port: 7004), from: daveAt, now: .start + 13 * second)
        #expect(taken.contains(.peerChanged(id: dave, nick: "dave", from: nil, to: .alive)))
        #expect(membership.peers.keys.sorted() == [carol, dave])
    }
}

extension [MembershipDirective] {
    /// The probes among the directives, with their destinations, in order.
    var probes: [(probe: Probe, to: PeerAddress)] {
        compactMap { directive in
            guard case .send(.probe(let probe), let address) = directive else { return nil }
            return (probe, address)
        }
    }

    /// The time of the last `.scheduleTick`, if any.
    var wake: MonotonicTime? {
        last { if case .scheduleTick = $0 { true } else { false } }.flatMap {
            if case .scheduleTick(let at) = $0 { at } else { nil }
        }
    }
}
