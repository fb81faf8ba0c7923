import Testing

@testable import HuddleCore

/// Relaying between two peers that cannot reach each other (issue 22): two homes, a1 a2 in one,
/// b1 b2 in the other, a2 and b2 blocked both ways (a strict NAT), every other pair talking.
@Suite(.offThePool) struct MembershipRelayTests {
    static let a1 = 0, a2 = 1, b1 = 2, b2 = 3

    /// The two homes: 0.5 ms inside a home, 5 ms from a1 or a2 to b1 (the forwarded port), 20 ms
    /// from a1 to b2, a2 and b2 blocked. a2 and b1 name a1 as their seed, b2 names b1.
    static func homes() -> RelayNetwork {
        var network = RelayNetwork(count: 4)
        network.setDelay(a1, a2, .microseconds(500))
        network.setDelay(b1, b2, .microseconds(500))
        network.setDelay(a1, b1, .milliseconds(5))
        network.setDelay(a2, b1, .milliseconds(5))
        network.setDelay(a1, b2, .milliseconds(20))
        network.blocked = [[a2, b2]]
        network.nodes[a2].addSeed(network.addresses[a1])
        network.nodes[b1].addSeed(network.addresses[a1])
        network.nodes[b2].addSeed(network.addresses[b1])
        return network
    }

    @Test func aPairThatCannotMeetIsRoutedThroughTheCommonPeerWithTheLowerRoundTrip() {
        var network = Self.homes()
        network.run(until: .start + .seconds(15))
        let a2 = network.nodes[Self.a2], b2 = network.nodes[Self.b2]
        let b1ID = network.id(Self.b1)
        // Each is a peer of the other, alive, though not one datagram ever went between them.
        #expect(a2.peers[network.id(Self.b2)]?.state == .alive)
        #expect(b2.peers[network.id(Self.a2)]?.state == .alive)
        // Through b1 (5 + 0.5 ms each way), not a1 (0.5 + 20 ms), both ways.
        #expect(a2.route(to: network.id(Self.b2)) == .via(relay: b1ID, address: network.addresses[Self.b1]))
        #expect(b2.route(to: network.id(Self.a2)) == .via(relay: b1ID, address: network.addresses[Self.b1]))
        let throughB1 = a2.paths(of: network.id(Self.b2)).relays[b1ID]?.rtt ?? .max
        let throughA1 = a2.paths(of: network.id(Self.b2)).relays[network.id(Self.a1)]?.rtt ?? .max
        #expect(throughB1 < .milliseconds(13) && throughB1 >= .milliseconds(11), "through b1: \(throughB1)")
        #expect(throughA1 > throughB1, "through a1: \(throughA1)")
        #expect(a2.relayPath(to: network.id(Self.b2)).map { ($0.relay.nick, $0.roundTrip != nil) } ?? ("", false) == ("n2", true))
        #expect(network.routeChanges[Self.a2].last.map { $0.id == network.id(Self.b2) } == true)
        // Everyone else is reached directly.
        for (from, to) in [(Self.a1, Self.b2), (Self.a2, Self.b1), (Self.a1, Self.a2), (Self.b1, Self.b2)] {
            #expect(network.nodes[from].route(to: network.id(to)) == .direct(network.addresses[to]))
            #expect(network.nodes[to].route(to: network.id(from)) == .direct(network.addresses[from]))
        }
        // A push sent the way route(to:) says arrives, through b1, in two link delays.
        let chat = Event.fixture(network.id(Self.a2), 1, .chat(text: "through b1"))
        let sentAt = network.now
        network.sendRouted(.events([chat]), from: Self.a2, to: Self.b2)
        network.run(for: .milliseconds(20))
        #expect(network.eventsReceived[Self.b2].contains { $0.event == chat && $0.relay == b1ID })
        #expect(network.forwarded[Self.b1] > 0)
        _ = sentAt
    }

