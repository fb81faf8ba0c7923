import Testing

@testable import HuddleCore

/// What waits for which commit, decided in the machine for every driver (issue 32).
@Suite(.offThePool) struct CommitGateTests {
    let shown = StoreWrite.shown([], room: "superbowl", at: .epoch)
    let joined = StoreWrite.joined("superbowl", true)

    @Test func anInputWithoutAWriteThatMustLandPassesAtOnce() {
        var gate = CommitGate()
        let effects: [NodeEffect] = [.persist(joined), .output(.notice(.talkingIn(room: "superbowl")))]
        #expect(gate.pass(effects) == effects)
        #expect(gate.waitingTurns == 0)
    }

    @Test func whatFollowsARecordOfShowingWaitsForItsCommitButTheGoodbyeListDoesNot() {
        var gate = CommitGate()
        let vouched = NodeEffect.vouchedPeers([PeerAddress(host: "10.0.0.2", port: 7400)], incarnation: 1)
        let out = gate.pass([.persist(shown), .output(.notice(.talkingIn(room: "a"))), vouched, .persist(joined)])
        #expect(out.count == 2)
        #expect(out.first == vouched)
        guard case .commit(let writes, let turn) = out.last else {
            Issue.record("no commit: \(out)")
            return
        }
        #expect(writes == [shown, joined])
        let due = gate.committed(turn)
        #expect(due.map(\.effects) == [[.output(.notice(.talkingIn(room: "a")))]])
    }

    /// A pull's next request does not wait for the batch's commit: it shows nothing, and a
    /// backlog pulled at the disk's pace would take a commit per batch.
    @Test func aPullsStepsNeverWait() {
        var gate = CommitGate()
        let pull = PullRequest(room: "superbowl", peer: NodeIdentity.generate().id, address: PeerAddress(host: "10.0.0.2", port: 7400))
        let next = SyncRequest(from: pull.peer, room: "superbowl", have: VersionVector(), limit: 1024)
        let out = gate.pass([.persist(shown), .output(.notice(.talkingIn(room: "a"))), .pullNext(pull, next)])
        #expect(out.first == .pullNext(pull, next))
        #expect(out.count == 2)
    }

    /// Two commits that return out of order let their effects out in the order of the inputs.
    @Test func turnsComeOutInTheOrderOfTheirInputs() {
        var gate = CommitGate()
        guard case .commit(_, let first) = gate.pass([.persist(shown), .output(.notice(.talkingIn(room: "first")))]).last,
            case .commit(_, let second) = gate.pass([.persist(shown), .output(.notice(.talkingIn(room: "second")))]).last
        else {
            Issue.record("no commits")
            return
        }
        #expect(gate.committed(second).isEmpty)
        #expect(gate.waitingTurns == 2)
        #expect(gate.committed(first).map(\.turn) == [first, second])
        #expect(gate.waitingTurns == 0)
        // A turn reported twice, or one never issued, lets nothing out.
        #expect(gate.committed(first).isEmpty)
    }
}
