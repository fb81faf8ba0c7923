import Testing

@testable import HuddleCore

/// A peer that changes its agreement key (a restart with a new one, or an attacker flipping
/// keys): round 3 found each flip kept for good (~0.35 kB) and a weak key said once per flip.
@Suite(.offThePool) struct DirectKeyChangeTests {
    func pair() -> (MachineLAN, alice: Int, bob: Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        return (lan, alice, bob)
    }

    func offer(_ key: [UInt8], on lan: inout MachineLAN, _ alice: Int, from bob: NodeID) {
        lan.on(alice) { $0.read(card: key, roomTags: [], rooms: [], of: bob, nick: "bob", now: $1) }
    }

    @Test func aPeerFlippingKeysLeavesOnlyTheLastRoomBehind() throws {
        var (lan, alice, bob) = pair()
        let bobID = lan[bob].machine.identity.id
        let before = lan[alice].machine.rooms.entries.count
        let first = try #require(lan[alice].machine.directRoom(with: bobID))
        #expect(!places(of: first, in: lan[alice].machine).isEmpty, "the walk finds a room it looks for")
        for _ in 0..<50 { offer(NodeIdentity.generate().agreementPublicKey, on: &lan, alice, from: bobID) }
        // A room not entered leaves with its key: nothing in the machine is keyed by it any more.
        #expect(places(of: first, in: lan[alice].machine) == [])
        #expect(lan[alice].machine.rooms.entries.count == before, "one direct room's entry, the last key's")
        let current = try #require(lan[alice].machine.directRoom(with: bobID))
        #expect(lan[alice].machine.rooms[entry: current].directPeer == bobID)
        #expect(lan[alice].machine.rooms[entry: current].key != nil)
    }

    @Test func aDirectRoomThisNodeIsInOutlivesTheKeyChange() throws {
        var (lan, alice, bob) = pair()
        let bobID = lan[bob].machine.identity.id
        _ = lan.on(alice) { $0.sendDirect(to: "bob", text: "psst", now: $1) }
        let entered = try #require(lan[alice].machine.directRoom(with: bobID))
        offer(NodeIdentity.generate().agreementPublicKey, on: &lan, alice, from: bobID)
        #expect(lan[alice].machine.directRoom(with: bobID) != entered)
        #expect(lan[alice].machine.rooms[entry: entered].key != nil, "its history stays readable")
    }

    @Test func aWeakKeyIsSaidOncePerPeerHoweverOftenItFlips() {
        var (lan, alice, bob) = pair()
        let bobID = lan[bob].machine.identity.id
        let weak: [[UInt8]] = [[1] + [UInt8](repeating: 0, count: 31), [0xE0, 0xEB, 0x7A, 0x7C, 0x3B, 0x41, 0xB8, 0xAE, 0x16, 0x56, 0xE3, 0xFA, 0xF1, 0x9F, 0xC4, 0x6A, 0xDA, 0x09, 0x8D, 0xEB, 0x9C, 0x32, 0xB1, 0xFD, 0x86, 0x62, 0x05, 0x16, 0x5F, 0x49, 0xB8, 0x00]]
        let said = lan[alice].said.count
        for n in 0..<10 { offer(weak[n % 2], on: &lan, alice, from: bobID) }
        #expect(lan[alice].said.count == said + 1)
        #expect(lan[alice].problems.last == .weakDirectKey(nick: "bob", peer: bobID))
        #expect(lan[alice].machine.counters.drops[.weakAgreementKey] == 10)
        #expect(lan[alice].machine.directRoom(with: bobID) == nil)
    }
}
