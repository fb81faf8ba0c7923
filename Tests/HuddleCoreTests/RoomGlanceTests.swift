import HuddleCore
import Testing

@testable import HuddleCore

/// The status line and `/who`, from a room's session alone: no node, no socket, no clock.
@Suite struct RoomGlanceTests {
    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// bob's room: alice marked kickoff at base + 1 s, bob 3 s later; alice's cheer is held.
    func bobsRoom() throws -> RoomSession {
        var room = RoomSession(room: "superbowl", reader: bob.id)
        var alices = RoomSession(room: "superbowl", reader: alice.id)
        func aliceSays(_ body: EventBody, at: WallTime) throws {
            _ = room.receive(try alices.compose(body, now: at, signer: alice).event, now: at)
        }
        try aliceSays(.join(nick: "alice"), at: base)
        _ = try room.compose(.join(nick: "bob"), now: base, signer: bob)
        try aliceSays(.mark(label: "kickoff"), at: base + .seconds(1))
        _ = try room.compose(.mark(label: "kickoff"), now: base + .seconds(4), signer: bob)
        try aliceSays(.chat(text: "TOUCHDOWN"), at: base + .seconds(10))
        return room
    }

    @Test func theStatusLineSaysWhereTheStreamStandsAndCountsNoSpoilers() throws {
        var view = RoomGlance.View(session: try bobsRoom(), label: "superbowl", alivePeers: 1)
        // alice's cheer is held: nothing on the line says so, or when it comes.
        #expect(RoomGlance.statusLine(of: view, pausedAt: nil, now: base + .milliseconds(10_500))
            == "superbowl · 1 peer · you: 3.0 s behind alice")
        var paused = view
        paused.pausedAt = base + .milliseconds(8_500)
        #expect(RoomGlance.statusLine(of: paused, pausedAt: paused.pausedAt, now: base + .milliseconds(10_500))
            == "superbowl · 1 peer · you: 3.0 s behind alice · paused 0:02")
        // Unless the viewer asked for the count (--show-waiting).
        view.showWaiting = true
        #expect(RoomGlance.statusLine(of: view, pausedAt: nil, now: base + .milliseconds(10_500))
            == "superbowl · 1 peer · you: 3.0 s behind alice · 1 waiting, next in 3 s")
        #expect(RoomGlance.statusLine(of: nil, pausedAt: nil, now: base) == "not in a room: /join ROOM")
    }

    @Test func whoListsEachMemberFromTheReadersStream() throws {
        let view = RoomGlance.View(
            session: try bobsRoom(), label: "superbowl", alivePeers: 1, peerStates: [alice.id: .suspect])
        #expect(RoomGlance.who(in: view) == """
            in superbowl:
              alice: 3.0 s ahead of you [suspect]
              bob (you): calibrated
            """)
    }
}
