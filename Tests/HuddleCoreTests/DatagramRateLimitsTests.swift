import Testing

@testable import HuddleCore

/// A flood from one address is cut to its rate before anything is decoded; others go on.
@Suite(.offThePool) struct DatagramRateLimitsTests {
    let flooder = PeerAddress(host: "192.0.2.66", port: 4000)
    let alice = PeerAddress(host: "192.0.2.11", port: 7700)

    @Test func aBurstPassesThenTheRateAndOtherSendersAreUntouched() {
        var limits = DatagramRateLimits()
        var admitted = 0
        for _ in 0..<5_000 where limits.admit(flooder, now: .start) { admitted += 1 }
        #expect(admitted == 800)
        #expect(limits.refused == 4_200)
        let aliceAdmitted = limits.admit(alice, now: .start)
        #expect(aliceAdmitted)

        // Half a second later: 200 more.
        admitted = 0
        for _ in 0..<5_000 where limits.admit(flooder, now: .start + .milliseconds(500)) { admitted += 1 }
        #expect(admitted == 200)
    }

    @Test func manyPortsOfOneHostShareTheHostsLimit() {
        var limits = DatagramRateLimits()
        var admitted = 0
        for port in 0..<100 {
            for _ in 0..<200 where limits.admit(PeerAddress(host: "192.0.2.66", port: UInt16(port)), now: .start) {
                admitted += 1
            }
        }
        #expect(admitted == 8_000)
        let aliceAdmitted = limits.admit(alice, now: .start)
        #expect(aliceAdmitted)
    }

    @Test func aSprayOfForgedAddressesKeepsTheTablesBounded() {
        var limits = DatagramRateLimits()
        for index in 0..<20_000 {
            let source = PeerAddress(host: "10.\(index >> 16).\((index >> 8) & 255).\(index & 255)", port: 1)
            let admitted = limits.admit(source, now: .start + .microseconds(index))
            #expect(admitted)
        }
        #expect(limits.trackedCount <= DatagramRateLimits.maximumTracked * 2)
    }

    @Test func aPeersAddressIsNeverLimitedSoForgingItSilencesNobody() {
        var limits = DatagramRateLimits()
        limits.exempt = [alice]
        // Someone forges alice's address as fast as it can: alice's own datagrams still pass.
        var admitted = 0
        for _ in 0..<5_000 where limits.admit(alice, now: .start) { admitted += 1 }
        #expect(admitted == 5_000)
        #expect(limits.refused == 0)
    }

    // MARK: Signature checks

    @Test func aStrangersSignatureChecksAreBudgetedAndBadOnesCostTenfold() {
        var limits = SignatureBudgets()
        // A datagram of 372 events: a burst of 400 checks covers it, the next one only 28.
        #expect(limits.checks(372, from: flooder, now: .start) == 372)
        #expect(limits.checks(372, from: flooder, now: .start) == 28)
        #expect(limits.checks(372, from: flooder, now: .start) == 0)
        // A second later: 200 more; all of them bad, they cost 2 000, and the host is silent
        // for ten seconds.
        #expect(limits.checks(372, from: flooder, now: .start + .seconds(1)) == 200)
        limits.penalize(200, from: flooder, now: .start + .seconds(1))
        #expect(limits.checks(10, from: flooder, now: .start + .seconds(10)) == 0)
        #expect(limits.checks(10, from: flooder, now: .start + .milliseconds(11_500)) == 10)
        // Another stranger has its own budget; a live peer has its own, larger one: a key that
        // proved an address cannot take a core either (round 3: 18 898 checks a second).
        #expect(limits.checks(100, from: PeerAddress(host: "192.0.2.99", port: 1), now: .start + .milliseconds(11_500)) == 100)
        limits.exempt = [alice]
        #expect(limits.checks(5_000, from: alice, now: .start + .milliseconds(11_500)) == 2_000)
        #expect(limits.checks(5_000, from: alice, now: .start + .milliseconds(12_500)) == 1_000)
        // Its bad signatures cost it tenfold too.
        limits.penalize(100, from: alice, now: .start + .milliseconds(12_500))
        #expect(limits.checks(1_000, from: alice, now: .start + .milliseconds(13_400)) == 0)
        #expect(limits.checks(1_000, from: alice, now: .start + .milliseconds(13_500)) == 100)
    }

    @Test func everyPeerTogetherHasOneBudget() {
        var limits = SignatureBudgets()
        let peers = (0..<8).map { PeerAddress(host: "192.0.2.\(10 + $0)", port: 7400) }
        limits.exempt = Set(peers)
        let granted = peers.map { limits.checks(2_000, from: $0, now: .start) }.reduce(0, +)
        #expect(granted == 8_000)
    }

    @Test func everyStrangerTogetherHasOneBudget() {
        var limits = SignatureBudgets()
        var granted = 0
        for host in 0..<20 {
            granted += limits.checks(400, from: PeerAddress(host: "192.0.2.\(100 + host)", port: 1), now: .start)
        }
        #expect(granted == 2_000)
    }
}
