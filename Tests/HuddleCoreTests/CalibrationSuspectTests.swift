import Testing

@testable import HuddleCore

/// Marks you can trust: one stray key never moves an offset, a second mark confirms a real
/// step, and `/unmark` takes a mark back on every node alike.
@Suite struct CalibrationSuspectTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)

    /// alice and bob mark kickoff and the first quarter's end; bob is 3 s behind.
    func calibrated() -> CalibrationRoomScript {
        var room = CalibrationRoomScript()
        room.mark(alice, "kickoff", at: 100_000)
        room.mark(bob, "kickoff", at: 103_000)
        room.mark(alice, "end of q1", at: 400_000)
        room.mark(bob, "end of q1", at: 403_000)
        return room
    }

    @Test func aStrayMarkNinetySecondsOffMovesNoOffset() throws {
        var room = calibrated()
        // bob presses Ctrl-T by accident: "first down" is marked 1.5 minutes before it shows
        // on his stream; alice marks it when it happens.
        room.mark(bob, "first down", at: 430_000)
        room.mark(alice, "first down", at: 517_000)
        let calibration = room.calibration
        #expect(calibration.offset(of: bob) == 3_000)
        #expect(calibration.placement(of: bob)?.steps == 0)
        #expect(calibration.suspects == [Calibration.SuspectMark(node: bob, label: "first down", at: 430_000)])
    }

    @Test func aSecondMarkConfirmsAStep() throws {
        var room = calibrated()
        // bob's stream rebuffers and falls 4 s further behind.
        room.mark(alice, "first down", at: 500_000)
        room.mark(bob, "first down", at: 507_000)
        #expect(room.calibration.offset(of: bob) == 3_000, "one mark alone is a suspect")
        #expect(room.calibration.suspects.map(\.label) == ["first down"])
        room.mark(alice, "field goal", at: 600_000)
        room.mark(bob, "field goal", at: 607_000)
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == 7_000 && placement.steps == 1)
        #expect(room.calibration.suspects.isEmpty)
    }

    @Test func aStrayMarkBetweenGoodOnesStaysSetAside() throws {
        var room = calibrated()
        room.mark(bob, "first down", at: 430_000)  // 87 s early
        room.mark(alice, "first down", at: 517_000)
        room.mark(alice, "field goal", at: 600_000)
        room.mark(bob, "field goal", at: 603_000)
        room.mark(alice, "half time", at: 900_000)
        room.mark(bob, "half time", at: 903_000)
        let calibration = room.calibration
        #expect(calibration.offset(of: bob) == 3_000)
        #expect(calibration.placement(of: bob)?.steps == 0)
        #expect(calibration.suspects.map(\.label) == ["first down"])
    }

    @Test func withThreeViewersTheOneWhoseMarkDisagreesIsSetAside() throws {
        var room = calibrated()
        room.mark(carol, "kickoff", at: 101_000)
        room.mark(carol, "end of q1", at: 401_000)
        room.mark(alice, "first down", at: 517_000)
        room.mark(carol, "first down", at: 518_000)
        room.mark(bob, "first down", at: 430_000)
        let calibration = room.calibration
        #expect(calibration.suspects.map(\.node) == [bob])
        #expect(calibration.offset(of: bob) == 3_000)
        #expect(calibration.offset(of: carol) == 1_000)
    }

    @Test func unmarkTakesAMarkBackAndALaterMarkCountsAgain() throws {
        var room = calibrated()
        room.mark(alice, "first down", at: 500_000)
        room.mark(bob, "first down", at: 504_000)  // 1 s off: not a suspect, but bob knows better
        #expect(room.calibration.offset(of: bob) != 3_000)
        room.add(bob, .unmark(label: "First Down"), at: 505_000)
        #expect(room.calibration.offset(of: bob) == 3_000)
        room.mark(bob, "first down", at: 503_000)
        #expect(room.calibration.offset(of: bob) == 3_000)
        room.add(bob, .unmark(label: "kickoff"), at: 600_000)
        room.add(bob, .unmark(label: "end of q1"), at: 600_001)
        room.add(bob, .unmark(label: "first down"), at: 600_002)
        #expect(room.calibration.isCalibrated(bob) == false, "every mark taken back: nothing links bob")
    }

    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func suspectsAndRetractionsAreTheSameInEveryArrivalOrder(seed: UInt64) {
        var room = calibrated()
        room.mark(carol, "kickoff", at: 101_000)
        room.mark(bob, "first down", at: 430_000)
        room.mark(alice, "first down", at: 517_000)
        room.mark(carol, "first down", at: 518_000)
        room.mark(carol, "field goal", at: 600_000)
        room.add(carol, .unmark(label: "field goal"), at: 600_500)
        room.mark(alice, "field goal", at: 599_000)
        let expected = room.calibration
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20 {
            #expect(CalibrationSolver.solve(room.events.shuffled(using: &rng)) == expected)
        }
    }
}
