import Testing

@testable import HuddleCore

/// Nicks are free text: members who share one are shown with the start of their id.
@Suite(.offThePool) struct MemberNickTests {
    let reader = NodeIdentity.generate()
    let alice = NodeIdentity.generate()
    let mallory = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    func join(_ who: NodeIdentity, as nick: String, seq: UInt64 = 1, into room: inout RoomSession) {
        _ = room.receive(who.event(seq, .join(nick: nick), at: base, for: room), now: base)
    }

    @Test func twoMembersWithOneNickAreBothShownWithTheirIDs() {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        join(alice, as: "alice", into: &room)
        #expect(room.member(alice.id).displayName == "alice")
        join(mallory, as: "alice", into: &room)
        #expect(room.member(alice.id).displayName == "alice#\(alice.id.hex.prefix(8))")
        #expect(room.member(mallory.id).displayName == "alice#\(mallory.id.hex.prefix(8))")
        // Mallory takes another nick: alice is alone with hers again.
        join(mallory, as: "mallory", seq: 2, into: &room)
        #expect(room.member(alice.id).displayName == "alice")
    }

    @Test func aNickFirstSeenWithAnotherNodeMarksTheNewcomerOnly() {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        room.knownNicks = ["alice": alice.id]
        join(mallory, as: "alice", into: &room)
        #expect(room.member(mallory.id).sharesNick)
        #expect(room.member(mallory.id).displayName == "alice#\(mallory.id.hex.prefix(8))")
        join(alice, as: "alice", into: &room)
        #expect(room.member(alice.id).displayName == "alice#\(alice.id.hex.prefix(8))")
    }

    @Test func aNickWithAHashOfItsOwnAlwaysShowsTheID() {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        join(mallory, as: "alice#\(alice.id.hex.prefix(8))", into: &room)
        #expect(room.member(mallory.id).displayName == "alice#\(alice.id.hex.prefix(8))#\(mallory.id.hex.prefix(8))")
    }
}
