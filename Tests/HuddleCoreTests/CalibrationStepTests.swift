import Foundation
import Testing

@testable import HuddleCore

/// Steps in a node's lag (a rebuffer, a catch-up): the solver fits the node from its marks after
/// the step instead of averaging before and after.
@Suite struct CalibrationStepTests {
    let reference = NodeID.fixture(1)
    let viewer = NodeID.fixture(2)
    let third = NodeID.fixture(3)

    /// Reaction noise: a normal sample with standard deviation `sigma`, in whole milliseconds.
    static func noise(_ sigma: Double, using rng: inout SplitMix64) -> Int64 {
        Int64((sigma * rng.nextGaussian()).rounded())
    }

    /// The reference and the viewer mark `moments` moments 20 s apart, each with reaction noise of
    /// `sigma`; the viewer's stream lags by `lag(i)` at moment i.
    func script(moments: Int, sigma: Double, seed: UInt64, lag: (Int) -> Int64) -> CalibrationRoomScript {
        var rng = SplitMix64(seed: seed)
        var room = CalibrationRoomScript()
        room.join(reference)
        room.join(viewer)
        for i in 0..<moments {
            let moment = Int64(i) * 20_000 + 100_000
            room.mark(reference, "moment \(i)", at: moment + Self.noise(sigma, using: &rng))
            room.mark(viewer, "moment \(i)", at: moment + lag(i) + Self.noise(sigma, using: &rng))
        }
        return room
    }

    /// The fit without step detection, as the solver did before steps.
    func plainOffset(_ events: [Event], of node: NodeID) -> Int64? {
        let marks = CalibrationSolver.countedMarksAndNudges(in: events).marks
        return CalibrationSolver.components(of: marks).lazy.compactMap { CalibrationSolver.offsets(in: $0)[node] }.first
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func aThreeSecondStepAfterTheFourthMarkIsFittedFromTheMarksAfterIt(seed: UInt64) throws {
        // σ = 200 ms on both nodes; 5 s behind, then after the fourth mark 8 s behind.
        let room = script(moments: 10, sigma: 200, seed: seed) { $0 < 4 ? 5_000 : 8_000 }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1)
        #expect(abs(placement.offset - 8_000) <= 300, "offset \(placement.offset)")
        // The plain fit would have averaged the two lags.
        let plain = try #require(plainOffset(room.events, of: viewer))
        #expect(abs(plain - 6_800) <= 300, "plain \(plain)")
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func withoutAStepTheFitIsUnchanged(seed: UInt64) throws {
        let room = script(moments: 10, sigma: 200, seed: seed) { _ in 5_000 }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 0)
        #expect(placement.offset == plainOffset(room.events, of: viewer))
    }

    @Test func aCatchUpTowardLiveIsAStepTheOtherWay() throws {
        let room = script(moments: 8, sigma: 150, seed: 42) { $0 < 5 ? 30_000 : 12_000 }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1)
        #expect(abs(placement.offset - 12_000) <= 300)
    }

    @Test func stepsAreTheSameForEveryArrivalOrder() throws {
        var room = script(moments: 9, sigma: 200, seed: 7) { $0 < 3 ? 2_000 : ($0 < 6 ? 6_000 : 4_000) }
        // A third viewer, steady, so the fit has more than two nodes.
        var rng = SplitMix64(seed: 99)
        for i in 0..<9 {
            room.mark(third, "moment \(i)", at: Int64(i) * 20_000 + 100_000 + 1_000 + Self.noise(200, using: &rng))
        }
        let expected = room.calibration
        #expect(expected.placement(of: viewer)?.steps == 2)
        #expect(abs((expected.offset(of: viewer) ?? 0) - 4_000) <= 300)
        #expect(expected.placement(of: third)?.steps == 0)
        var shuffler = SplitMix64(seed: 2026)
        for _ in 0..<40 {
            #expect(CalibrationSolver.solve(room.events.shuffled(using: &shuffler)) == expected)
        }
    }

    @Test func aPauseNudgeIsNotCountedAgainWhenLaterMarksMeasureTheNewLag() throws {
        // Four marks 5 s behind; a 3 s pause (its nudge); four marks 8 s behind.
        var room = script(moments: 4, sigma: 0, seed: 1) { _ in 5_000 }
        #expect(room.calibration.offset(of: viewer) == 5_000)
        room.nudge(viewer, 3_000, at: 170_000)  // after the fourth mark (165 000), before the fifth
        #expect(room.calibration.offset(of: viewer) == 8_000)
        for i in 4..<8 {
            let moment = Int64(i) * 20_000 + 100_000
            room.mark(reference, "moment \(i)", at: moment)
            room.mark(viewer, "moment \(i)", at: moment + 8_000)
        }
        let placement = try #require(room.calibration.placement(of: viewer))
        #expect(placement.steps == 1 && placement.offset == 8_000)
        // A nudge after the step still counts.
        room.nudge(viewer, 1_000, at: 300_000)
        #expect(room.calibration.offset(of: viewer) == 9_000)
    }

    @Test func aTreeOfMarksNeverSteps() {
        // One shared moment each: the fit is exact, every residual is 0.
        var room = CalibrationRoomScript()
        room.mark(reference, "A", at: 2_000)
        room.mark(viewer, "A", at: 4_000)
        room.mark(third, "B", at: 6_000)
        room.mark(viewer, "B", at: 10_000)
        #expect(room.calibration.placements.values.allSatisfy { $0.steps == 0 })
        #expect(room.calibration.offset(of: third) == -2_000)
    }

    @Test func peersAreToldInWordsOnce() throws {
        let alice = NodeIdentity.generate()
        let bob = NodeIdentity.generate()
        let base: Int64 = 1_700_000_000_000
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        var seq: UInt64 = 0
        func bobSays(_ body: EventBody, at: Int64) -> [RoomOutput] {
            seq += 1
            return room.receive(bob.event(seq, body, at: at, for: room), now: at)
        }
        _ = bobSays(.join(nick: "bob"), at: base)
        var stepped: [RoomOutput] = []
        for i in 0..<8 {
            let moment = base + Int64(i) * 20_000
            _ = try room.compose(.mark(label: "moment \(i)"), now: moment, signer: alice)
            let outputs = bobSays(.mark(label: "moment \(i)"), at: moment + (i < 4 ? 2_000 : 5_000))
            stepped += outputs.filter { if case .lagStepped = $0 { true } else { false } }
        }
        #expect(stepped.count == 1)
        guard case .lagStepped(let member, let change, let offset, _) = try #require(stepped.first) else {
            Issue.record("expected a lag step, got \(stepped)")
            return
        }
        #expect(member.nick == "bob" && offset == 5_000)
        // Found at bob's fifth mark: the fit had drifted to 2.6 s, so the step moved it 2.4 s.
        #expect(change > 2_000 && change <= 3_000)
    }
}
