import Testing

@testable import HuddleCore

@Suite(.offThePool) struct SoundWindowBudgetTests {
    let bob = NodeID.fixture(2)

    /// What an honest listener sends passes: three windows when it starts, then one every 2 s.
    @Test func anHonestListenersWindowsAllPass() {
        var budget = NodeMachine.soundWindowBudget
        var now = MonotonicTime.start
        for _ in 0..<3 {
            let taken = budget.admit(bob, now: now)
            #expect(taken)
        }
        for _ in 0..<100 {
            now = now + .seconds(2)
            let taken = budget.admit(bob, now: now)
            #expect(taken)
        }
    }

    /// A flood from one member gets a window a second; sixteen members together get eight.
    @Test func aFloodGetsOneASecondAndEveryoneTogetherEight() {
        var budget = NodeMachine.soundWindowBudget
        var taken = 0
        for tick in 0..<1_000 {  // 100 windows a second for 10 s
            if budget.admit(bob, now: .start + .milliseconds(Int64(tick) * 10)) { taken += 1 }
        }
        #expect(taken == 4 + 10 - 1 || taken == 4 + 10)
        var crowd = NodeMachine.soundWindowBudget
        let members = (0..<16).map { NodeID.fixture(UInt8(10 + $0)) }
        var together = 0
        for second in 0..<10 {
            for member in members where crowd.admit(member, now: .start + .seconds(second)) { together += 1 }
        }
        #expect(together <= 16 + 9 * 8)
        #expect(together >= 9 * 8)
    }
}
