import Foundation
import Testing

@testable import HuddleCore

/// Steps in a node's lag (a rebuffer, a catch-up): the solver fits the node from its marks after
/// the step instead of averaging before and after.
@Suite(.offThePool) struct CalibrationStepTests {
    let reference = NodeID.fixture(1)
    let viewer = NodeID.fixture(2)
    let third = NodeID.fixture(3)

    /// Reaction noise: a normal sample with standard deviation `sigma`, in whole milliseconds.
    static func noise(_ sigma: Double, using rng: inout SplitMix64) -> TimeSpan {
        .milliseconds(Int64((sigma * rng.nextGaussian()).rounded()))
    }

    /// The reference and the viewer mark `moments` moments 20 s apart, each with reaction noise of
    /// `sigma`; the viewer's stream lags by `lag(i)` at moment i.
    func script(moments: Int, sigma: Double, seed: UInt64, lag: (Int) -> TimeSpan) -> CalibrationRoomScript {
        var rng = SplitMix64(seed: seed)
        var room = CalibrationRoomScript()
        room.join(reference)
        room.join(viewer)
        for i in 0..<moments {
            let moment = WallTime.milliseconds(sinceEpoch: Int64(i) * 20_000 + 100_000)
            room.mark(reference, "moment \(i)", at: moment + Self.noise(sigma, using: &rng))
            room.mark(viewer, "moment \(i)", at: moment + lag(i) + Self.noise(sigma, using: &rng))
        }
        return room
    }

    /// The reference and the viewer mark moments `moments` (20 s apart, as ``script``'s), the
    /// viewer `behind` later, without noise.
    func markMoments(_ moments: Range<Int>, behind: TimeSpan, in room: inout CalibrationRoomScript) {
        for i in moments {
            let moment = WallTime.milliseconds(sinceEpoch: Int64(i) * 20_000 + 100_000)
            room.mark(reference, "moment \(i)", at: moment)
            room.mark(viewer, "moment \(i)", at: moment + behind)
        }
    }

    /// The fit without step detection, as the solver did before steps.
    func plainOffset(_ events: [Event], of node: NodeID) -> TimeSpan? {
        let marks = CalibrationSolver.countedMarksAndNudges(in: events).marks
        return CalibrationSolver.components(of: marks).lazy.compactMap { CalibrationSolver.offsets(in: $0)[node] }.first
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func aThreeSecondStepAfterTheFourthMarkIsFittedFromTheMarksAfterIt(seed: UInt64) throws {
        // σ = 200 ms on both nodes; 5 s behind, then after the fourth mark 8 s behind.
        let room = script(moments: 10, sigma: 200, seed: seed) { $0 < 4 ? .seconds(5) : .seconds(8) }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1)
        #expect((placement.offset - .seconds(8)).magnitude <= .milliseconds(300), "offset \(placement.offset)")
        // The plain fit would have averaged the two lags.
        let plain = try #require(plainOffset(room.events, of: viewer))
        #expect((plain - .milliseconds(6_800)).magnitude <= .milliseconds(300), "plain \(plain)")
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func withoutAStepTheFitIsUnchanged(seed: UInt64) throws {
        let room = script(moments: 10, sigma: 200, seed: seed) { _ in .seconds(5) }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 0)
        #expect(placement.offset == plainOffset(room.events, of: viewer))
    }

