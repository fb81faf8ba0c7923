import Testing

@testable import HuddleCore

/// The node's one table of connection caps, and the seats a server that refuses past them keeps.
@Suite struct ConnectionCapsTests {
    @Test func oneAddressTakesItsShareAndLeavesTheRestForOthers() {
        var open = OpenConnections(cap: ConnectionCap(total: 6, perAddress: 2))
        #expect(open.admit("10.0.0.9") == nil)
        #expect(open.admit("10.0.0.9") == nil)
        #expect(open.admit("10.0.0.9") == .addressFull)
        #expect(open.count(from: "10.0.0.9") == 2, "a refusal seats nothing")
        for host in ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"] { #expect(open.admit(host) == nil) }
        #expect(open.admit("10.0.0.3") == .full)
        #expect(open.count == 6)
    }

    @Test func aClosedConnectionFreesItsSeat() {
        var open = OpenConnections(cap: ConnectionCap(total: 2, perAddress: 1))
        #expect(open.admit("a") == nil)
        #expect(open.admit("b") == nil)
        #expect(open.admit("c") == .full)
        open.release("a")
        open.release("never seated")  // counts for nothing
        #expect(open.admit("c") == nil)
        #expect(open.admit("a") == .full)
        #expect(open.count == 2 && open.count(from: "a") == 0)
    }

    /// Each face's caps come from the one table: the page's seats use what the table says.
    @Test func thePagesSeatsUseTheTable() {
        let limits = WebSeats.Limits()
        #expect(limits.connections == ConnectionCaps.pageConnections)
        #expect(limits.handshakes == ConnectionCaps.pageHandshakes)
        #expect(limits.sessions == ConnectionCaps.pageSessions)
    }
}
