import Testing

@testable import HuddleCore

private let second = TimeSpan.seconds(1)

/// Lifeguard in the membership machine: a node that is slow itself stretches its own timing,
/// helpers reach a peer the direct path cannot, suspicion waits for silence and shrinks with
/// confirmations, one rumour does not outweigh contact, and a dead node is still gone in time.
@Suite(.offThePool) struct MembershipHealthTests {
    /// A handful of memberships on an in-memory network: each datagram takes `latency` unless a
    /// link drops it; nodes can be frozen (nothing read, no wake-ups, datagrams wait) or dead.
    struct Network {
        var nodes: [Membership]
        var addresses: [PeerAddress]
        var wakeAt: [MonotonicTime?]
        var inFlight: [(at: MonotonicTime, order: Int, from: Int, to: Int, message: WireMessage)] = []
        var now = MonotonicTime.start
        var order = 0
        var latency = TimeSpan.milliseconds(1)
        /// Links that drop everything, both ways.
        var brokenLinks: Set<[Int]> = []
        var frozenUntil: [MonotonicTime]
        var dead: Set<Int> = []
        /// Every state change each node reported, with when.
        var changes: [[(at: MonotonicTime, id: NodeID, to: PeerState)]]
        /// Acks each node forwarded for others.
        var forwarded = 0

        init(count: Int, config: MembershipConfig = .init()) {
            addresses = (0..<count).map { PeerAddress(host: "192.0.2.\(11 + $0)", port: 7400) }
            nodes = (0..<count).map { index in
                Membership(
                    me: NodeID.fixture(UInt8(index + 1)), nick: "n\(index)", port: 7400, incarnation: 1,
                    config: config, random: SplitMix64(seed: UInt64(index)))
            }
            wakeAt = Array(repeating: .start, count: count)
            frozenUntil = Array(repeating: .start, count: count)
            changes = Array(repeating: [], count: count)
            for index in 0..<count {
                for other in 0..<count where other != index {
                    apply(
                        nodes[index].addDiscovered(
                            id: id(other), nick: "n\(other)", address: addresses[other], rooms: [], now: .start),
                        at: index)
                }
            }
        }

        func id(_ node: Int) -> NodeID { nodes[node].me }

        mutating func apply(_ directives: [MembershipDirective], at node: Int) {
            for directive in directives {
                switch directive {
                case .send(let message, let address), .forward(let message, let address):
                    if case .forward = directive { forwarded += 1 }
                    guard let to = addresses.firstIndex(of: address), !brokenLinks.contains([node, to].sorted())
                    else { continue }
                    order += 1
                    inFlight.append((now + latency, order, node, to, message))
                case .peerChanged(let id, _, _, let to):
                    changes[node].append((now, id, to))
                case .peerLeft(let id, _):
                    changes[node].append((now, id, .gone))
                case .scheduleTick(let at):
                    wakeAt[node] = at
                case .peerMoved, .peerProven:
                    break
                }
            }
        }

        /// Runs until `end`, event by event: deliveries in order, then due wake-ups.
        mutating func run(until end: MonotonicTime) {
            while true {
                let nextDelivery = inFlight.map(\.at).min()
                let nextWake = wakeAt.indices.filter { !dead.contains($0) }.compactMap { index in
                    wakeAt[index].map { max($0, frozenUntil[index]) }
                }.min()
                guard let next = [nextDelivery, nextWake].compactMap({ $0 }).min(), next <= end else { break }
                now = next
                let arrived = inFlight.filter { $0.at <= now }.sorted { ($0.at, $0.order) < ($1.at, $1.order) }
                inFlight.removeAll { $0.at <= now }
                for datagram in arrived {
                    guard !dead.contains(datagram.to) else { continue }
                    if frozenUntil[datagram.to] > now {  // waits in the socket buffer
                        inFlight.append((frozenUntil[datagram.to], datagram.order, datagram.from, datagram.to, datagram.message))
                        continue
                    }
                    deliver(datagram.message, from: datagram.from, to: datagram.to)
                }
                for index in nodes.indices where !dead.contains(index) && frozenUntil[index] <= now {
                    if let wake = wakeAt[index], wake <= now {
                        wakeAt[index] = nil
                        apply(nodes[index].tick(now: now), at: index)
                    }
                }
            }
            now = end
        }