    @Test func theRouteIsTheFasterRelayAndMovesWhenThatRelayDies() {
        var network = Self.homes()
        network.run(until: .start + .seconds(15))
        // b1 stops answering anyone: a2 and b2 go through a1 within a few periods.
        network.blocked.formUnion([[Self.b1, Self.a1], [Self.b1, Self.a2], [Self.b1, Self.b2]])
        network.run(for: .seconds(5))
        let a1ID = network.id(Self.a1)
        #expect(network.nodes[Self.a2].route(to: network.id(Self.b2)) == .via(relay: a1ID, address: network.addresses[Self.a1]))
        #expect(network.nodes[Self.b2].route(to: network.id(Self.a2)) == .via(relay: a1ID, address: network.addresses[Self.a1]))
    }

    @Test func aRelayIsRefusedForAStrangerAndForWhatItMustNotCarry() throws {
        var network = Self.homes()
        network.run(until: .start + .seconds(15))
        let now = network.now
        let a2ID = network.id(Self.a2), b2ID = network.id(Self.b2)
        let probe = WireMessage.probe(
            Probe(from: a2ID, nick: "n1", incarnation: 1, sequence: 999, sentAt: now, port: 7400, rooms: ["superbowl"], peers: []))
        var b1 = network.nodes[Self.b1]
        let relay = RelayMessage(from: a2ID, to: b2ID, payload: probe.encoded())!
        #expect(b1.accept(relay, from: network.addresses[Self.a2], now: now) == .forward(to: network.addresses[Self.b2]))

        // A stranger: a key b1 never heard sign anything, or a2's id from another address.
        let mallory = NodeID.fixture(66)
        let fromMallory = WireMessage.probe(
            Probe(from: mallory, nick: "m", incarnation: 1, sequence: 1, sentAt: now, port: 7400, rooms: ["superbowl"], peers: []))
        let strangers = RelayMessage(from: mallory, to: b2ID, payload: fromMallory.encoded())!
        #expect(b1.accept(strangers, from: PeerAddress(host: "10.77.0.66", port: 7400), now: now) == .refuse(.stranger))
        #expect(b1.accept(relay, from: PeerAddress(host: "10.77.0.66", port: 7400), now: now) == .refuse(.stranger))
        // To a node b1 does not know, or to the requester itself, or to b1.
        let toNobody = RelayMessage(from: a2ID, to: mallory, payload: probe.encoded())!
        #expect(b1.accept(toNobody, from: network.addresses[Self.a2], now: now) == .refuse(.unknownTarget))
        let toItself = RelayMessage(from: a2ID, to: a2ID, payload: probe.encoded())!
        #expect(b1.accept(toItself, from: network.addresses[Self.a2], now: now) == .refuse(.misdirected))
        // Someone else's probe: a node relays only its own word.
        let b1sProbe = WireMessage.probe(
            Probe(from: network.id(Self.a1), nick: "n0", incarnation: 1, sequence: 5, sentAt: now, port: 7400, rooms: [], peers: []))
        let notItsOwn = RelayMessage(from: a2ID, to: b2ID, payload: b1sProbe.encoded())!
        #expect(b1.accept(notItsOwn, from: network.addresses[Self.a2], now: now) == .refuse(.notItsOwn))
        // An event of a room the two do not share.
        let elsewhere = RelayMessage(
            from: a2ID, to: b2ID, payload: WireMessage.events([Event.fixture(a2ID, 1, .chat(text: "hi"), room: "other")]).encoded())!
        #expect(b1.accept(elsewhere, from: network.addresses[Self.a2], now: now) == .refuse(.noSharedRoom))
        // A delivery from an address that is no live peer's.
        var b2 = network.nodes[Self.b2]
        let toB2 = RelayMessage(from: a2ID, to: b2ID, payload: probe.encoded())!
        #expect(b2.accept(toB2, from: PeerAddress(host: "10.77.0.66", port: 7400), now: now) == .refuse(.stranger))
        #expect(b2.accept(toB2, from: network.addresses[Self.b1], now: now)
            == .deliver(.message(probe), sender: a2ID, relay: network.id(Self.b1)))

