import Testing

@testable import HuddleCore

/// Offsets are functions of time: a pause, a nudge or a step changes a node's offset from its
/// moment on, so a message's game moment is fixed when it is written, whatever comes later.
@Suite(.offThePool) struct CalibrationOverTimeTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)

    /// alice and bob mark kickoff, bob 3 s behind; then both chat.
    func kickoff() -> CalibrationRoomScript {
        var room = CalibrationRoomScript()
        room.mark(alice, "kickoff", at: .epoch + .seconds(10))
        room.mark(bob, "kickoff", at: .epoch + .seconds(13))
        return room
    }

    @Test func aNudgeMovesTheOffsetFromItsMomentOnOnly() throws {
        var room = kickoff()
        room.nudge(bob, 4_000, at: .epoch + .seconds(30))  // bob paused 4 s and resumed at 30 000
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .seconds(7))
        #expect(placement.offset(at: .epoch + .milliseconds(29_999)) == .seconds(3))
        #expect(placement.offset(at: .epoch + .seconds(30)) == .seconds(7))
        #expect(placement.timeline == [.init(from: .distantPast, offset: .seconds(3)), .init(from: .epoch + .seconds(30), offset: .seconds(7))])
    }

    @Test func historyKeepsItsOrderAfterAPauseANudgeAndAStep() throws {
        var room = kickoff()
        // alice writes at her 20 000 (game 20 000); bob answers 3 s later on his stream: his
        // 26 000 is game 23 000. Their order in the game: alice, then bob.
        let here = room.add(alice, .chat(text: "here we go!"), at: .epoch + .seconds(20))
        let year = room.add(bob, .chat(text: "this is the year"), at: .epoch + .seconds(26))
        let before = room.calibration
        #expect(before.historyOrder([year, here]) == [here, year])
        #expect(before.gameTime(of: year) == .epoch + .seconds(23))

        // bob pauses 4 s (a nudge at his resume), then nudges another second.
        room.nudge(bob, 4_000, at: .epoch + .seconds(40))
        room.nudge(bob, 1_000, at: .epoch + .seconds(50))
        // Then his stream rebuffers: from his marks of moments 1–3 on he is 11 s behind, 3 s
        // more than his kickoff and the pause and nudge (8 s) say.
        for (i, at) in [60_000, 80_000, 100_000].enumerated() {
            room.mark(alice, "moment \(i)", at: .milliseconds(sinceEpoch: Int64(at)))
            room.mark(bob, "moment \(i)", at: .milliseconds(sinceEpoch: Int64(at) + 11_000))
        }
        let after = room.calibration
        #expect(after.offset(of: bob) == .seconds(11))
        #expect(after.placement(of: bob)?.steps == 1)
        // Nothing written before moved.
        #expect(after.gameTime(of: year) == .epoch + .seconds(23))
        #expect(after.gameTime(of: here) == .epoch + .seconds(20))
        #expect(after.historyOrder([year, here]) == [here, year])
        // A message bob writes now is placed by his offset now.
        let now = room.add(bob, .chat(text: "after the rebuffer"), at: .epoch + .seconds(120))
        #expect(room.calibration.gameTime(of: now) == .epoch + .seconds(109))
    }

    @Test func aMessageHeldForTheReaderIsDueAtItsGameMomentOnTheReadersStreamNow() throws {
        var room = kickoff()
        let cheer = room.add(alice, .chat(text: "TOUCHDOWN"), at: .epoch + .seconds(30))
        #expect(room.calibration.dueTime(of: cheer, for: bob) == .epoch + .seconds(33))
        // bob pauses 2 s before it is due: he reaches alice's moment 2 s later.
        room.nudge(bob, 2_000, at: .epoch + .seconds(32))
        #expect(room.calibration.dueTime(of: cheer, for: bob) == .epoch + .seconds(35))
        // alice's own game moment did not move, and bob's message from before the pause neither.
        #expect(room.calibration.gameTime(of: cheer) == .epoch + .seconds(30))
    }

    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func gameMomentsAreTheSameInEveryArrivalOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var room = CalibrationRoomScript()
        var messages: [Event] = []
        for i in 0..<8 {
            let moment = Int64(i) * 20_000 + 100_000
            room.mark(alice, "m\(i)", at: .milliseconds(sinceEpoch: moment + Int64(rng.next() % 300)))
            room.mark(bob, "m\(i)", at: .milliseconds(sinceEpoch: moment + (i < 4 ? 3_000 : 7_000) + Int64(rng.next() % 300)))
            room.mark(carol, "m\(i)", at: .milliseconds(sinceEpoch: moment - 2_000 + Int64(rng.next() % 300)))
            if i == 2 { room.nudge(carol, 1_500, at: .milliseconds(sinceEpoch: moment + 5_000)) }
            for node in [alice, bob, carol] {
                messages.append(room.add(node, .chat(text: "\(i)"), at: .milliseconds(sinceEpoch: moment + 10_000 + Int64(rng.next() % 5_000))))
            }
        }
        let expected = room.calibration
        let order = expected.historyOrder(messages)
        for _ in 0..<20 {
            let shuffled = room.events.shuffled(using: &rng)
            let calibration = CalibrationSolver.solve(shuffled)
            #expect(calibration == expected)
            #expect(calibration.historyOrder(messages.shuffled(using: &rng)) == order)
        }
    }
}