        mutating func deliver(_ message: WireMessage, from: Int, to: Int) {
            let source = addresses[from]
            let directives: [MembershipDirective] =
                switch message {
                case .probe(let probe): nodes[to].receive(probe, from: source, now: now)
                case .ack(let ack): nodes[to].receive(ack, from: source, now: now)
                case .probeRequest(let request): nodes[to].receive(request, from: source, now: now)
                case .nack(let nack): nodes[to].receive(nack, from: source, now: now)
                default: []
                }
            apply(directives, at: to)
        }

        /// The "suspect" and "gone" reports `observer` made about `about` since `since`.
        func alarms(by observer: Int, about: Int, since: MonotonicTime = .start) -> [(at: MonotonicTime, id: NodeID, to: PeerState)] {
            changes[observer].filter { $0.id == id(about) && $0.to != .alive && $0.at >= since }
        }
    }

    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let bobAt = PeerAddress(host: "192.0.2.12", port: 7002)

    // MARK: Local health

    @Test func aNodeThatWakesLateStretchesItsOwnPeriodAndReadsTheAckItMissed() throws {
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: [], now: .start)
        let start = membership.tick(now: .start)
        let sent = try #require(start.probes.first?.probe)
        #expect(start.wake == .start + .milliseconds(250))

        // Alice's CPU is starved: her next wake-up comes 1.5 s late. Bob's ack has been waiting in
        // her socket buffer since 2 ms; the period it answers is not judged before she reads it.
        let late = membership.tick(now: .start + .milliseconds(1_750))
        #expect(membership.health == 1)
        #expect(late.allSatisfy { if case .peerChanged = $0 { false } else { true } })
        let ack = Ack(
            from: bob, nick: "bob", incarnation: 1, sequence: sent.sequence, echoedSentAt: sent.sentAt,
            rooms: [], peers: [])
        _ = membership.receive(ack, from: bobAt, now: .start + .microseconds(1_750_100))
        _ = membership.tick(now: .start + 3 * second)
        #expect(membership.peers[bob]?.state == .alive)
        #expect(membership.peers.entries[bob]?.doubt == nil)

