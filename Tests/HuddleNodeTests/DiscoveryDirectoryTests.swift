import HuddleCore
import Testing

@testable import HuddleNode

private typealias Directive = PeerDirectory.Directive

private let t0 = ContinuousClock.now
private func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .seconds(seconds) }

private let selfID = discoveryTestID(0x01)
private let bobID = discoveryTestID(0xb0)
private let bob = ServiceAdvertisement(id: bobID, nick: "bob", port: 7001, rooms: ["superbowl"])

private func sighting(_ instance: String = "bob (b0b0b0b0b0b0)", interface: UInt32 = 2) -> ServiceSighting {
    ServiceSighting(instance: instance, interface: interface, domain: "local.")
}

private func peer(
    _ ad: ServiceAdvertisement = bob, host: String = "192.0.2.12", instance: String = "bob (b0b0b0b0b0b0)"
) -> DiscoveredPeer {
    DiscoveredPeer(
        id: ad.id, nick: ad.nick, rooms: ad.rooms, protocolVersion: ad.protocolVersion, host: host, port: ad.port,
        instanceName: instance)
}

/// The events among some directives.
private func events(_ directives: [Directive]) -> [DiscoveryEvent] {
    directives.compactMap { if case .emit(let event) = $0 { event } else { nil } }
}

@Suite struct DiscoveryDirectoryTests {
    /// Browse → resolve → A record → found, the path every peer takes.
    private func found(
        _ directory: inout PeerDirectory, _ s: ServiceSighting = sighting(), ad: ServiceAdvertisement = bob,
        address: String = "192.0.2.12"
    ) -> [Directive] {
        var all = directory.browseAdded(s, now: at(0))
        all += directory.resolved(s, host: "h2.local.", port: ad.port, txt: ad.txtRecord(), now: at(0.5))
        all += directory.addressFound(s, family: .ipv4, address: address, now: at(0.6))
        return all
    }