    @Test func aCatchUpTowardLiveIsAStepTheOtherWay() throws {
        let room = script(moments: 8, sigma: 150, seed: 42) { $0 < 5 ? .seconds(30) : .seconds(12) }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1)
        #expect((placement.offset - .seconds(12)).magnitude <= .milliseconds(300))
    }

    @Test func stepsAreTheSameForEveryArrivalOrder() throws {
        var room = script(moments: 9, sigma: 200, seed: 7) { $0 < 3 ? .seconds(2) : ($0 < 6 ? .seconds(6) : .seconds(4)) }
        // A third viewer, steady, so the fit has more than two nodes.
        var rng = SplitMix64(seed: 99)
        for i in 0..<9 {
            room.mark(third, "moment \(i)", at: .milliseconds(sinceEpoch: Int64(i) * 20_000 + 100_000 + 1_000) + Self.noise(200, using: &rng))
        }
        let expected = room.calibration
        #expect(expected.placement(of: viewer)?.steps == 2)
        #expect(((expected.offset(of: viewer) ?? .zero) - .seconds(4)).magnitude <= .milliseconds(300))
        #expect(expected.placement(of: third)?.steps == 0)
        var shuffler = SplitMix64(seed: 2026)
        for _ in 0..<40 {
            #expect(CalibrationSolver.solve(room.events.shuffled(using: &shuffler)) == expected)
        }
    }

    @Test func aPauseNudgeIsNotCountedAgainWhenLaterMarksMeasureTheNewLag() throws {
        // Four marks 5 s behind; a 3 s pause (its nudge); four marks 8 s behind.
        var room = script(moments: 4, sigma: 0, seed: 1) { _ in .seconds(5) }
        #expect(room.calibration.offset(of: viewer) == .seconds(5))
        room.nudge(viewer, 3_000, at: .epoch + .seconds(170))  // after the fourth mark (165 000), before the fifth
        #expect(room.calibration.offset(of: viewer) == .seconds(8))
        markMoments(4..<8, behind: .seconds(8), in: &room)
        // The marks after the pause agree with those before it once the pause is taken off them:
        // no step, nothing set aside, and the pause is counted once.
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 0 && placement.offset == .seconds(8))
        #expect(room.calibration.suspects.isEmpty)
        // A nudge after them still counts.
        room.nudge(viewer, 1_000, at: .epoch + .seconds(300))
        #expect(room.calibration.offset(of: viewer) == .seconds(9))
    }

    @Test func aMarkRightAfterAPauseFitsAndIsNotSetAside() throws {
        // The couch's report: placed 3 s behind by two moments, a pause of 12.8 s, then a Now tapped
        // exactly at the new lag (15.8 s). It fits: nothing set aside, the offset is the new lag.
        var room = script(moments: 2, sigma: 0, seed: 1) { _ in .seconds(3) }
        room.nudge(viewer, 12_800, at: .epoch + .seconds(130))
        markMoments(2..<3, behind: .milliseconds(15_800), in: &room)
        let calibration = room.calibration
        #expect(calibration.suspects.isEmpty, "\(calibration.suspects)")
        #expect(calibration.offset(of: viewer) == .milliseconds(15_800))
        #expect(calibration.placement(of: viewer)?.steps == 0)
        // The moment before the pause keeps its lag: a message written then keeps its game moment.
        #expect(calibration.placement(of: viewer)?.offset(at: .epoch + .seconds(125)) == .seconds(3))
    }

    @Test func aPauseThatDidNotMoveTheStreamIsAStepBackOnceTwoMarksSayIt() throws {
        // A live stream that kept playing through /pause: the nudge says 10 s more, the marks
        // after it say the lag did not change. Two of them make a step back to the lag they show.
        var room = script(moments: 4, sigma: 0, seed: 1) { _ in .seconds(5) }
        room.nudge(viewer, 10_000, at: .epoch + .seconds(170))
        markMoments(4..<7, behind: .seconds(5), in: &room)
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1 && placement.offset == .seconds(5))
    }

    @Test func aTreeOfMarksNeverSteps() {
        // One shared moment each: the fit is exact, every residual is 0.
        var room = CalibrationRoomScript()
        room.mark(reference, "A", at: .epoch + .seconds(2))
        room.mark(viewer, "A", at: .epoch + .seconds(4))
        room.mark(third, "B", at: .epoch + .seconds(6))
        room.mark(viewer, "B", at: .epoch + .seconds(10))
        #expect(room.calibration.placements.values.allSatisfy { $0.steps == 0 })
        #expect(room.calibration.offset(of: third) == .seconds(-2))
    }

    @Test func peersAreToldInWordsOnce() throws {
        let alice = NodeIdentity.generate()
        let bob = NodeIdentity.generate()
        let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        var seq: UInt64 = 0
        func bobSays(_ body: EventBody, at: WallTime) -> [RoomOutput] {
            seq += 1
            return room.receive(bob.event(seq, body, at: at, for: room), now: at)
        }
        _ = bobSays(.join(nick: "bob"), at: base)
        var stepped: [RoomOutput] = []
        for i in 0..<8 {
            let moment = base + Int64(i) * .seconds(20)
            _ = try room.compose(.mark(label: "moment \(i)"), now: moment, signer: alice)
            let outputs = bobSays(.mark(label: "moment \(i)"), at: moment + (i < 4 ? .seconds(2) : .seconds(5)))
            stepped += outputs.filter { if case .lagStepped = $0 { true } else { false } }
        }
        #expect(stepped.count == 1)
        guard case .lagStepped(let member, let change, let offset, _) = try #require(stepped.first) else {
            Issue.record("expected a lag step, got \(stepped)")
            return
        }
        #expect(member.nick == "bob" && offset == .seconds(5))
        // Found at bob's fifth mark: the fit had drifted to 2.6 s, so the step moved it 2.4 s.
        #expect(change > .seconds(2) && change <= .seconds(3))
    }
}
