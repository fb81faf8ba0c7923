import HuddleCore
import Testing

/// The page server's seats (``WebSeats``): a stranger filling them from a few addresses loses
/// seats to each phone that comes, a paired device's page is never unseated, and every seat comes
/// back when its connection closes.
@Suite(.offThePool) struct WebSeatsTests {
    let phone = "192.168.1.23"

    /// `count` connections from each of `addresses`, numbered from `first`, upgraded to WebSockets
    /// when `upgrade`; what each came to.
    func fill(
        _ seats: inout WebSeats, from addresses: [String], count: Int, first: Int = 0, upgrade: Bool = false
    ) -> [WebSeats.Verdict] {
        var id = first
        var verdicts: [WebSeats.Verdict] = []
        for address in addresses {
            for _ in 0..<count {
                var verdict = seats.accept(id, from: address)
                if upgrade, verdict != .refused { verdict = seats.upgrade(id) }
                verdicts.append(verdict)
                id += 1
            }
        }
        return verdicts
    }

    @Test func idleWebSocketsFromFourAddressesGiveAPhoneTheirSeat() {
        var seats = WebSeats()
        let stranger = (1...4).map { "192.168.1.\(60 + $0)" }
        let taken = fill(&seats, from: stranger, count: 8, upgrade: true)
        #expect(taken.count(where: { $0 != .refused }) == 16, "4 handshakes from each address, 16 in all")
        // The phone's WebSocket takes the oldest handshake of an address that holds four…
        let phoneConnects = seats.accept(100, from: phone)
        #expect(phoneConnects == .admitted(evicting: nil))
        guard case .admitted(let evicting?) = seats.upgrade(100) else {
            Issue.record("the phone's upgrade was refused")
            return
        }
        #expect(seats.stage(of: evicting) == nil && evicting < 32)
        // …and the stranger, reconnecting, cannot take it back: the phone holds one, he three.
        let strangerReconnects = seats.accept(101, from: stranger[0])
        #expect(strangerReconnects == .admitted(evicting: nil))
        let again = seats.upgrade(101)
        #expect(again == .refused || again != .admitted(evicting: 100))
        #expect(seats.stage(of: 100) == .handshake)
        let phoneOpens = seats.open(100)
        #expect(phoneOpens)
        #expect(seats.stage(of: 100) == .session)
    }

    @Test func slowConnectionsFromSixteenAddressesGiveAPhoneTheirSeat() {
        var seats = WebSeats()
        let stranger = (1...16).map { "10.0.0.\($0)" }
        let taken = fill(&seats, from: stranger, count: 20)
        #expect(taken.count(where: { $0 != .refused }) == 256, "16 from each address, 256 in all")
        guard case .admitted(let evicting?) = seats.accept(1_000, from: phone) else {
            Issue.record("the phone's connection was refused")
            return
        }
        #expect(evicting < 320)
        let phoneUpgrades = seats.upgrade(1_000)
        #expect(phoneUpgrades == .admitted(evicting: nil))
    }

    @Test func aPairedDevicesPageIsNeverUnseated() {
        var limits = WebSeats.Limits()
        limits.connections.total = 4
        var seats = WebSeats(limits: limits)
        for id in 0..<4 {
            let accepted = seats.accept(id, from: "192.168.1.\(id)")
            #expect(accepted == .admitted(evicting: nil))
            let upgraded = seats.upgrade(id)
            #expect(upgraded == .admitted(evicting: nil))
            let opened = seats.open(id)
            #expect(opened)
        }
        // Every seat is a paired page: a stranger gets none, from any address.
        let strangers = fill(&seats, from: ["10.0.0.1", "10.0.0.2"], count: 3, first: 10)
        #expect(strangers.allSatisfy { $0 == .refused })
        #expect((0..<4).allSatisfy { seats.stage(of: $0) == .session })
        // One closes: its seat is free again.
        seats.close(2)
        let afterClose = seats.accept(20, from: "10.0.0.1")
        #expect(afterClose == .admitted(evicting: nil))
    }

    @Test func oneAddressHoldsAtMostItsShare() {
        var seats = WebSeats()
        let connections = fill(&seats, from: [phone], count: 20)
        #expect(connections.count(where: { $0 != .refused }) == 16, "16 connections from one address")
        for id in 0..<20 { seats.close(id) }
        let webSockets = fill(&seats, from: [phone], count: 20, first: 100, upgrade: true)
        #expect(webSockets.count(where: { $0 != .refused }) == 4, "4 handshakes from one address")
    }

    @Test func sessionsAreCappedInAllAndPerAddress() {
        var seats = WebSeats()
        var opened = 0
        for id in 0..<12 {
            _ = seats.accept(id, from: phone)
            _ = seats.upgrade(id)
            if seats.open(id) { opened += 1 }
            if id % 4 == 3 { for done in (id - 3)...id where seats.stage(of: done) == .handshake { seats.close(done) } }
        }
        #expect(opened == 8, "8 pages from one address")
        // A session opens only from a handshake, once.
        let reopened = !seats.open(0)
        #expect(reopened)
        let other = seats.accept(50, from: "10.0.0.9")
        #expect(other == .admitted(evicting: nil))
        let notUpgraded = seats.open(50)
        let neverSeated = seats.open(999)
        #expect(!notUpgraded && !neverSeated)
    }
}
