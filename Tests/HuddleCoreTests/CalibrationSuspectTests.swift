import Testing

@testable import HuddleCore

/// Marks you can trust: one stray key never moves an offset, a second mark confirms a real
/// step, and `/unmark` takes a mark back on every node alike.
@Suite(.offThePool) struct CalibrationSuspectTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)

    /// alice and bob mark kickoff and the first quarter's end; bob is 3 s behind.
    func calibrated() -> CalibrationRoomScript {
        var room = CalibrationRoomScript()
        room.mark(alice, "kickoff", at: .epoch + .seconds(100))
        room.mark(bob, "kickoff", at: .epoch + .seconds(103))
        room.mark(alice, "end of q1", at: .epoch + .seconds(400))
        room.mark(bob, "end of q1", at: .epoch + .seconds(403))
        return room
    }

    @Test func aStrayMarkNinetySecondsOffMovesNoOffset() throws {
        var room = calibrated()
        // bob presses Ctrl-T by accident: "first down" is marked 1.5 minutes before it shows
        // on his stream; alice marks it when it happens.
        room.mark(bob, "first down", at: .epoch + .seconds(430))
        room.mark(alice, "first down", at: .epoch + .seconds(517))
        let calibration = room.calibration
        #expect(calibration.offset(of: bob) == .seconds(3))
        #expect(calibration.placement(of: bob)?.steps == 0)
        #expect(calibration.suspects == [Calibration.SuspectMark(node: bob, label: "first down", at: .epoch + .seconds(430))])
    }

    @Test func aSecondMarkConfirmsAStep() throws {
        var room = calibrated()
        // bob's stream rebuffers and falls 4 s further behind.
        room.mark(alice, "first down", at: .epoch + .seconds(500))
        room.mark(bob, "first down", at: .epoch + .seconds(507))
        #expect(room.calibration.offset(of: bob) == .seconds(3), "one mark alone is a suspect")
        #expect(room.calibration.suspects.map(\.label) == ["first down"])
        room.mark(alice, "field goal", at: .epoch + .seconds(600))
        room.mark(bob, "field goal", at: .epoch + .seconds(607))
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .seconds(7) && placement.steps == 1)
        #expect(room.calibration.suspects.isEmpty)
    }

    @Test func aStrayMarkBetweenGoodOnesStaysSetAside() throws {
        var room = calibrated()
        room.mark(bob, "first down", at: .epoch + .seconds(430))  // 87 s early
        room.mark(alice, "first down", at: .epoch + .seconds(517))
        room.mark(alice, "field goal", at: .epoch + .seconds(600))
        room.mark(bob, "field goal", at: .epoch + .seconds(603))
        room.mark(alice, "half time", at: .epoch + .seconds(900))
        room.mark(bob, "half time", at: .epoch + .seconds(903))
        let calibration = room.calibration
        #expect(calibration.offset(of: bob) == .seconds(3))
        #expect(calibration.placement(of: bob)?.steps == 0)
        #expect(calibration.suspects.map(\.label) == ["first down"])
    }

    @Test func withThreeViewersTheOneWhoseMarkDisagreesIsSetAside() throws {
        var room = calibrated()
        room.mark(carol, "kickoff", at: .epoch + .seconds(101))
        room.mark(carol, "end of q1", at: .epoch + .seconds(401))
        room.mark(alice, "first down", at: .epoch + .seconds(517))
        room.mark(carol, "first down", at: .epoch + .seconds(518))
        room.mark(bob, "first down", at: .epoch + .seconds(430))
        let calibration = room.calibration
        #expect(calibration.suspects.map(\.node) == [bob])
        #expect(calibration.offset(of: bob) == .seconds(3))
        #expect(calibration.offset(of: carol) == .seconds(1))
    }

    @Test func unmarkTakesAMarkBackAndALaterMarkCountsAgain() throws {
        var room = calibrated()
        room.mark(alice, "first down", at: .epoch + .seconds(500))
        room.mark(bob, "first down", at: .epoch + .seconds(504))  // 1 s off: not a suspect, but bob knows better
        #expect(room.calibration.offset(of: bob) != .seconds(3))
        room.add(bob, .unmark(label: "First Down"), at: .epoch + .seconds(505))
        #expect(room.calibration.offset(of: bob) == .seconds(3))
        room.mark(bob, "first down", at: .epoch + .seconds(503))
        #expect(room.calibration.offset(of: bob) == .seconds(3))
        room.add(bob, .unmark(label: "kickoff"), at: .epoch + .seconds(600))
        room.add(bob, .unmark(label: "end of q1"), at: .epoch + .milliseconds(600_001))
        room.add(bob, .unmark(label: "first down"), at: .epoch + .milliseconds(600_002))
        #expect(room.calibration.isCalibrated(bob) == false, "every mark taken back: nothing links bob")
    }

    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func suspectsAndRetractionsAreTheSameInEveryArrivalOrder(seed: UInt64) {
        var room = calibrated()
        room.mark(carol, "kickoff", at: .epoch + .seconds(101))
        room.mark(bob, "first down", at: .epoch + .seconds(430))
        room.mark(alice, "first down", at: .epoch + .seconds(517))
        room.mark(carol, "first down", at: .epoch + .seconds(518))
        room.mark(carol, "field goal", at: .epoch + .seconds(600))
        room.add(carol, .unmark(label: "field goal"), at: .epoch + .milliseconds(600_500))
        room.mark(alice, "field goal", at: .epoch + .seconds(599))
        let expected = room.calibration
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20 {
            #expect(CalibrationSolver.solve(room.events.shuffled(using: &rng)) == expected)
        }
    }
}
