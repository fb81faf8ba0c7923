import Testing

@testable import HuddleCore

/// A pull as every driver runs it, decided by the machine (`NodeMachine+Pulls`): the first request,
/// batch after batch while the peer has more, and the end.
@Suite(.offThePool) struct PullTests {
    let room = "superbowl"

    /// bob missed 2 100 of alice's messages (their pushes were lost): one pull brings them all, in
    /// batches of 1 024, because the machine asks for the next batch while the peer has more.
    /// alice and bob in the room; alice wrote `count` lines whose pushes were all lost.
    func backlog(_ count: Int) -> (lan: MachineLAN, alice: Int, bob: Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        for n in 1...count { lan.on(alice) { $0.handle(.consoleLine("line \(n)", at: $1.wall), now: $1) } }
        lan.dropAll()
        return (lan, alice, bob)
    }

    @Test func onePullBringsABacklogLargerThanABatch() {
        var (lan, _, bob) = backlog(2_100)
        #expect(lan[bob].messages.isEmpty)
        let pullsBefore = lan[bob].pulls.count
        for _ in 0..<30 where lan[bob].messages.count < 2_100 { lan.advance(.milliseconds(500)) }
        #expect(lan[bob].messages.count == 2_100)
        #expect(lan[bob].messages.last == "line 2100")
        #expect(lan[bob].pulls.count - pullsBefore == 1, "\(lan[bob].pulls.count - pullsBefore) pulls")
    }

    /// The rules of one batch: another while the peer has more and the batch brought something
    /// new; none when it has no more, when a batch brings nothing (a peer cannot keep a node
    /// asking), or when the node left the room. A recheck lowers the first request.
    @Test func aBatchCallsForAnotherOnlyWhileItBringsSomethingNew() throws {
        var (lan, alice, bob) = backlog(3)
        let aliceID = lan[alice].machine.identity.id
        let pull = PullRequest(room: room, peer: aliceID, address: lan[alice].address)
        let first = lan[bob].machine.firstSyncRequest(for: pull)
        #expect(first.have[aliceID] == 1, "bob holds alice's join")  // the join came before the drop
        let batch = lan[alice].machine.syncResponse(to: first)
        #expect(batch.events.count == 3)
        let next = try #require(lan.on(bob) { $0.pulled(batch.events, for: pull, asked: first, more: true, now: $1) })
        #expect(next.have[aliceID] == 4)
        #expect(lan.on(bob) { $0.pulled([], for: pull, asked: next, more: true, now: $1) } == nil, "nothing new")
        #expect(lan.on(bob) { $0.pulled(batch.events, for: pull, asked: next, more: true, now: $1) } == nil, "copies")
        #expect(lan.on(bob) { $0.pulled(batch.events, for: pull, asked: first, more: false, now: $1) } == nil, "no more")
        let recheck = PullRequest(room: room, peer: aliceID, address: lan[alice].address, recheck: aliceID, from: 3)
        #expect(lan[bob].machine.firstSyncRequest(for: recheck).have[aliceID] == 2)
        let elsewhere = PullRequest(room: "worldcup", peer: aliceID, address: lan[alice].address)
        #expect(lan.on(bob) { $0.pulled(batch.events, for: elsewhere, asked: first, more: true, now: $1) } == nil, "not in it")
    }

    /// The machine decides how many pulls run: one at a time, the next when one ends (also by
    /// failing), and an old connection's end cannot end a newer run of the same pull.
    @Test func onePullRunsAtATimeAndTheNextStartsWhenItEnds() {
        var lan = MachineLAN()
        let bob = lan.add("bob")
        let peer = NodeIdentity.generate().id
        let fromCarol = PullRequest(room: room, peer: peer, address: PeerAddress(host: "10.0.0.3", port: 7400))
        let fromDave = PullRequest(room: room, peer: peer, address: PeerAddress(host: "10.0.0.4", port: 7400))
        func started(_ body: (inout NodeMachine, NodeTime) -> Void) -> [PullRequest] {
            body(&lan.hosts[bob].machine, lan.now)
            return lan.hosts[bob].machine.pollEffects().compactMap { if case .pull(let pull, _) = $0 { pull } else { nil } }
        }
        let first = started { machine, _ in
            machine.schedulePull(fromCarol)
            machine.schedulePull(fromDave)
            machine.schedulePull(fromDave)
        }
        #expect(first.map(\.address) == [fromCarol.address])
        let second = started { $0.handle(.pullFailed(first[0]), now: $1) }
        #expect(second.map(\.address) == [fromDave.address], "the one waiting, once")
        #expect(started { $0.handle(.pullFailed(first[0]), now: $1) }.isEmpty, "ended already")

        let again = started { machine, now in
            machine.handle(.pullFailed(second[0]), now: now)
            machine.schedulePull(fromCarol)
        }
        #expect(again.map(\.address) == [fromCarol.address])
        #expect(again[0] != first[0], "another run")
        // The first run's connection ending now does not end the second run.
        #expect(started { $0.handle(.pullFailed(first[0]), now: $1) }.isEmpty)
        #expect(lan.hosts[bob].machine.pulls.running.keys.contains(again[0]))
        // A batch of a pull that is over is answered all the same: the driver's wait ends.
        lan.hosts[bob].machine.handle(.pullBatch(first[0], events: [], more: true), now: lan.now)
        #expect(lan.hosts[bob].machine.pollEffects() == [.pullDone(first[0])])
    }
}