    @Test func browseResolveAddressFound() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        #expect(directory.browseAdded(s, now: at(0)) == [.resolve(s)])
        let resolved = directory.resolved(s, host: "h2.local.", port: 7001, txt: bob.txtRecord(), now: at(0.5))
        #expect(resolved == [.queryAddress(s, host: "h2.local.", family: .ipv4)])
        let address = directory.addressFound(s, family: .ipv4, address: "192.0.2.12", now: at(0.6))
        #expect(address == [.cancelQuery(s), .emit(.found(peer()))])
        #expect(directory.peers[bobID] == peer())
    }

    @Test func sameInstanceOverTwoFamiliesIsOneSighting() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        _ = found(&directory, s)
        #expect(directory.browseAdded(s, now: at(1)) == [])  // IPv6 copy of the same browse result
        #expect(directory.browseRemoved(s, now: at(2)) == [])  // one family gone: still there
        let gone = directory.browseRemoved(s, now: at(2))
        #expect(gone == [.cancelResolve(s), .emit(.lost(bobID))])
        #expect(directory.peers.isEmpty)
    }

    @Test func twoInterfacesReportOnePeer() {
        var directory = PeerDirectory(ownID: selfID)
        let eth = sighting(interface: 2)
        let wifi = sighting(interface: 3)
        #expect(events(found(&directory, wifi, address: "198.51.100.7")) == [.found(peer(host: "198.51.100.7"))])
        // The lower interface wins; the change is reported once.
        #expect(events(found(&directory, eth)) == [.found(peer())])
        // Losing it falls back to the other, without a loss in between.
        #expect(events(directory.browseRemoved(eth, now: at(3))) == [.found(peer(host: "198.51.100.7"))])
        #expect(events(directory.browseRemoved(wifi, now: at(3))) == [.lost(bobID)])
    }

    @Test func ipv4IsPreferredOverIPv6() {
        var directory = PeerDirectory(ownID: selfID)
        let eth = sighting(interface: 2)
        let wifi = sighting(interface: 3)
        _ = directory.browseAdded(eth, now: at(0))
        _ = directory.resolved(eth, host: "h2.local.", port: 7001, txt: bob.txtRecord(), now: at(0))
        _ = directory.tick(now: at(2))  // no A record: ask for AAAA
        let v6 = directory.addressFound(eth, family: .ipv6, address: "fe80::1%eth0", now: at(2.1))
        #expect(events(v6) == [.found(peer(host: "fe80::1%eth0"))])
        #expect(events(found(&directory, wifi, address: "198.51.100.7")) == [.found(peer(host: "198.51.100.7"))])
    }

    @Test func ownAdvertisementIsIgnored() {
        var directory = PeerDirectory(ownID: selfID)
        let own = sighting("me (010101010101)")
        let ad = ServiceAdvertisement(id: selfID, nick: "me", port: 7000, rooms: [])
        _ = directory.browseAdded(own, now: at(0))
        let resolved = directory.resolved(own, host: "h1.local.", port: 7000, txt: ad.txtRecord(), now: at(0.5))
        #expect(resolved == [.ignore(own, .ownNode), .cancelResolve(own)])
        #expect(directory.browseAdded(own, now: at(1)) == [])  // not resolved again
        #expect(directory.peers.isEmpty)
    }

    @Test func invalidTXTIsIgnored() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        _ = directory.browseAdded(s, now: at(0))
        let resolved = directory.resolved(s, host: "h2.local.", port: 7001, txt: [3, 65, 66], now: at(0.5))
        #expect(resolved == [.ignore(s, .invalidTXT(.truncated(offset: 0))), .cancelResolve(s)])
        #expect(directory.peers.isEmpty)
    }

    @Test func txtChangeIsReportedAgain() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        _ = found(&directory, s)
        var moved = bob
        moved.rooms = ["superbowl", "nfl"]
        // Same host: reported at once with the known address, and the address asked again.
        let update = directory.resolved(s, host: "h2.local.", port: 7001, txt: moved.txtRecord(), now: at(5))
        #expect(update == [.queryAddress(s, host: "h2.local.", family: .ipv4), .emit(.found(peer(moved)))])
        // Same address again: nothing new.
        #expect(events(directory.addressFound(s, family: .ipv4, address: "192.0.2.12", now: at(5.1))) == [])
        // A TXT that turns invalid loses the peer.
        let broken = directory.resolved(s, host: "h2.local.", port: 7001, txt: [9], now: at(6))
        #expect(events(broken) == [.lost(bobID)])
    }

    @Test func newHostWaitsForItsAddress() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        _ = found(&directory, s)
        let moved = directory.resolved(s, host: "h3.local.", port: 7001, txt: bob.txtRecord(), now: at(5))
        #expect(events(moved) == [.lost(bobID)])
        let address = directory.addressFound(s, family: .ipv4, address: "192.0.2.13", now: at(5.1))
        #expect(events(address) == [.found(peer(host: "192.0.2.13"))])
    }

    @Test func addressFallsBackToAAAAThenGivesUpAndRetries() {
        let configuration = DiscoveryConfiguration()
        var directory = PeerDirectory(ownID: selfID, configuration: configuration)
        let s = sighting()
        _ = directory.browseAdded(s, now: at(0))
        _ = directory.resolved(s, host: "h2.local.", port: 7001, txt: bob.txtRecord(), now: at(0))
        #expect(directory.nextDeadline == at(0) + configuration.addressTimeout)
        #expect(directory.tick(now: at(1)) == [])
        #expect(directory.tick(now: at(2)) == [.queryAddress(s, host: "h2.local.", family: .ipv6)])
        // A late A answer is not what is asked for any more.
        #expect(directory.addressFound(s, family: .ipv4, address: "192.0.2.12", now: at(2.5)) == [])
        #expect(directory.tick(now: at(4)) == [.cancelQuery(s)])
        #expect(directory.nextDeadline == at(4) + configuration.retryDelay)
        #expect(directory.tick(now: at(19)) == [.queryAddress(s, host: "h2.local.", family: .ipv4)])
    }

    @Test func resolvesAreLimitedAndQueued() {
        var configuration = DiscoveryConfiguration()
        configuration.maxPendingResolves = 2
        var directory = PeerDirectory(ownID: selfID, configuration: configuration)
        let names = (0..<4).map { sighting("n\($0)") }
        #expect(directory.browseAdded(names[0], now: at(0)) == [.resolve(names[0])])
        #expect(directory.browseAdded(names[1], now: at(0)) == [.resolve(names[1])])
        #expect(directory.browseAdded(names[2], now: at(0)) == [])
        #expect(directory.browseAdded(names[3], now: at(0)) == [])
        // A failure frees a slot for the next in line, and is retried later.
        #expect(directory.resolveFailed(names[0], now: at(1)) == [.cancelResolve(names[0]), .resolve(names[2])])
        // A queued one that goes away never starts.
        _ = directory.browseRemoved(names[3], now: at(1))
        let answered = directory.resolved(names[1], host: "h.local.", port: 1, txt: bob.txtRecord(), now: at(1))
        #expect(!answered.contains(.resolve(names[3])))
        #expect(directory.tick(now: at(1) + configuration.retryDelay).contains(.resolve(names[0])))
    }

    @Test func pendingResolveTimesOut() {
        let configuration = DiscoveryConfiguration()
        var directory = PeerDirectory(ownID: selfID, configuration: configuration)
        let s = sighting()
        _ = directory.browseAdded(s, now: at(0))
        #expect(directory.nextDeadline == at(0) + configuration.resolveTimeout)
        #expect(directory.tick(now: at(0) + configuration.resolveTimeout) == [.cancelResolve(s)])
    }

    @Test func watchersAreLimited() {
        var configuration = DiscoveryConfiguration()
        configuration.maxWatchers = 1
        var directory = PeerDirectory(ownID: selfID, configuration: configuration)
        let first = sighting("a")
        let second = sighting("b")
        _ = directory.browseAdded(first, now: at(0))
        _ = directory.browseAdded(second, now: at(0))
        let kept = directory.resolved(first, host: "h.local.", port: 1, txt: bob.txtRecord(), now: at(0))
        #expect(!kept.contains(.cancelResolve(first)))
        let freed = directory.resolved(second, host: "h.local.", port: 1, txt: bob.txtRecord(), now: at(0))
        #expect(freed.contains(.cancelResolve(second)))
    }

    @Test func sightingsAreBounded() {
        var configuration = DiscoveryConfiguration()
        configuration.maxSightings = 3
        var directory = PeerDirectory(ownID: selfID, configuration: configuration)
        for index in 0..<3 { _ = directory.browseAdded(sighting("n\(index)"), now: at(0)) }
        let flood = sighting("n3")
        #expect(directory.browseAdded(flood, now: at(0)) == [.ignore(flood, .tooManySightings)])
        #expect(directory.sightingCount == 3)
    }

    @Test func resetLosesEveryPeer() {
        var directory = PeerDirectory(ownID: selfID)
        _ = found(&directory)
        let carol = ServiceAdvertisement(id: discoveryTestID(0xc0), nick: "carol", port: 7002, rooms: [])
        _ = found(&directory, sighting("carol"), ad: carol, address: "192.0.2.13")
        #expect(events(directory.reset()) == [.lost(bobID), .lost(carol.id)])
        #expect(directory.peers.isEmpty && directory.sightingCount == 0)
        // Found again after the daemon is back.
        #expect(events(found(&directory)) == [.found(peer())])
    }

    @Test func twoInstancesClaimingOneIDAreOnePeer() {
        var directory = PeerDirectory(ownID: selfID)
        let real = sighting("bob (b0b0b0b0b0b0)")
        let copy = sighting("zz copy")
        _ = found(&directory, real)
        #expect(events(found(&directory, copy, address: "192.0.2.99")) == [])
        let fallback = directory.browseRemoved(real, now: at(9))
        #expect(events(fallback) == [.found(peer(host: "192.0.2.99", instance: "zz copy"))])
    }

    @Test func staleRepliesAreIgnored() {
        var directory = PeerDirectory(ownID: selfID)
        let s = sighting()
        #expect(directory.resolved(s, host: "h.local.", port: 1, txt: bob.txtRecord(), now: at(0)) == [])
        #expect(directory.addressFound(s, family: .ipv4, address: "192.0.2.1", now: at(0)) == [])
        #expect(directory.resolveFailed(s, now: at(0)) == [])
        #expect(directory.browseRemoved(s, now: at(0)) == [])
    }
    // MARK: Alone (issue 47)

    @Test func nobodyFoundIsSaidOnceAfterAWhileWithWhetherTheNodeHeardItself() {
        var directory = PeerDirectory(ownID: selfID)
        directory.wentOnline(now: at(0))
        #expect(directory.nextDeadline == at(12))
        // Its own announcement comes back: mDNS works here.
        let own = sighting("alice (010101010101)")
        let me = ServiceAdvertisement(id: selfID, nick: "alice", port: 7000, rooms: ["superbowl"])
        _ = directory.browseAdded(own, now: at(0.2))
        _ = directory.resolved(own, host: "h1.local.", port: 7000, txt: me.txtRecord(), now: at(0.3))
        #expect(events(directory.tick(now: at(11.9))) == [])
        #expect(events(directory.tick(now: at(12))) == [.alone(ownAnnouncementSeen: true)])
        // Once a run: going off and on again (the daemon restarted) says nothing more.
        _ = directory.reset()
        directory.wentOnline(now: at(20))
        #expect(events(directory.tick(now: at(40))) == [])
    }

    @Test func aNodeThatNeverHearsItselfIsToldSo() {
        var directory = PeerDirectory(ownID: selfID)
        directory.wentOnline(now: at(0))
        #expect(events(directory.tick(now: at(12))) == [.alone(ownAnnouncementSeen: false)])
    }

    @Test func someoneFoundInTimeMeansNothingIsSaid() {
        var directory = PeerDirectory(ownID: selfID)
        directory.wentOnline(now: at(0))
        _ = found(&directory)
        #expect(directory.nextDeadline == nil)
        #expect(events(directory.tick(now: at(30))) == [])
    }

    /// Nobody found: every 30 s the browse starts again (a new browse asks the network at once),
    /// and what it reports comes in afresh; once a peer is found, it is left alone.
    @Test func whileNobodyIsFoundTheBrowseStartsAgainEvery30Seconds() {
        var directory = PeerDirectory(ownID: selfID)
        directory.wentOnline(now: at(0))
        let stranger = sighting("carol (c0c0c0c0c0c0)")
        #expect(directory.browseAdded(stranger, now: at(25)) == [.resolve(stranger)])
        #expect(!directory.tick(now: at(29.9)).contains(.restartBrowse))
        #expect(directory.nextDeadline != nil)
        #expect(directory.tick(now: at(30)).contains(.restartBrowse))
        // Its resolve freed and the sighting forgotten: the new browse reports it as new.
        #expect(directory.browseRestarted() == [.cancelResolve(stranger)])
        #expect(directory.sightingCount == 0)
        #expect(directory.browseAdded(stranger, now: at(30.1)) == [.resolve(stranger)])
        #expect(directory.tick(now: at(60)).contains(.restartBrowse))

        _ = found(&directory)
        #expect(!directory.tick(now: at(90)).contains(.restartBrowse))
        #expect(!directory.tick(now: at(120)).contains(.restartBrowse))
    }
}
