import Testing

@testable import HuddleCore

@Suite(.offThePool) struct SendCreditTests {
    /// Never more bytes out to a host than came from it, but for 64 bytes of slack.
    @Test func whatGoesOutIsPaidByWhatCameIn() {
        var credit = SendCredit()
        func spend(_ bytes: Int, payer: String) -> Bool { credit.spend(bytes, payer: payer) }
        #expect(!spend(65, payer: "192.0.2.66"))  // nothing came from there
        credit.earn(170, from: "192.0.2.66")
        #expect(spend(150, payer: "192.0.2.66"))
        #expect(!spend(150, payer: "192.0.2.66"))  // 20 bytes left and 64 of slack: nothing taken
        #expect(spend(84, payer: "192.0.2.66"))  // 64 owed now
        #expect(!spend(1, payer: "192.0.2.66"))
        credit.earn(64, from: "192.0.2.66")  // repaid first
        #expect(!spend(65, payer: "192.0.2.66"))
        // Another host's bytes pay for nothing of this one's.
        credit.earn(10_000, from: "192.0.2.7")
        #expect(!spend(65, payer: "192.0.2.66"))
    }

    /// Credit saved up is capped, and a spray of hosts forgets the poorest, never the busiest.
    @Test func creditIsCappedAndTheBusiestHostsAreKept() {
        var credit = SendCredit()
        func spend(_ bytes: Int, payer: String) -> Bool { credit.spend(bytes, payer: payer) }
        credit.earn(1 << 30, from: "192.0.2.7")
        #expect(spend(SendCredit.cap + SendCredit.slack, payer: "192.0.2.7"))
        #expect(!spend(1, payer: "192.0.2.7"))
        credit.earn(50_000, from: "192.0.2.7")
        for n in 0..<(SendCredit.maximumTracked + 10) {
            credit.earn(1, from: "10.\(n >> 16).\((n >> 8) & 255).\(n & 255)")
        }
        #expect(spend(50_000, payer: "192.0.2.7"))
    }
}
