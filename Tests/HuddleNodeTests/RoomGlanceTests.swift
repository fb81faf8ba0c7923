import HuddleCore
import Testing

@testable import HuddleCore
@testable import HuddleNode

/// The status line and `/who` in words, from a room's session alone: no node, no socket, no clock.
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
        var view = RoomGlance(session: try bobsRoom(), label: "superbowl", alivePeers: 1)
        // alice's cheer is held: nothing on the line says so, or when it comes.
        #expect(RoomGlance.statusLine(of: StatusGlance(room: view, pausedAt: nil, now: base + .milliseconds(10_500)))
            == "superbowl · 1 peer · you: 3.0 s behind alice")
        var paused = view
        paused.pausedAt = base + .milliseconds(8_500)
        #expect(RoomGlance.statusLine(of: StatusGlance(room: paused, pausedAt: paused.pausedAt, now: base + .milliseconds(10_500)))
            == "superbowl · 1 peer · you: 3.0 s behind alice · paused 0:02")
        // Unless the viewer asked for the count (--show-waiting).
        view.showWaiting = true
        #expect(RoomGlance.statusLine(of: StatusGlance(room: view, pausedAt: nil, now: base + .milliseconds(10_500)))
            == "superbowl · 1 peer · you: 3.0 s behind alice · 1 waiting, next in 3 s")
        #expect(RoomGlance.statusLine(of: StatusGlance(room: nil, pausedAt: nil, now: base)) == "not in a room: /join ROOM")
    }

    /// alice, bob and carol marked kickoff at 1 s, 4 s and -1 s on their streams: carol is 2 s
    /// ahead of alice, bob 3 s behind her. Each line is read from its own viewer's stream.
    @Test func theStatusLineSaysWhoIsAheadOfTheViewerWhoeverMarkedFirst() throws {
        let carol = NodeIdentity.generate()
        func room(reader: NodeIdentity, bobMarksFirst: Bool) throws -> RoomSession {
            var room = RoomSession(room: "superbowl", reader: reader.id)
            var writers = [alice.id: RoomSession(room: "superbowl", reader: alice.id),
                           bob.id: RoomSession(room: "superbowl", reader: bob.id),
                           carol.id: RoomSession(room: "superbowl", reader: carol.id)]
            func says(_ who: NodeIdentity, _ body: EventBody, at: WallTime) throws {
                let event = try writers[who.id]!.compose(body, now: at, signer: who).event
                _ = room.receive(event, now: at)
            }
            for (who, nick) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] { try says(who, .join(nick: nick), at: base) }
            let marks = [(alice, base + .seconds(1)), (bob, base + .seconds(4)), (carol, base - .seconds(1))]
            for (who, at) in bobMarksFirst ? marks.reversed() : marks { try says(who, .mark(label: "kickoff"), at: at) }
            return room
        }
        for bobMarksFirst in [false, true] {
            func line(_ reader: NodeIdentity) throws -> String {
                let view = RoomGlance(session: try room(reader: reader, bobMarksFirst: bobMarksFirst), label: "superbowl", alivePeers: 2)
                return RoomGlance.statusLine(of: StatusGlance(room: view, pausedAt: nil, now: base + .seconds(10)))
            }
            #expect(try line(carol) == "superbowl · 2 peers · you: ahead of everyone, bob 5.0 s behind")
            #expect(try line(alice) == "superbowl · 2 peers · you: 2.0 s behind carol")
            #expect(try line(bob) == "superbowl · 2 peers · you: 5.0 s behind carol")
        }
    }

    @Test func aPeerWhoIsGoneIsNotWhereTheViewersStreamStands() throws {
        // alice quit (gone): bob's line no longer measures his stream against hers (issue 43).
        let view = RoomGlance(session: try bobsRoom(), label: "superbowl", alivePeers: 0, peerStates: [alice.id: .gone])
        #expect(RoomGlance.statusLine(of: StatusGlance(room: view, pausedAt: nil, now: base + .seconds(20)))
            == "superbowl · 0 peers · you: placed")
    }

    @Test func aPagesStatusLineLeavesTheRoomAndTheScoreToThePage() throws {
        var room = try bobsRoom()
        _ = try room.compose(.score(home: 7, guest: 3), now: base + .seconds(12), signer: bob)
        let view = RoomGlance(session: room, label: "superbowl", alivePeers: 1)
        let status = StatusGlance(room: view, pausedAt: nil, now: base + .seconds(12))
        #expect(RoomGlance.statusLine(of: status) == "superbowl · 1 peer · you: 3.0 s behind alice · 7–3")
        #expect(RoomGlance.statusLine(of: status, roomAndScore: false) == "1 peer · you: 3.0 s behind alice")
    }

    @Test func whoListsEachMemberFromTheReadersStream() throws {
        let view = RoomGlance(
            session: try bobsRoom(), label: "superbowl", alivePeers: 1, peerStates: [alice.id: .suspect])
        #expect(RoomGlance.who(in: view) == """
            in superbowl:
              alice: 3.0 s ahead of you [suspect]
              bob (you): calibrated
            """)
    }
}