        // A relay of a relay cannot be made or read, and a digest (which no one signs) cannot travel.
        #expect(RelayMessage(from: a2ID, to: b2ID, payload: relay.encoded()) == nil)
        var nested = relay.encoded()
        nested.replaceSubrange(70..., with: relay.encoded())
        nested[68] = UInt8(relay.encoded().count >> 8)
        nested[69] = UInt8(relay.encoded().count & 0xff)
        #expect(throws: WireError.self) { try RelayMessage(decoding: nested) }
        let digest = WireMessage.digest(RoomDigest(from: a2ID, room: "superbowl", vector: VersionVector()))
        #expect(RelayMessage(from: a2ID, to: b2ID, payload: digest.encoded()) == nil)

        // Bounded: a burst of 200 a second's worth, then the rate.
        var admitted = 0
        for _ in 0..<1_000 where b1.accept(relay, from: network.addresses[Self.a2], now: now) != .refuse(.overRate) {
            admitted += 1
        }
        #expect(admitted == 199)  // 200 in the bucket, one spent above
        #expect(b1.accept(relay, from: network.addresses[Self.a2], now: now + .milliseconds(10)) != .refuse(.overRate))
    }

    @Test func theDirectPathHealsWhenItWorksAgain() {
        var network = Self.homes()
        network.run(until: .start + .seconds(15))
        let a2ID = network.id(Self.a2), b2ID = network.id(Self.b2)
        #expect(network.nodes[Self.a2].route(to: b2ID) != .direct(network.addresses[Self.b2]))
        // The router reboots into a friendlier mood: a2 and b2 can talk.
        network.blocked = []
        let healedAt = network.now
        network.run(for: .seconds(3))
        #expect(network.nodes[Self.a2].route(to: b2ID) == .direct(network.addresses[Self.b2]))
        #expect(network.nodes[Self.b2].route(to: a2ID) == .direct(network.addresses[Self.a2]))
        #expect(network.routeChanges[Self.a2].last.map { $0.route == .direct(network.addresses[Self.b2]) } == true)
        #expect(network.nodes[Self.a2].relayPath(to: b2ID) == nil)
        _ = healedAt
        // Cut again: back through b1 by the end of the next period that probes b2 (one in three;
        // the one running at the cut had its answer in flight already), nobody suspected.
        network.blocked = [[Self.a2, Self.b2]]
        network.run(for: .seconds(4))
        let relays = [Self.a1, Self.b1].map { Route.via(relay: network.id($0), address: network.addresses[$0]) }
        #expect(relays.contains(network.nodes[Self.a2].route(to: b2ID)))
        #expect(network.nodes[Self.a2].peers[b2ID]?.state == .alive)
    }

    @Test func aNATRebindingIsFollowedToTheNewAddress() {
        var network = Self.homes()
        network.blocked = []
        network.run(until: .start + .seconds(10))
        // b2's router forgets its mapping and gives it another port: datagrams to the old die.
        network.addresses[Self.b2] = PeerAddress(host: network.addresses[Self.b2].host, port: 40_001)
        network.run(for: .seconds(3))
        for node in [Self.a1, Self.a2, Self.b1] {
            #expect(network.nodes[node].route(to: network.id(Self.b2)) == .direct(network.addresses[Self.b2]))
            #expect(network.nodes[node].peers[network.id(Self.b2)]?.state == .alive)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func onALossyLANWhereEveryoneMeetsTheRouteStaysMostlyDirect(seed: UInt64) {
        var network = Self.homes()
        network.blocked = []
        network.loss = 0.2
        network.random = SplitMix64(seed: seed)
        network.run(until: .start + .seconds(10))
        var relayed = 0, samples = 0
        for _ in 0..<600 {
            network.run(for: .milliseconds(100))
            for from in 0..<4 {
                for to in 0..<4 where to != from {
                    samples += 1
                    if network.nodes[from].route(to: network.id(to)).relay != nil { relayed += 1 }
                }
            }
        }
        let share = Double(relayed) / Double(samples)
        print("20 % loss, nobody blocked: a pair is routed through a relay \(Int(share * 1000)) ‰ of the time")
        #expect(share < 0.06)  // 1.9-3.0 % with these seeds: a period answered only through helpers, healed the next
    }
}
