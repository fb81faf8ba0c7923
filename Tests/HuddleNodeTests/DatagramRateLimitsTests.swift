import HuddleCore
import Testing

@testable import HuddleNode

/// A flood from one address is cut to its rate before anything is decoded; others go on.
@Suite struct DatagramRateLimitsTests {
    let flooder = PeerAddress(host: "192.0.2.66", port: 4000)
    let alice = PeerAddress(host: "192.0.2.11", port: 7700)

    @Test func aBurstPassesThenTheRateAndOtherSendersAreUntouched() {
        var limits = DatagramRateLimits()
        var admitted = 0
        for _ in 0..<5_000 where limits.admit(flooder, now: 0) { admitted += 1 }
        #expect(admitted == 800)
        #expect(limits.refused == 4_200)
        let aliceAdmitted = limits.admit(alice, now: 0)
        #expect(aliceAdmitted)

        // Half a second later: 200 more.
        admitted = 0
        for _ in 0..<5_000 where limits.admit(flooder, now: 500_000) { admitted += 1 }
        #expect(admitted == 200)
    }

    @Test func manyPortsOfOneHostShareTheHostsLimit() {
        var limits = DatagramRateLimits()
        var admitted = 0
        for port in 0..<100 {
            for _ in 0..<200 where limits.admit(PeerAddress(host: "192.0.2.66", port: UInt16(port)), now: 0) {
                admitted += 1
            }
        }
        #expect(admitted == 8_000)
        let aliceAdmitted = limits.admit(alice, now: 0)
        #expect(aliceAdmitted)
    }

    @Test func aSprayOfForgedAddressesKeepsTheTablesBounded() {
        var limits = DatagramRateLimits()
        for index in 0..<20_000 {
            let source = PeerAddress(host: "10.\(index >> 16).\((index >> 8) & 255).\(index & 255)", port: 1)
            let admitted = limits.admit(source, now: Int64(index))
            #expect(admitted)
        }
        #expect(limits.trackedCount <= DatagramRateLimits.maximumTracked * 2)
    }

    @Test func aPeersAddressIsNeverLimitedSoForgingItSilencesNobody() {
        var limits = DatagramRateLimits()
        limits.exempt = [alice]
        // Someone forges alice's address as fast as it can: alice's own datagrams still pass.
        var admitted = 0
        for _ in 0..<5_000 where limits.admit(alice, now: 0) { admitted += 1 }
        #expect(admitted == 5_000)
        #expect(limits.refused == 0)
    }
}
