import Testing

@testable import HuddleCore

/// Keys that never joined: two versions of their events prove nothing yet, cost a bounded amount
/// of memory, and become proof if the origin joins after all.
@Suite(.offThePool) struct RoomLogStrangerTests {
    let mallory = NodeID.fixture(9)

    @Test func aConflictFromAStrangerIsNoProofUntilItJoins() {
        let join = Event.fixture(mallory, 1, .join(nick: "mallory"))
        let x = Event.fixture(mallory, 2, .chat(text: "7-0"))
        let y = Event.fixture(mallory, 2, .chat(text: "0-7"))
        var log = RoomLog(room: "superbowl")
        #expect(log.insert(x) == .accepted(delivered: []))
        #expect(log.insert(y) == .rejected(.strangerConflict))
        #expect(log.faults.isEmpty)
        guard case .equivocation(let proof, let delivered) = log.insert(join) else {
            Issue.record("the join does not prove the conflict")
            return
        }
        #expect(proof == Equivocation(x, y))
        #expect(delivered == [join], "mallory's join shows; neither version of #2 ever does")
        #expect(log.faults[mallory] == proof)
        #expect(log.vector == [mallory: 1])
    }

    @Test func strangersConflictsAreBoundedAndForgottenWithTheirEvents() {
        var limits = RoomLogLimits()
        limits.maxPendingProofs = 4
        var log = RoomLog(room: "superbowl", limits: limits)
        for n in 10..<20 as Range<UInt8> {
            let origin = NodeID.fixture(n)
            _ = log.insert(Event.fixture(origin, 2, .chat(text: "a")), now: .epoch)
            #expect(log.insert(Event.fixture(origin, 2, .chat(text: "b")), now: .epoch) == .rejected(.strangerConflict))
        }
        #expect(log.pendingProofs.count == 4)
        #expect(log.faults.isEmpty)
        _ = log.expire(now: .epoch + limits.maxWait)
        #expect(log.pendingProofs.isEmpty)
        #expect(log.count == 0)
    }
}
