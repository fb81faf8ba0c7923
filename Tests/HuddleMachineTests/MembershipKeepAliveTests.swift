import Testing

@testable import HuddleCore

/// Keeping NATs open (`Membership+KeepAlive`): peers not found over mDNS are probed every period,
/// so a router that forgot its mapping gets a new one within a period; peers on this link only
/// when the ring comes to them.
@Suite(.offThePool) struct MembershipKeepAliveTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)
    let dave = NodeID.fixture(4)
    let bobAt = PeerAddress(host: "192.0.2.12", port: 7002)
    let carolAt = PeerAddress(host: "198.51.100.1", port: 41_003)
    let daveAt = PeerAddress(host: "198.51.100.1", port: 41_004)
    let second = TimeSpan.seconds(1)

    /// Plain SWIM timing (nothing stretches), with keep-alives.
    func aliceNode(keepAlivePeers: Int = 8) -> Membership {
        var config = MembershipConfig.swim
        config.keepAlivePeers = keepAlivePeers
        var membership = Membership(me: alice, nick: "alice", port: 7001, incarnation: 1, config: config)
        membership.rooms = ["superbowl"]
        return membership
    }

    func probe(from id: NodeID, sequence: UInt64) -> Probe {
        Probe(from: id, nick: "n", incarnation: 1, sequence: sequence, sentAt: .start, port: 7400, rooms: ["superbowl"], peers: [])
    }

    /// Where alice's probes went in each of `periods` periods from `start`, every probe answered.
    func probed(_ membership: inout Membership, periods: Int, from start: MonotonicTime) -> [[PeerAddress]] {
        (0..<periods).map { n in
            let now = start + Int64(n) * second
            let sent = membership.tick(now: now).probes
            for (probe, to) in sent {
                let id = [bobAt: bob, carolAt: carol, daveAt: dave][to]!
                let ack = Ack(
                    from: id, nick: "n", incarnation: 1, sequence: probe.sequence, echoedSentAt: probe.sentAt,
                    rooms: ["superbowl"], peers: [])
                _ = membership.receive(ack, from: to, now: now + .milliseconds(1))
            }
            return sent.map(\.to).sorted()
        }
    }

    @Test func peersFoundOffThisLinkAreProbedEveryPeriodAndAHousemateOnlyInItsTurn() {
        var membership = aliceNode()
        _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: ["superbowl"], now: .start)
        _ = membership.receive(probe(from: carol, sequence: 1), from: carolAt, now: .start)  // reached us through a NAT
        _ = membership.receive(probe(from: dave, sequence: 1), from: daveAt, now: .start)
        membership.proveAllForTest()
        let periods = probed(&membership, periods: 6, from: .start)
        for (n, sent) in periods.enumerated() {
            #expect(sent.contains(carolAt) && sent.contains(daveAt), "period \(n): \(sent)")
            #expect(sent.count(where: { $0 == carolAt }) == 1 && sent.count(where: { $0 == daveAt }) == 1)
        }
        // Bob, found over mDNS, is probed every second period: the inner ring's turn (carol and
        // dave, who reached us first, have the outer ring).
        #expect(periods.map { $0.count(where: { $0 == bobAt }) }.reduce(0, +) == 3)
    }

    @Test func anUnansweredKeepAliveCountsAgainstNobody() {
        var membership = aliceNode()
        _ = membership.addDiscovered(id: bob, nick: "bob", address: bobAt, rooms: ["superbowl"], now: .start)
        _ = membership.receive(probe(from: carol, sequence: 1), from: carolAt, now: .start)
        membership.proveForTest(carol)
        for (probe, to) in membership.tick(now: .start).probes {
            let ack = Ack(
                from: to == bobAt ? bob : carol, nick: "n", incarnation: 1, sequence: probe.sequence,
                echoedSentAt: probe.sentAt, rooms: ["superbowl"], peers: [])
            _ = membership.receive(ack, from: to, now: .start + .milliseconds(1))
        }
        // Carol is the ring's peer every other period, and answers those; her keep-alives in bob's
        // periods go unanswered. She stays alive and undoubted.
        for n in 1...6 {
            let now = MonotonicTime.start + Int64(n) * second
            for (probe, to) in membership.tick(now: now).probes where to == bobAt || membership.period?.target == carol {
                let id = to == bobAt ? bob : carol
                let ack = Ack(
                    from: id, nick: "n", incarnation: 1, sequence: probe.sequence, echoedSentAt: probe.sentAt,
                    rooms: ["superbowl"], peers: [])
                _ = membership.receive(ack, from: to, now: now + .milliseconds(1))
            }
        }
        #expect(membership.peers[carol]?.state == .alive)
        #expect(membership.peers.entries[carol]?.doubt == nil)
    }

    @Test func atMostTheBoundIsKeptAlivePerPeriodAndEachInTurn() {
        var membership = aliceNode(keepAlivePeers: 1)
        _ = membership.receive(probe(from: carol, sequence: 1), from: carolAt, now: .start)
        _ = membership.receive(probe(from: dave, sequence: 1), from: daveAt, now: .start)
        _ = membership.receive(probe(from: bob, sequence: 1), from: bobAt, now: .start)
        membership.proveAllForTest()
        let periods = probed(&membership, periods: 6, from: .start)
        // The ring's peer and one kept alive per period; over six periods each peer gets at least
        // one probe every two periods.
        #expect(periods.allSatisfy { $0.count == 2 }, "\(periods)")
        for address in [bobAt, carolAt, daveAt] {
            for n in 0..<5 {
                #expect(periods[n].contains(address) || periods[n + 1].contains(address), "\(address) in \(n)")
            }
        }
    }

    @Test func plainSWIMKeepsNobodyAlive() {
        var membership = aliceNode(keepAlivePeers: 0)
        _ = membership.receive(probe(from: carol, sequence: 1), from: carolAt, now: .start)
        _ = membership.receive(probe(from: dave, sequence: 1), from: daveAt, now: .start)
        membership.proveAllForTest()
        let periods = probed(&membership, periods: 4, from: .start)
        #expect(periods.allSatisfy { $0.count == 1 }, "\(periods)")
    }
}