        // Plain SWIM judges the period at the late wake-up, before the ack is read.
        var plain = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1, config: .swim)
        _ = plain.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: [], now: .start)
        _ = plain.tick(now: .start)
        #expect(plain.tick(now: .start + .milliseconds(1_750)).contains(.peerChanged(id: bob, nick: "bob", from: .alive, to: .suspect)))
    }

    @Test func healthRisesWithLateWakeUpsUpToItsCapAndFallsWithPeriodsAnsweredAtOnce() throws {
        var config = MembershipConfig()
        config.maxHealth = 3
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1, config: config)
        _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: [], now: .start)
        var now = MonotonicTime.start
        var wake = membership.tick(now: now).wake!
        for _ in 0..<5 {  // five wake-ups each a second late
            now = wake + second
            wake = membership.tick(now: now).wake!
        }
        #expect(membership.health == 3)
        #expect(membership.healthMultiplier == 4)

        // From now on every wake-up is on time and every period's first probe is answered: each
        // such period takes one off.
        var periods: [MonotonicTime] = []
        while membership.health > 0, now < .start + 60 * second {
            now = wake
            let directives = membership.tick(now: now)
            for (probe, _) in directives.probes {
                periods.append(now)
                let ack = Ack(
                    from: bob, nick: "bob", incarnation: 1, sequence: probe.sequence, echoedSentAt: probe.sentAt,
                    rooms: [], peers: [])
                _ = membership.receive(ack, from: bobAt, now: now + .microseconds(500))
            }
            wake = membership.wakeAfter(directives, now: now)
        }
        #expect(membership.health == 0)
        // Three periods, each as long as the score at its start stretches it: 4 s, then 3 s.
        let gaps = zip(periods.dropFirst(), periods).map { $0 - $1 }
        #expect(gaps.suffix(2) == [4 * second, 3 * second])
    }

    @Test func helpersThatAnswerButSendNoNackMakeThisNodeDoubtItself() {
        // Alice and carol both reach bob and each other; carol has shown she helps. Then alice's
        // own network goes bad: nobody's answers reach her, not even carol's nacks.
        var network = Network(count: 3)
        network.run(until: .start + 5 * second)
        network.nodes[0].peers.entries[network.id(2)]?.speaksIndirect = true
        network.brokenLinks = [[0, 1], [0, 2]]
        network.run(until: .start + 8 * second)
        #expect(network.nodes[0].health > 0)
        #expect(network.nodes[1].health == 0)
        #expect(network.nodes[2].health == 0)
    }

    // MARK: Indirect probes

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aPeerWhoseDirectPathIsBrokenIsReachedThroughAHelperAndNeverSuspected(seed: UInt64) {
        var network = Network(count: 3)
        network.nodes[0].random = SplitMix64(seed: seed)
        network.run(until: .start + 3 * second)
        network.brokenLinks = [[0, 1]]  // alice and bob cannot reach each other; carol reaches both
        network.run(until: .start + 63 * second)
        #expect(network.alarms(by: 0, about: 1).isEmpty)
        #expect(network.alarms(by: 1, about: 0).isEmpty)
        #expect(network.nodes[0].peers[network.id(1)]?.state == .alive)
        #expect(network.forwarded > 0)  // carol forwarded bob's acks to alice and alice's to bob

        // Plain SWIM, the same minute: alice and bob keep calling each other not answering.
        var plain = Network(count: 3, config: .swim)
        plain.run(until: .start + 3 * second)
        plain.brokenLinks = [[0, 1]]
        plain.run(until: .start + 63 * second)
        #expect(!plain.alarms(by: 0, about: 1).isEmpty)
    }

    @Test func aHelperProbesForAKnownPeerForwardsTheAckUntouchedOrNacks() throws {
        var helper = Membership(me: NodeID.fixture(3), nick: "carol", port: 7003, incarnation: 1)
        let aliceAt = PeerAddress(host: "192.0.2.11", port: 7001)
        _ = helper.addDiscovered(id: alice, nick: "alice", address: aliceAt, rooms: [], now: .start)
        _ = helper.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: [], now: .start)

        // Alice asks carol to reach bob: carol probes bob at the address she knows, with alice's
        // send time, so bob's ack echoes it.
        let request = ProbeRequest(from: alice, target: bob, sentAt: .start + .microseconds(777))
        let asked = helper.receive(request, from: PeerAddress(host: "198.51.100.9", port: 1), now: .start + .microseconds(10))
        let (probe, to) = try #require(asked.probes.first)
        #expect(to == bobAt)
        #expect(probe.sentAt == .start + .microseconds(777))
        // Asking twice does not make a second probe.
        #expect(helper.receive(request, from: aliceAt, now: .start + .microseconds(11)).probes.isEmpty)

        // Bob's ack goes to alice as bob signed it, to the address carol knows for alice.
        var ack = Ack(
            from: bob, nick: "bob", incarnation: 1, sequence: probe.sequence, echoedSentAt: .start + .microseconds(777), rooms: [], peers: [])
        ack.signature = Array(repeating: 0x42, count: 64)
        let answered = helper.receive(ack, from: bobAt, now: .start + .microseconds(500))
        #expect(answered.contains(.forward(.ack(ack), to: aliceAt)))

        // A second request that bob leaves unanswered earns alice a nack after carol's probe
        // timeout (a quarter period), and no more.
        _ = helper.receive(ProbeRequest(from: alice, target: bob, sentAt: .start + .microseconds(900)), from: aliceAt, now: .start + .milliseconds(1))
        let before = helper.tick(now: .start + .milliseconds(200))
        #expect(!before.contains { if case .send(.nack, _) = $0 { true } else { false } })
        let due = helper.tick(now: .start + .milliseconds(251))
        #expect(due.contains(.send(.nack(Nack(from: NodeID.fixture(3), target: bob, sentAt: .start + .microseconds(900))), to: aliceAt)))
        #expect(!helper.tick(now: .start + .milliseconds(400)).contains { if case .send(.nack, _) = $0 { true } else { false } })

        // Strangers and requests about strangers are not helped.
        let stranger = NodeID.fixture(9)
        #expect(helper.receive(ProbeRequest(from: stranger, target: bob, sentAt: .start + .microseconds(1)), from: aliceAt, now: .start + .milliseconds(2)).isEmpty)
        #expect(helper.receive(ProbeRequest(from: alice, target: stranger, sentAt: .start + .microseconds(1)), from: aliceAt, now: .start + .milliseconds(2)).probes.isEmpty)
    }

    // MARK: Suspicion

    @Test func aNodeFrozenForTwoSecondsIsNeverSuspected() {
        var network = Network(count: 5)
        network.run(until: .start + 5 * second)
        var freeze = MonotonicTime.start + 5 * second
        for round in 0..<20 {  // node 3 freezes for 2 s every 4.5 s, for 90 s
            network.frozenUntil[3] = freeze + 2 * second
            freeze += .milliseconds(4_500) + Int64(round % 3) * .milliseconds(100)
            network.run(until: freeze)
        }
        for observer in [0, 1, 2, 4] {
            #expect(network.alarms(by: observer, about: 3).isEmpty, "node \(observer)")
        }
        // Plain SWIM, the same freezes: node 3 is reported not answering again and again.
        var plain = Network(count: 5, config: .swim)
        plain.run(until: .start + 5 * second)
        freeze = .start + 5 * second
        for round in 0..<20 {
            plain.frozenUntil[3] = freeze + 2 * second
            freeze += .milliseconds(4_500) + Int64(round % 3) * .milliseconds(100)
            plain.run(until: freeze)
        }
        #expect([0, 1, 2, 4].map { plain.alarms(by: $0, about: 3).count }.reduce(0, +) > 0)
    }

    @Test func aSuspicionNobodyConfirmsLastsLongestAndConfirmationsShortenIt() {
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        let others = (2...5).map { NodeID.fixture(UInt8($0)) }
        for (index, id) in others.enumerated() {
            _ = membership.addDiscovered(
                id: id, nick: "n\(index)", address: PeerAddress(host: "192.0.2.\(12 + index)", port: 7400), rooms: [],
                now: .start)
        }
        let suspect = others[0]
        _ = membership.setState(suspect, .suspect, incarnation: 0, now: .start)
        // Three other alive peers could confirm: 5 s with none, 2 s with all three.
        #expect(membership.suspicionTimeout(of: suspect) == 5 * second)
        membership.confirm(suspect, by: others[1])
        let one = membership.suspicionTimeout(of: suspect)
        membership.confirm(suspect, by: others[1])  // the same member twice is one confirmation
        #expect(membership.suspicionTimeout(of: suspect) == one)
        membership.confirm(suspect, by: others[2])
        let two = membership.suspicionTimeout(of: suspect)
        membership.confirm(suspect, by: others[3])
        #expect(5 * second > one && one > two && two > 2 * second)
        #expect(membership.suspicionTimeout(of: suspect) == 2 * second)
        // This node and the suspect itself never confirm.
        var fresh = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        _ = fresh.addDiscovered(id: suspect, nick: "s", address: bobAt, rooms: [], now: .start)
        _ = fresh.setState(suspect, .suspect, incarnation: 0, now: .start)
        fresh.confirm(suspect, by: alice)
        fresh.confirm(suspect, by: suspect)
        #expect(fresh.peers.entries[suspect]?.suspicion?.confirmedBy.isEmpty == true)
    }

    @Test func oneGossipRecordDoesNotOutweighContactButTwoMembersDo() {
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        let carol = NodeID.fixture(3)
        let dave = NodeID.fixture(4)
        let carolAt = PeerAddress(host: "192.0.2.13", port: 7003)
        let daveAt = PeerAddress(host: "192.0.2.14", port: 7004)
        func probe(from id: NodeID, port: UInt16, sequence: UInt64, peers: [PeerRecord] = []) -> Probe {
            Probe(from: id, nick: "n", incarnation: 1, sequence: sequence, sentAt: .start, port: port, rooms: [], peers: peers)
        }
        _ = membership.receive(probe(from: bob, port: 7002, sequence: 1), from: bobAt, now: .start)
        _ = membership.receive(probe(from: carol, port: 7003, sequence: 1), from: carolAt, now: .start)
        _ = membership.receive(probe(from: dave, port: 7004, sequence: 1), from: daveAt, now: .start)
        let rumour = PeerRecord(id: bob, nick: "bob", host: bobAt.host, port: bobAt.port, state: .suspect, incarnation: 1)

        // Bob probed alice a moment ago; carol says he is suspect: alice doubts him, tells nobody.
        let first = membership.receive(probe(from: carol, port: 7003, sequence: 2, peers: [rumour]), from: carolAt, now: .start + .milliseconds(500))
        #expect(!first.contains { if case .peerChanged = $0 { true } else { false } })
        #expect(membership.peers[bob]?.state == .alive)
        #expect(membership.peers.entries[bob]?.doubt != nil)
        // Carol again: still one member.
        _ = membership.receive(probe(from: carol, port: 7003, sequence: 3, peers: [rumour]), from: carolAt, now: .start + .milliseconds(600))
        #expect(membership.peers[bob]?.state == .alive)
        // Dave too: two members, taken.
        let twoSay = membership.receive(probe(from: dave, port: 7004, sequence: 2, peers: [rumour]), from: daveAt, now: .start + .milliseconds(700))
        #expect(twoSay.contains(.peerChanged(id: bob, nick: "n", from: .alive, to: .suspect)))

        // A peer not heard from for longer than the silence before suspicion: one record is enough.
        var other = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1)
        _ = other.receive(probe(from: bob, port: 7002, sequence: 1), from: bobAt, now: .start)
        _ = other.receive(probe(from: carol, port: 7003, sequence: 1), from: carolAt, now: .start)
        let taken = other.receive(probe(from: carol, port: 7003, sequence: 2, peers: [rumour]), from: carolAt, now: .start + 3 * second)
        #expect(taken.contains(.peerChanged(id: bob, nick: "n", from: .alive, to: .suspect)))
    }

    @Test(arguments: [3, 6] as [Int])
    func aKilledNodeIsReportedGoneByEveryPeerWithinTenSeconds(count: Int) {
        for half in 20..<24 {  // at any point of a period
            let killAt = MonotonicTime.start + Int64(half) * .milliseconds(500)
            var network = Network(count: count)
            network.run(until: killAt)
            network.dead = [0]
            network.run(until: killAt + 12 * second)
            for observer in 1..<count {
                let gone = network.changes[observer].first { $0.id == network.id(0) && $0.to == .gone && $0.at >= killAt }
                #expect(gone.map { $0.at - killAt <= 10 * second } == true, "node \(observer) of \(count), kill at \(killAt)")
                for other in 1..<count where other != observer {
                    #expect(network.alarms(by: observer, about: other).isEmpty)
                }
            }
        }
    }
}

extension Membership {
    /// The wake-up among `directives`, or the one asked for before.
    fileprivate func wakeAfter(_ directives: [MembershipDirective], now: MonotonicTime) -> MonotonicTime {
        directives.wake ?? scheduledTick ?? now
    }
}
