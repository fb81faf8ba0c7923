import Testing

@testable import HuddleCore

/// What the reader is told when a friend announced on the network cannot be reached, or when
/// nobody announces at all (issue 47): said once, with which way datagrams got through.
@Suite struct NodeMachineReachabilityTests {
    private func unanswered(_ host: MachineLAN.Host) -> [Unanswered] {
        host.notices.compactMap { if case .unanswered(let peer) = $0 { peer } else { nil } }
    }

    /// Each finds the other by mDNS; `lan.blockedOneWay` decides what gets through.
    private func announced(_ lan: inout MachineLAN, _ a: Int, _ b: Int) {
        for (from, to) in [(a, b), (b, a)] {
            let other = lan[to]
            lan.on(from) { machine, now in
                machine.handle(
                    .discovered(
                        id: other.machine.identity.id, nick: other.machine.nick, address: other.address,
                        rooms: other.machine.membership.rooms),
                    now: now)
            }
        }
        lan.deliverAll()
    }

    @Test func aFirewallOnBobsComputerIsNamedOnAlicesAndEitherOnBobsOnce() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.blockedOneWay = [[alice, bob]]  // bob's firewall drops what alice sends
        announced(&lan, alice, bob)
        for _ in 0..<60 { lan.advance(.seconds(1)) }

        // alice hears bob's probes but bob never answers hers: the firewall is on bob's side.
        #expect(unanswered(lan[alice]) == [Unanswered(nick: "bob", address: lan[bob].address, heardFrom: true, ownPort: 7400)])
        // bob hears nothing of alice's: either side, or the Wi-Fi.
        #expect(unanswered(lan[bob]) == [Unanswered(nick: "alice", address: lan[alice].address, heardFrom: false, ownPort: 7400)])

        // Announced again (a TXT change, avahi restarting): nothing new is said.
        announced(&lan, alice, bob)
        for _ in 0..<30 { lan.advance(.seconds(1)) }
        #expect(unanswered(lan[alice]).count == 1 && unanswered(lan[bob]).count == 1)

        // The rule is gone: they find each other and chat, and nothing more is said.
        lan.blockedOneWay = []
        for _ in 0..<40 { lan.advance(.seconds(1)) }
        lan.on(alice) { machine, now in _ = machine.say("there you are", inRoomNamed: "superbowl", now: now) }
        lan.deliverAll()
        #expect(lan[bob].messages == ["there you are"])
        #expect(unanswered(lan[alice]).count == 1 && unanswered(lan[bob]).count == 1)
    }

    @Test func aPeerThatAnswersIsNeverCalledUnanswered() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        announced(&lan, alice, bob)
        for _ in 0..<30 { lan.advance(.seconds(1)) }
        #expect(unanswered(lan[alice]).isEmpty && unanswered(lan[bob]).isEmpty)
        // Gone later (its laptop closed) after answering: gone, not unanswered.
        lan.blocked = [[alice, bob]]
        for _ in 0..<30 { lan.advance(.seconds(1)) }
        #expect(unanswered(lan[alice]).isEmpty && unanswered(lan[bob]).isEmpty)
    }

    @Test func aNodeOfAnotherProtocolIsNamedOnceWithWhoShouldUpdateAndNeverBecomesAPeer() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let old = NodeIdentity.generate().id
        let address = PeerAddress(host: "192.0.2.40", port: 7400)
        let ours = Int(WireProtocol.version)
        for _ in 0..<3 {
            lan.on(alice) { machine, now in
                machine.handle(
                    .discovered(id: old, nick: "bob", address: address, rooms: ["superbowl"], protocolVersion: ours - 1),
                    now: now)
            }
            lan.advance(.seconds(1))
        }
        let told = lan[alice].notices.filter { if case .otherProtocol = $0 { true } else { false } }
        #expect(told == [.otherProtocol(nick: "bob", address: address, theirs: ours - 1, ours: ours)])
        #expect(lan[alice].machine.membership.peers[old] == nil)
        // Nor is it later called unanswered: it was told of already.
        for _ in 0..<20 { lan.advance(.seconds(1)) }
        #expect(unanswered(lan[alice]).isEmpty)
    }

    @Test func nobodyAnnouncedIsSaidOnlyToANodeWithNoPeers() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        lan.on(alice) { machine, now in machine.handle(.nobodyAnnounced(ownAnnouncementSeen: true), now: now) }
        #expect(lan[alice].notices.contains(.alone(rooms: ["superbowl"], mdnsWorks: true)))

        // carol came in through --peer (or found alice herself): not alone, nothing said.
        var other = MachineLAN()
        let carol = other.add("carol")
        let dave = other.add("dave")
        other.introduceAll()
        other.on(carol) { machine, now in machine.handle(.nobodyAnnounced(ownAnnouncementSeen: false), now: now) }
        #expect(!other[carol].notices.contains { if case .alone = $0 { true } else { false } })
        _ = dave
    }
}
